"""LLDB back-end: `command script import lldb_init.py` calls install().

Registers swk-bt and swk-settings and, on LLDB 22 or newer, swk's frame
provider (provider.py) on every target: the targets that exist now directly,
the targets made later through a breakpoint on LLDB's dummy target whose
scripted resolver (provider.SwkTargetWatcher) never sets a location: LLDB
copies the dummy target's breakpoints into each new target, and making the
copy registers the provider before the target has a process.  The breakpoint
is named swk_frame_provider and takes breakpoint number 1 in each target
(deleting it later changes nothing: the provider is registered by then).
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
    _add_target_watcher(debugger)
    for i in range(debugger.GetNumTargets()):
        provider.ensure_provider(debugger.GetTargetAtIndex(i))
    return None


def _add_target_watcher(debugger):
    """The breakpoint on the dummy target that registers the provider on new targets."""
    import lldb
    from .provider import WATCHER_CLASS, WATCHER_NAME
    dummy = debugger.GetDummyTarget()
    name = lldb.SBBreakpointName(dummy, WATCHER_NAME)
    if not name.IsValid():
        return
    bp = dummy.BreakpointCreateFromScript(WATCHER_CLASS, lldb.SBStructuredData(),
                                          lldb.SBFileSpecList(), lldb.SBFileSpecList())
    if not bp.IsValid():
        return
    bp.AddName(WATCHER_NAME)
    name.SetHelpString("swk: registers swk's frame provider on each new target")
