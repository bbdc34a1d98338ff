"""A flame graph, drawn by swk as one self-contained SVG (no flamegraph.pl needed).

Stacks (outermost first) with their sample counts become a tree (or a tree is given: the
merged stacks of swk bt --merge, counting threads); each node is a box as wide as its count,
its children above it, hovering shows the full name, the counts and the node's note
(<title>: which threads).  Colours come from the function's name, so a function keeps its
colour across graphs; boxes too narrow to label are drawn unlabelled, and those under a tenth
of a pixel are left out, as flamegraph.pl does.

hashlib and html are imported when a graph is drawn: `swk bt --core` imports this module
(swk bt --merge --svg) and does not pay for them otherwise.
"""

WIDTH = 1200
ROW = 16
PAD = 10
FONT = 12
MIN_WIDTH = 0.1
CHAR = 7.0          # an average glyph's width at FONT px


def _tree(stacks):
    """{tuple of names: count} as a tree of {"name", "count", "children": {name: node}}."""
    root = {"name": "all", "count": 0, "children": {}}
    for stack, n in stacks.items():
        root["count"] += n
        node = root
        for name in stack:
            child = node["children"].get(name)
            if child is None:
                child = node["children"][name] = {"name": name, "count": 0, "children": {}}
            child["count"] += n
            node = child
    return root


def _depth(node):
    return 1 + max((_depth(c) for c in node["children"].values()), default=0)


def _colour(name):
    import hashlib
    h = hashlib.md5(name.encode("utf-8", "replace")).digest()
    return f"rgb({205 + h[0] % 50},{80 + h[1] % 120},{h[2] % 60})"


def svg(stacks, title="Flame graph"):
    """The SVG text for ``stacks`` ({tuple of names: count})."""
    return svg_tree(_tree(stacks), title)


def svg_tree(root, title="Flame graph", unit="samples"):
    """The SVG text for a tree of {"name", "count", "children": {key: node}, "note" (optional:
    more words for its hover text)}; children are drawn in the order of their keys."""
    from html import escape
    total = max(root["count"], 1)
    depth = _depth(root)
    height = depth * ROW + 3 * PAD + FONT
    scale = (WIDTH - 2 * PAD) / total
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" font-family="monospace" font-size="{FONT}">',
           '<rect width="100%" height="100%" fill="#f8f8f8"/>',
           f'<text x="{WIDTH / 2}" y="{PAD + FONT}" text-anchor="middle" font-size="{FONT + 4}">'
           f'{escape(title)}</text>']

    def draw(node, x, level):
        w = node["count"] * scale
        if w < MIN_WIDTH:
            return
        y = height - PAD - (level + 1) * ROW
        pct = node["count"] * 100 / total
        label = escape(node["name"])
        note = f': {node["note"]}' if node.get("note") else ""
        out.append(f'<g><title>{label} ({node["count"]} {unit}, {pct:.2f}%){escape(note)}</title>'
                   f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{ROW - 1}" rx="2" '
                   f'fill="{_colour(node["name"]) if level else "rgb(230,230,230)"}"/>')
        fits = int((w - 4) // CHAR)
        if fits >= 3:
            text = node["name"] if len(node["name"]) <= fits else node["name"][:fits - 2] + ".."
            out.append(f'<text x="{x + 3:.2f}" y="{y + ROW - 4}">{escape(text)}</text>')
        out.append("</g>")
        cx = x
        for _key, child in sorted(node["children"].items()):
            draw(child, cx, level + 1)
            cx += child["count"] * scale

    draw(root, PAD, 0)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def write_svg(stacks, path, title="Flame graph"):
    with open(path, "w") as f:
        f.write(svg(stacks, title))
