"""LLDB's format strings (``frame-format``, ``thread-stop-format``): the text of swk-bt in LLDB.

LLDB's users read its own frame lines (``frame #3: 0x... demo`leaf(n=42) at demo.c:13:52``), so
swk-bt there prints its frames in the debugger's own ``frame-format``.  The language, as LLDB's
FormatEntity parses it: literal text; ``${name}`` a variable; ``{...}`` a scope, printed only if
every variable in it resolved (an optional part: ``{ at ${line.file.basename}:${line.number}}``);
backslash escapes (``\\n``, ``\\t``, ``\\``` and the like).  ``render`` takes a resolver: name ->
text, or None where the variable does not apply (which drops the innermost enclosing scope).
Nothing here knows LLDB's API: the LLDB back-end reads the setting and resolves what LLDB knows.
"""


class FormatError(ValueError):
    pass


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "e": "\x1b",
            "0": "\0"}


def parse(text):
    """The nodes of a format string: str (literal), ("var", name), ("scope", [nodes])."""
    nodes, pos = _parse(text, 0, top=True)
    return nodes


def _parse(text, pos, top):
    out, lit = [], []
    n = len(text)
    while pos < n:
        c = text[pos]
        if c == "\\" and pos + 1 < n:
            e = text[pos + 1]
            lit.append(_ESCAPES.get(e, e))
            pos += 2
        elif c == "$" and text.startswith("${", pos):
            end = text.find("}", pos + 2)
            if end < 0:
                raise FormatError("unterminated ${")
            if lit:
                out.append("".join(lit))
                lit = []
            out.append(("var", text[pos + 2:end]))
            pos = end + 1
        elif c == "{":
            if lit:
                out.append("".join(lit))
                lit = []
            inner, pos = _parse(text, pos + 1, top=False)
            out.append(("scope", inner))
        elif c == "}":
            if top:
                raise FormatError("unbalanced }")
            if lit:
                out.append("".join(lit))
            return out, pos + 1
        else:
            lit.append(c)
            pos += 1
    if not top:
        raise FormatError("unterminated {")
    if lit:
        out.append("".join(lit))
    return out, pos


def render(nodes, resolve):
    """The text of ``nodes`` with ``resolve`` (name -> str or None); a variable that does not
    resolve drops its scope (at the top level it prints nothing)."""
    text = _render(nodes, resolve, top=True)
    return text if text is not None else ""


def _render(nodes, resolve, top):
    out = []
    for node in nodes:
        if isinstance(node, str):
            out.append(node)
        elif node[0] == "var":
            v = resolve(node[1])
            if v is None:
                if top:
                    continue
                return None
            out.append(v)
        else:
            v = _render(node[1], resolve, top=False)
            if v is not None:
                out.append(v)
    return "".join(out)


def setting_text(value):
    """A format setting's value as LLDB's ``settings show`` gives it ("..." quoted) unquoted."""
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    return value


#: LLDB's default frame-format (LLDB 16's; 22 adds ${frame.kind} and [inlined]), used where the
#: setting cannot be read
DEFAULT_FRAME_FORMAT = ("frame #${frame.index}: {${ansi.fg.cyan}${frame.pc}${ansi.normal} }"
                        "{${module.file.basename}{\\`}}{${function.name-with-args}{${frame.no-debug}"
                        "${function.pc-offset}}}{ at ${ansi.fg.cyan}${line.file.basename}${ansi.normal}:"
                        "${ansi.fg.yellow}${line.number}${ansi.normal}{:${ansi.fg.yellow}${line.column}"
                        "${ansi.normal}}}{${function.is-optimized} [opt]}{${frame.is-artificial} [artificial]}\\n")


__all__ = ["FormatError", "parse", "render", "setting_text", "DEFAULT_FRAME_FORMAT"]
