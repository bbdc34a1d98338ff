"""Load swk into LLDB:  (lldb) command script import /path/to/lldb_init.py

Finds the project's virtual environment (.venv beside this file, or $SWK_VENV),
checks that it was made for LLDB's own Python (never sys.executable: inside
LLDB that is LLDB, or nothing useful), adds its site-packages, and registers
swk-bt, swk-settings and, on LLDB 22 or newer, swk's frame provider.
Anything missing is said in one line.
"""
import os
import sys


def _swk_setup():
    import glob
    import site

    here = os.path.dirname(os.path.abspath(__file__))
    venv = os.environ.get("SWK_VENV") or os.path.join(here, ".venv")
    want = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site_dirs = glob.glob(os.path.join(venv, "lib", "python3*", "site-packages"))
    if not site_dirs:
        return (f"swk: no virtual environment at {venv}: run ./scripts/setup.sh "
                f"(or set SWK_VENV to a venv made with LLDB's Python {sys.version.split()[0]})")
    matching = [d for d in site_dirs if os.path.basename(os.path.dirname(d)) == want]
    if not matching:
        have = ", ".join(os.path.basename(os.path.dirname(d)) for d in site_dirs)
        return (f"swk: the venv at {venv} is for {have}, but this debugger runs {want}: "
                f"recreate it with the debugger's own Python (./scripts/setup.sh)")
    site.addsitedir(matching[0])
    if here not in sys.path:
        sys.path.insert(0, here)
    missing = []
    for mod in ("elftools", "capstone"):
        try:
            __import__(mod)
        except ImportError:
            missing.append(mod)
    if missing:
        return f"swk: {', '.join(missing)} missing from {venv}: run ./scripts/setup.sh"
    return None


def __lldb_init_module(debugger, internal_dict):
    try:
        problem = _swk_setup()
        if problem is None:
            from swk_plugin.backends.lldb import install
            problem = install(debugger, internal_dict)
    except Exception as exc:  # never a traceback while loading
        problem = f"swk: could not load into LLDB: {exc.__class__.__name__}: {exc}"
    if problem:
        print(problem)
