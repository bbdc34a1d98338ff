"""Errors swk reports as one clear line (never a traceback in the debugger)."""


class SwkError(Exception):
    """Base class: str(err) is the one line shown to the user."""


class MemoryReadError(SwkError):
    def __init__(self, addr, size=None, why=None):
        self.addr = addr
        self.size = size
        msg = f"cannot read memory at 0x{addr:x}"
        if why:
            msg += f" ({why})"
        super().__init__(msg)


def read_exact(read_mem, addr, size):
    """``size`` bytes from a caller's ``read_mem(addr, size)`` hook: its own SwkError as raised,
    any other failure or a short read a MemoryReadError (a user's accessor may fail anyhow)."""
    try:
        data = read_mem(addr, size)
    except SwkError:
        raise
    except Exception as exc:
        raise MemoryReadError(addr, size, str(exc) or type(exc).__name__) from None
    if data is None or len(data) < size:
        raise MemoryReadError(addr, size, "short read")
    return data[:size]


class RegisterError(SwkError):
    pass


class NoProcessError(SwkError):
    pass


class BadFileError(SwkError):
    """A file (ELF, core, debug info) that could not be read or is malformed."""


class RuleError(SwkError):
    """An unwind rule that cannot be applied to a frame (its CFA register unknown, an
    expression that fails)."""


class ThreadStateError(RegisterError):
    """A thread with no stack to walk now: it is running (non-stop mode, `continue &`)
    or it has exited since the debugger listed it.  ``state`` says which, for
    swk-bt -all's line ("is running", "has exited")."""

    def __init__(self, message, state):
        super().__init__(message)
        self.state = state
