"""Finding swk's virtual environment from inside a debugger (stdlib only: this runs
before the venv's packages are importable).

Debuggers embed their own Python (GDB and LLDB here: Debian's 3.11), so the venv
must be made with that interpreter; sys.executable is no guide inside LLDB.
"""
import glob
import os
import site
import sys

NEEDED = ("elftools", "capstone")


def activate(project_dir, debugger):
    """Add the venv's site-packages (``$SWK_VENV`` or ``.venv`` in the project) to
    sys.path.  Returns None, or the one line that says what is missing."""
    venv = os.environ.get("SWK_VENV") or os.path.join(project_dir, ".venv")
    want = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site_dirs = glob.glob(os.path.join(venv, "lib", "python3*", "site-packages"))
    if not site_dirs:
        return (f"swk: no virtual environment at {venv}: run ./scripts/setup.sh "
                f"(or set SWK_VENV to a venv made with {debugger}'s Python {sys.version.split()[0]})")
    matching = [d for d in site_dirs if os.path.basename(os.path.dirname(d)) == want]
    if not matching:
        have = ", ".join(os.path.basename(os.path.dirname(d)) for d in site_dirs)
        return (f"swk: the venv at {venv} is for {have}, but this debugger runs {want}: "
                f"recreate it with the debugger's own Python (./scripts/setup.sh)")
    site.addsitedir(matching[0])
    import importlib.util
    missing = []
    for mod in NEEDED:   # found, not imported: capstone costs tens of ms and is needed late
        try:
            if importlib.util.find_spec(mod) is None:
                missing.append(mod)
        except (ImportError, ValueError):
            missing.append(mod)
    if missing:
        return f"swk: {', '.join(missing)} missing from {venv}: run ./scripts/setup.sh"
    return None
