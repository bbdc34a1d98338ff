"""swk-bt's options, parsed the same way in GDB, LLDB and on the command line."""
from .errors import SwkError

USAGE = "usage: swk-bt [-json] [-all] [-compare] [-v] [-full] [N | -N]"


class BtOptions:
    __slots__ = ("json", "all", "compare", "verbose", "limit", "full")

    def __init__(self):
        self.json = self.all = self.compare = self.verbose = self.full = False
        self.limit = None


def parse_bt_args(argv, allow_full=False):
    """Parse swk-bt's arguments; raise SwkError with one line on anything unknown."""
    opts = BtOptions()
    flags = {"-json": "json", "--json": "json", "-all": "all", "--all": "all",
             "-compare": "compare", "--compare": "compare", "-v": "verbose", "-verbose": "verbose",
             "--verbose": "verbose"}
    if allow_full:
        flags.update({"-full": "full", "--full": "full"})
    for arg in argv:
        if arg in flags:
            setattr(opts, flags[arg], True)
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
