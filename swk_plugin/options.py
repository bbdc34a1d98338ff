"""swk-bt's options, parsed the same way in GDB, LLDB and on the command line.

GDB's settings that change bt's lines (``set print entry-values`` ...) are options too:
``-NAME=VALUE`` in swk-bt (GDB's own values are the defaults there, read at each command),
``--NAME VALUE`` on the command line; SETTINGS names them.
"""
from .errors import SwkError
from .locals.format import DEFAULT_FORMAT

USAGE = ("usage: swk-bt [-json] [-all] [-unique] [-merge[=line]] [-svg=FILE] [-compare] [-v] [-regs] [-full] [-py [only]] "
         "[-frame-arguments=MODE] "
         "[-entry-values=MODE] [-SETTING=VALUE ...] [N | -N]")

#: GDB's `set print frame-arguments` values: which argument values a frame line prints.
FRAME_ARGUMENTS = ("all", "scalars", "none", "presence")
#: GDB's `set print entry-values` values: how a parameter's value at entry is shown.
ENTRY_VALUES = ("no", "only", "preferred", "if-needed", "both", "compact", "default")
#: GDB's `print frame-info` values.
FRAME_INFO = ("auto", "source-line", "location", "source-and-location", "location-and-address", "short-location")
#: Those that print a frame's source line (GDB's SRC_LINE, SRC_AND_LOC).
SOURCE_INFO = ("source-line", "source-and-location")
ON_OFF = ("on", "off")
#: GDB's `set filename-display` values: a frame's file as the line table names it, its base
#: name, or its full path (where it was found, else the compilation directory joined to it).
FILENAME_DISPLAY = ("relative", "basename", "absolute")
#: ``verbose`` at this level (swk-bt -regs): -v's lines and, after each physical frame, how its
#: caller's registers were found (format.register_lines).
REGS = 2
#: -py only: a thread's Python frames alone (BtOptions.py).
PY_ONLY = "only"
#: What a node of merged stacks is (-merge=BY): a function, or a function at a line.
MERGE_BY = ("function", "line")


def _count(what, text):
    """A positive count, or None for "unlimited" / 0 (GDB's spelling of no limit)."""
    if text in ("unlimited", "0"):
        return None
    try:
        n = int(text, 0)
    except ValueError:
        n = -1
    if n <= 0:
        raise SwkError(f"swk-bt: {what} must be a positive number or unlimited, not {text!r}")
    return n


#: option name -> (GDB's setting, what it sets: a BtOptions attribute or a ValueFormat field
#: "values.FIELD", the allowed values or a parser)
SETTINGS = {
    "frame-arguments": ("print frame-arguments", "frame_arguments", FRAME_ARGUMENTS),
    "entry-values": ("print entry-values", "entry_values", ENTRY_VALUES),
    "frame-info": ("print frame-info", "frame_info", FRAME_INFO),
    "backtrace-limit": ("backtrace limit", "backtrace_limit", _count),
    "print-address": ("print address", "values.address", ON_OFF),
    "print-symbol": ("print symbol", "values.symbol", ON_OFF),
    "print-elements": ("print elements", "values.elements", _count),
    "print-repeats": ("print repeats", "values.repeats", _count),
    "output-radix": ("output-radix", "values.radix", ("8", "10", "16")),
    "collapse": ("swk collapse", "collapse", _count),
    "filename-display": ("filename-display", "filename_display", FILENAME_DISPLAY),
}


