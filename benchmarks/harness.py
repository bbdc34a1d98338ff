"""What benchmarks/deep_stacks.py and benchmarks/threads.py share: running one tool as a fresh
process with its wall time and its own peak RSS, and saying which swk was measured."""
import os
import signal
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUILD = REPO / "benchmarks" / "_build"
SWK = REPO / ".venv" / "bin" / "swk"   # the command users run (made by scripts/setup.sh)
#: The CLI runs this checkout's swk_plugin even when the venv was made by another one, with its
#: compiled modules written and reused as a user's are (PYTHONDONTWRITEBYTECODE, set in some
#: environments, would have every run compile all of swk: 0.17 s).
SWK_ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
           "PYTHONPATH": os.pathsep.join(
               [str(REPO), *([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])])}
TIME = os.access("/usr/bin/time", os.X_OK)   # GNU time, for each child's own peak RSS


def code_version():
    """Which swk was measured: the commit, and whether swk_plugin/ differs from it."""
    try:
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "diff", "--quiet", "HEAD", "--", "swk_plugin"]).returncode
        return head + (" with uncommitted changes to swk_plugin/" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "not a git checkout"


def measure(argv, out, env=None, timeout=3600):
    """Run argv as a fresh process, its output to the file out: (wall s, peak RSS MiB, text).
    The peak is GNU time's (%M) where /usr/bin/time is: a child's own wait4 figure would start
    from this script's size (a forked child inherits its parent's high-water mark)."""
    rss_file = Path(str(out) + ".rss")
    wrap = ["/usr/bin/time", "-f", "%M", "-o", str(rss_file)] if TIME else []
    with open(out, "w") as f:
        t = time.perf_counter()
        p = subprocess.Popen([*wrap, *argv], stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             env=env, cwd=REPO, start_new_session=True)
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - t > timeout:
                os.killpg(p.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(p.pid, 0)
                break
            time.sleep(0.002)
        took = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    text = Path(out).read_text(errors="replace")
    if p.returncode != 0:
        raise SystemExit(f"benchmark: {' '.join(map(str, argv))} exited {p.returncode}: {text[-800:]}")
    peak = usage.ru_maxrss
    if TIME:
        peak = int(rss_file.read_text().split()[-1])
        rss_file.unlink()
    return took, peak / 1024, text
