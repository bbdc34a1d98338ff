"""Finding swk's virtual environment from inside a debugger (stdlib only: this runs
before the venv's packages are importable).

Debuggers embed their own Python (GDB and LLDB here: Debian's 3.11), so the venv
must be made with that interpreter; sys.executable is no guide inside LLDB.
"""
import os
import site
import sys

NEEDED = ("elftools", "capstone")


def activate(project_dir, debugger):
    """Add the venv's site-packages (``$SWK_VENV`` or ``.venv`` in the project) to
    sys.path.  Returns None, or the one line that says what is missing."""
    venv = os.environ.get("SWK_VENV") or os.path.join(project_dir, ".venv")
    want = f"python{sys.version_info.major}.{sys.version_info.minor}"
    lib = os.path.join(venv, "lib")
    try:        # os.listdir, not glob: this runs at every debugger's start
        versions = sorted(d for d in os.listdir(lib) if d.startswith("python3")
                          and os.path.isdir(os.path.join(lib, d, "site-packages")))
    except OSError:
        versions = []
    if not versions:
        return (f"swk: no virtual environment at {venv}: run ./scripts/setup.sh "
                f"(or set SWK_VENV to a venv made with {debugger}'s Python {sys.version.split()[0]})")
    if want not in versions:
        return (f"swk: the venv at {venv} is for {', '.join(versions)}, but this debugger runs {want}: "
                f"recreate it with the debugger's own Python (./scripts/setup.sh)")
    site_dir = os.path.join(lib, want, "site-packages")
    site.addsitedir(site_dir)
    # found, not imported (capstone costs tens of ms and is needed late): a package's folder
    # in the venv, else whatever the path holds
    missing = [mod for mod in NEEDED if not os.path.isfile(os.path.join(site_dir, mod, "__init__.py"))
               and not _importable(mod)]
    if missing:
        return f"swk: {', '.join(missing)} missing from {venv}: run ./scripts/setup.sh"
    return None


def _importable(mod):
    import importlib.util
    try:
        return importlib.util.find_spec(mod) is not None
    except (ImportError, ValueError):
        return False