class BtOptions:
    __slots__ = ("json", "all", "compare", "verbose", "limit", "full", "frame_arguments", "entry_values",
                 "frame_info", "backtrace_limit", "values", "gdb", "unique", "collapse", "merge", "svg", "regs",
                 "sources", "filename_display", "py")

    def __init__(self):
        self.json = self.all = self.compare = self.verbose = self.full = False
        #: -regs: -v, and after each frame how its caller's registers were found (verbose is REGS)
        self.regs = False
        #: in LLDB: GDB's bt lines rather than LLDB's frame-format
        self.gdb = False
        #: threads with the same stack printed once, as one group (implies every thread)
        self.unique = False
        #: every thread's stack merged into one call-prefix tree (STAT's), its nodes functions
        #: ("function") or lines ("line"); None: not merged
        self.merge = None
        #: where -merge also draws its tree as an SVG picture (None: nowhere)
        self.svg = None
        self.limit = None
        #: GDB's defaults; inside GDB its own settings are read at each command
        self.frame_arguments = "scalars"
        self.entry_values = "default"
        self.frame_info = "auto"
        self.filename_display = "relative"
        #: where frame-info prints source lines: the session's sourcelines.SourceLister (GDB's
        #: state of which file it printed last), None for a new one per command
        self.sources = None
        #: GDB's `backtrace limit` (None: unlimited)
        self.backtrace_limit = None
        #: a run of more frames than this of one function at one return address is printed
        #: as its first frame and a line for the others (None: every frame, as GDB prints)
        self.collapse = 10_000
        #: a locals.format.ValueFormat (`print address`, `symbol`, `elements`, `repeats`,
        #: `output-radix`), None for GDB's defaults
        self.values = None
        #: the Python frames of each thread among its native ones (pyframes.py); PY_ONLY: them alone
        self.py = False

    def set(self, name, text):
        """Option ``name`` (a SETTINGS key) from its text; SwkError with one line if bad."""
        _gdb, target, allowed = SETTINGS[name]
        if callable(allowed):
            value = allowed(name, text)
        elif text not in allowed:
            raise SwkError(f"swk-bt: {name} must be one of {', '.join(allowed)}, not {text!r}")
        else:
            value = text == "on" if allowed is ON_OFF else int(text) if name == "output-radix" else text
        if target.startswith("values."):
            values = (self.values or DEFAULT_FORMAT)._replace(**{target[7:]: value})
            self.values = None if values == DEFAULT_FORMAT else values
        else:
            setattr(self, target, value)


def parse_bt_args(argv, allow_full=False, defaults=None, allow_gdb=False):
    """Parse swk-bt's arguments; raise SwkError with one line on anything unknown.
    ``defaults``: BtOptions attributes before the arguments (a debugger's own settings);
    ``allow_gdb``: -gdb chooses GDB's lines (LLDB, whose own format is the default)."""
    opts = BtOptions()
    for key, value in (defaults or {}).items():
        setattr(opts, key, value)
    flags = {"-json": "json", "--json": "json", "-all": "all", "--all": "all",
             "-compare": "compare", "--compare": "compare", "-v": "verbose", "-verbose": "verbose",
             "--verbose": "verbose", "-unique": "unique", "--unique": "unique", "-regs": "regs", "--regs": "regs",
             "-py": "py", "--py": "py"}
    if allow_full:
        flags.update({"-full": "full", "--full": "full"})
    if allow_gdb:
        flags.update({"-gdb": "gdb", "--gdb": "gdb"})
    previous = None
    for arg in argv:
        after, previous = previous, arg
        if arg in ("-py=only", "--py=only") or (arg == PY_ONLY and after in ("-py", "--py")):
            opts.py = PY_ONLY
            continue
        if arg in flags:
            setattr(opts, flags[arg], True)
            continue
        key, eq, value = arg.lstrip("-").partition("=")
        if arg in ("-merge", "--merge") or (eq and arg.startswith("-") and key == "merge"):
            if eq and value not in MERGE_BY:
                raise SwkError(f"swk-bt: merge must be one of {', '.join(MERGE_BY)}, not {value!r}")
            opts.merge = value if eq else "function"
            continue
        if eq and arg.startswith("-") and key == "svg":
            if not value:
                raise SwkError("swk-bt: -svg needs a file name: -svg=FILE")
            opts.svg = value
            continue
        if eq and arg.startswith("-") and key in SETTINGS:
            opts.set(key, value)
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
    if opts.unique and opts.compare:
        raise SwkError("swk-bt: -compare and -unique cannot be combined")
    check_merge(opts, "swk-bt: ", "-")
    check_py(opts, "swk-bt: ", "-")
    if opts.unique or opts.merge:
        opts.all = True
    if opts.regs:
        opts.verbose = REGS
    return opts


def check_merge(opts, who, dash):
    """One line for what cannot go with merged stacks (``dash``: "-" in swk-bt, "--" on the
    command line)."""
    if opts.svg is not None and not opts.merge:
        raise SwkError(f"{who}{dash}svg draws merged stacks: give {dash}merge too")
    if not opts.merge:
        return
    for name, on in (("unique", opts.unique), ("compare", opts.compare), ("full", opts.full)):
        if on:
            raise SwkError(f"{who}{dash}merge and {dash}{name} cannot be combined")
    if opts.limit is not None:
        raise SwkError(f"{who}{dash}merge merges whole stacks: a frame count cannot be given")


def check_py(opts, who, dash):
    """One line for what Python frames (-py) do not go with: -py only has no native frames
    to hold against the debugger's (-compare)."""
    if opts.py == PY_ONLY and opts.compare:
        raise SwkError(f"{who}{dash}py only and {dash}compare cannot be combined")
