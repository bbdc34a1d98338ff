"""What the Python corpus programs (py_frames, py_crash, py_threads, py_pool) share: their own
record of every thread's stack, read from sys._current_frames() as a traceback reads it — the
oracle tests/test_python_*.py hold swk's Python frames to.  Imported from the program's own
directory (a script's directory is first on sys.path), under each interpreter tested."""
import sys
import threading


def qualname(code):
    return getattr(code, "co_qualname", code.co_name)      # 3.10 has no co_qualname


def stacks(skip, extra=None):
    """{native thread id: [[qualname, filename, line(, extra(frame))], ...] innermost first} of
    every thread, the frames of the code objects in ``skip`` (the recorder's) left out."""
    natives = {t.ident: t.native_id for t in threading.enumerate()}
    out = {}
    for ident, frame in sys._current_frames().items():
        rows = []
        while frame is not None:
            if frame.f_code not in skip:
                row = [qualname(frame.f_code), frame.f_code.co_filename, frame.f_lineno]
                if extra is not None:
                    row.append(extra(frame))
                rows.append(row)
            frame = frame.f_back
        out[str(natives.get(ident, ident))] = rows
    return out
