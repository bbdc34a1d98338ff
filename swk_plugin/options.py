"""swk-bt's options, parsed the same way in GDB, LLDB and on the command line."""
from .errors import SwkError

USAGE = ("usage: swk-bt [-json] [-all] [-compare] [-v] [-full] [-frame-arguments=MODE] "
         "[-entry-values=MODE] [N | -N]")

#: GDB's `set print frame-arguments` values: which argument values a frame line prints.
FRAME_ARGUMENTS = ("all", "scalars", "none", "presence")
#: GDB's `set print entry-values` values: how a parameter's value at entry is shown.
ENTRY_VALUES = ("no", "only", "preferred", "if-needed", "both", "compact", "default")


class BtOptions:
    __slots__ = ("json", "all", "compare", "verbose", "limit", "full", "frame_arguments", "entry_values")

    def __init__(self):
        self.json = self.all = self.compare = self.verbose = self.full = False
        self.limit = None
        #: GDB's defaults; inside GDB its own settings are read at each command
        self.frame_arguments = "scalars"
        self.entry_values = "default"


def check_choice(what, value, choices):
    """``value`` if it is one of ``choices``, else SwkError naming them."""
    if value not in choices:
        raise SwkError(f"swk-bt: {what} must be one of {', '.join(choices)}, not {value!r}")
    return value


def parse_bt_args(argv, allow_full=False, defaults=None):
    """Parse swk-bt's arguments; raise SwkError with one line on anything unknown.
    ``defaults``: option values before the arguments (a debugger's own settings)."""
    opts = BtOptions()
    for key, value in (defaults or {}).items():
        choices = FRAME_ARGUMENTS if key == "frame_arguments" else ENTRY_VALUES
        if value in choices:
            setattr(opts, key, value)
    flags = {"-json": "json", "--json": "json", "-all": "all", "--all": "all",
             "-compare": "compare", "--compare": "compare", "-v": "verbose", "-verbose": "verbose",
             "--verbose": "verbose"}
    if allow_full:
        flags.update({"-full": "full", "--full": "full"})
    for arg in argv:
        if arg in flags:
            setattr(opts, flags[arg], True)
            continue
        key, eq, value = arg.lstrip("-").partition("=")
        if eq and arg.startswith("-") and key in ("frame-arguments", "entry-values"):
            choices = FRAME_ARGUMENTS if key == "frame-arguments" else ENTRY_VALUES
            setattr(opts, key.replace("-", "_"), check_choice(key, value, choices))
            continue
        try:
            n = int(arg, 0)
        except ValueError:
            raise SwkError(f"swk-bt: unknown option {arg!r}; {USAGE}") from None
        if opts.limit is not None:
            raise SwkError(f"swk-bt: only one frame count may be given; {USAGE}")
        if n == 0:
            raise SwkError(f"swk-bt: a frame count must not be zero; {USAGE}")
        opts.limit = n
    if opts.json and opts.compare:
        raise SwkError("swk-bt: -compare and -json cannot be combined")
    return opts
