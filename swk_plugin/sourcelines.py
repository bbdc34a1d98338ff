"""Source lines in backtraces, as GDB prints them under `set print frame-info source-line` and
`source-and-location`.

GDB finds a CU's file the way its `directory` search path says (``$cdir:$cwd`` by default: the
CU's compilation directory, then GDB's own working directory; the file's name as recorded, then
its base name in each), prints ``LINE<TAB>TEXT`` (control characters as ``^X``), and when the
file cannot be opened says so once — ``LINE<TAB>FILE: No such file or directory.`` — and then
``LINE<TAB>in FILE`` for as long as the files it is asked for stay that same one (GDB's
``last_source_visited``, one per session: a SourceLister is that state).
"""
import errno
import os


class SourceLister:
    """GDB's source-printing state and search path (``dirs``: GDB's `show directories`
    value, ``$cdir`` and ``$cwd`` standing for the CU's and GDB's directories)."""

    def __init__(self, dirs="$cdir:$cwd", cwd=None):
        self.dirs = [d for d in dirs.split(os.pathsep) if d] if dirs else ["$cdir", "$cwd"]
        self.cwd = cwd if cwd is not None else os.getcwd()
        self.visited = None          # the symtab (key) last printed from, GDB's last_source_visited
        self.error = False           # whether it failed to open, GDB's last_source_error
        #: (file, compilation directory) GDB printed a line of last, before this command: the
        #: first walk printed notes it as visited where its innermost frame's file is that one
        self.primer = None
        self._files = {}             # path -> its lines (bytes) or an errno
        self._found = {}             # (name, comp_dir) -> the path its lines came from

    # --- finding and reading a file -------------------------------------------------------
    def _candidates(self, name, comp_dir):
        """Where GDB's find_and_open_source looks for ``name``, in its order."""
        dirs = [comp_dir if d == "$cdir" else self.cwd if d == "$cwd" else d for d in self.dirs]
        dirs = [d for d in dirs if d]
        if os.path.isabs(name):
            yield name
        else:
            for d in dirs:
                yield os.path.join(d, name)
        base = os.path.basename(name)
        if base != name:
            for d in dirs:
                yield os.path.join(d, base)

    def _lines(self, name, comp_dir):
        """The file's lines, or the errno of the last place tried."""
        err = errno.ENOENT
        for path in self._candidates(name, comp_dir):
            self._found[(name, comp_dir)] = path
            got = self._files.get(path)
            if got is None:
                try:
                    with open(path, "rb") as f:
                        got = f.read().splitlines(keepends=True)
                except OSError as exc:
                    got = exc.errno or errno.ENOENT
                self._files[path] = got
            if not isinstance(got, int):
                return got
            err = got
        return err

    def fullname(self, name, comp_dir):
        """GDB's symtab_to_fullname: the real path of the file where it is found, else the
        compilation directory joined to its name (the name itself where it is absolute)."""
        lines = self._lines(name, comp_dir)
        if not isinstance(lines, int):
            return os.path.realpath(self._found[(name, comp_dir)])
        if os.path.isabs(name) or not comp_dir:
            return name
        return f"{comp_dir}/{name}"

    # --- what GDB prints -------------------------------------------------------------------
    def visit(self, key, name, comp_dir):
        """Note ``key``'s file as the last one visited, printing nothing (GDB printed it at the
        stop, or in an earlier command)."""
        if key != self.visited:
            self.visited = key
            self.error = isinstance(self._lines(name, comp_dir), int)

    def line(self, key, name, comp_dir, line, shown=None):
        """The text GDB prints for ``line`` of ``name`` (of the symtab ``key``), one line
        (``shown``: the name as `filename-display` shows it, default ``name``)."""
        shown = shown or name
        if key == self.visited and self.error:
            return f"{line}\tin {shown}"
        lines = self._lines(name, comp_dir)
        if key != self.visited:
            self.visited, self.error = key, isinstance(lines, int)
            if self.error:
                return f"{line}\t{shown}: {os.strerror(lines)}."
        if isinstance(lines, int):
            return f"{line}\tin {shown}"
        if not 0 < line <= len(lines):
            return f"Line number {line} out of range; {shown} has {len(lines)} lines."
        return f"{line}\t{_visible(lines[line - 1])}"


def _visible(raw):
    """One source line as GDB's print_source_lines_base shows it: control characters other
    than tab as ``^X``, DEL as ``^?``, a CR or CRLF ending the line."""
    text = raw.rstrip(b"\n")
    if text.endswith(b"\r"):
        text = text[:-1]
    text = text.split(b"\r", 1)[0]
    out = []
    for ch in text.decode("utf-8", "replace"):
        o = ord(ch)
        if o < 0o40 and ch != "\t" and ch != "\033":
            out.append("^" + chr(o + 0o100))
        elif o == 0o177:
            out.append("^?")
        else:
            out.append(ch)
    return "".join(out)
