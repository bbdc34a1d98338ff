"""LLDB back-end: `command script import lldb_init.py` calls install().

Registers swk-bt and swk-settings and, on LLDB 22 or newer, swk's frame
provider (provider.py) on every target: the targets that exist now directly,
the targets made later through a stop hook added to LLDB's dummy target (LLDB
copies the dummy target's stop hooks into each new target), which registers
the provider at the target's first stop — a launch, an attach or a core load.
"""
import re
import sys

_installed = set()   # debugger ids


def lldb_version(lldb_module=None):
    """(major, minor, patch) of the running LLDB, (0, 0, 0) if unknown."""
    import lldb
    m = re.search(r"(\d+)\.(\d+)\.(\d+)", lldb.SBDebugger.GetVersionString() or "")
    return tuple(int(x) for x in m.groups()) if m else (0, 0, 0)


def install(debugger, internal_dict):
    """Returns a note for the user (one line) or None."""
    from . import commands, procstate, provider, session  # noqa: F401  (attributes of swk_lldb)
    internal_dict["swk_lldb"] = sys.modules[__name__]
    key = debugger.GetID()
    if key in _installed:
        return None
    _installed.add(key)
    run = debugger.HandleCommand
    run("command script add -c swk_lldb.commands.SwkBtCommand swk-bt")
    run("command script add -c swk_lldb.commands.SwkSettingsCommand swk-settings")
    if not provider.HAVE_PROVIDERS:
        v = ".".join(map(str, lldb_version()))
        return (f"swk: LLDB {v} has no frame providers: swk-bt works, but LLDB's own bt stays "
                "LLDB's alone (LLDB 22 or newer shows swk's frames in bt)")
    _add_stop_hooks(debugger)
    for i in range(debugger.GetNumTargets()):
        provider.ensure_provider(debugger.GetTargetAtIndex(i))
    return None


def _add_stop_hooks(debugger):
    """The stop hook on the dummy target (copied into every new target) and on every
    existing target."""
    from .provider import STOP_HOOK_CLASS
    import lldb
    interp = debugger.GetCommandInterpreter()
    selected = debugger.GetSelectedTarget()
    targets = [debugger.GetTargetAtIndex(i) for i in range(debugger.GetNumTargets())]
    res = lldb.SBCommandReturnObject()
    # With no target selected, `target stop-hook add` goes to the dummy target.
    if not targets:
        interp.HandleCommand(f"target stop-hook add -P {STOP_HOOK_CLASS}", res)
    else:
        dummy = debugger.GetDummyTarget()
        for t in [dummy, *targets]:
            debugger.SetSelectedTarget(t)
            interp.HandleCommand(f"target stop-hook add -P {STOP_HOOK_CLASS}", res)
        if selected.IsValid():
            debugger.SetSelectedTarget(selected)
