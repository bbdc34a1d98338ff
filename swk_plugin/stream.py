"""Walks printed as they are found, in memory flat in their depth (issue 25).

A walk of up to SEGMENT frames is printed whole, as it always was.  A deeper one goes out in
segments of SEGMENT frames, each printed and then dropped: a segment is a StackWalk of its
frames, the frame before them (index 0: the tail-call frames between the two and the
registers inherited from inner frames start there; its register view is carried over from
the segment before, locals.frames.register_view) and LOOKAHEAD frames after them (a frame's
entry values come from its caller's call site, which may pass on the caller's own entry value,
DW_OP_entry_value, and so on outward).  Line numbers run on across segments.

Text collapses recursion: a run of more than ``collapse`` frames of one function at one
return address (a physical frame with its inlined calls, or a tail-call frame) is printed as
its first frame and ``[… N more frames of rec () at so.c:4 …]``, N counting the levels left
out, so that the frames after it keep GDB's numbers.  JSON is never collapsed.
"""
import gc
from collections import deque
from itertools import islice

from .display import INLINE, shown_frames, variables
from .format import frame_info, level_lines, register_provenance, text_context, text_style, trailer_lines
from .frame import FrameKind
from .locals.frames import level_of, register_view
from .symlookup import is_main_frame
from .walker import StackWalk

#: Frames printed per segment; a walk this deep or less is printed whole.
SEGMENT = 4096
#: Frames walked past a segment before it is printed: its last frames' entry values may come
#: through a chain of callers' own entry values (DW_OP_entry_value), which GDB follows at
#: most 256 deep.
LOOKAHEAD = 260
#: Runs of more frames than this (of one function at one return address) are collapsed in
#: text by default: GDB's own lines for every stack GDB itself prints in a few seconds.
DEFAULT_COLLAPSE = 10_000


class Segment:
    """One segment of a deep walk: ``walk`` its frames; frames [start, end) are its own."""
    __slots__ = ("walk", "start", "end", "final", "first")

    def __init__(self, walk, start, end, final, first):
        self.walk, self.start, self.end, self.final, self.first = walk, start, end, final, first


def segments(head, rest, size=SEGMENT, lookahead=LOOKAHEAD):
    """The Segments of a walk whose first frames are ``head`` (a list) and the others come
    from ``rest`` (Walker.walk_stack_head's WalkRest); the final one is given why the walk
    ended.  Each segment's register views start from the last one's (``carry``)."""
    buf, start, first = list(head), 0, True
    frames = iter(rest)
    done = False
    while True:
        want = start + size + lookahead
        if not done and len(buf) < want:
            buf.extend(islice(frames, want - len(buf)))
            done = len(buf) < want
        end = len(buf) if done else start + size
        walk = StackWalk(buf, thread=rest.thread)
        if done:
            rest.ended(walk)
        else:
            walk.derived["open-end"] = True       # its last frame's callers come later
        yield Segment(walk, start, end, done, first)
        if done:
            return
        buf, start, first = buf[end - 1:], 1, False


def carry(prev, seg):
    """Start ``seg``'s register views (index 0: the last frame of ``prev``) from prev's."""
    if prev is None or seg.first:
        return
    view = register_view(prev.walk, level_of(prev.walk, prev.end - 1))
    seg.walk.derived["register-views"] = ({0: view}, [0])


class _Lines:
    """The levels of one segment: its ShownFrames, the first of its own (``k0``), and whether
    the walk ends in it silently (``cut``: past main, GDB's backtrace limit)."""

    def __init__(self, seg, past_main, top_inlines, bl_left):
        walk = seg.walk
        walk.top_inlines = top_inlines if seg.first else None
        self.cut = False
        visible = seg.end
        if not past_main:
            for i in range(seg.start, seg.end):
                if is_main_frame(walk[i]):
                    visible, self.cut = i + 1, True
                    break
        shown = shown_frames(walk, visible, below=not self.cut)
        lvl0 = level_of(walk, 0) if seg.start else -1
        k0 = next((k for k, sf in enumerate(shown) if sf.index > lvl0), len(shown))
        if bl_left is not None and len(shown) - k0 >= bl_left:
            # GDB's backtrace limit: its last level has no caller (GDB unwinds no further)
            last = k0 + bl_left - 1
            shown = shown_frames(walk, visible, outermost=shown[last].index)[:last + 1]
            self.cut = True
        self.walk, self.shown, self.k0 = walk, shown, k0
        self.final = seg.final or self.cut
        self.pos = None          # frame -> its index in the walk, made for -v's JSON

    def __len__(self):
        return len(self.shown) - self.k0


class Levels:
    """The levels a deep walk's backtrace prints, in order, as (_Lines, k, label): all of them,
    the innermost N, the outermost N (the segments holding them kept until the walk ends),
    or up to GDB's `backtrace limit`.  ``last``: the _Lines of the segment the walk ended in;
    ``more``: whether levels were left out after the last one given."""

    def __init__(self, head, rest, opts, past_main, top_inlines, size=SEGMENT, lookahead=LOOKAHEAD):
        self.head, self.rest, self.opts = head, rest, opts
        self.past_main, self.top_inlines = past_main, top_inlines
        self.size, self.lookahead = size, lookahead
        self.last, self.more = None, False

    def __iter__(self):
        limit = self.opts.limit or None
        bl = self.opts.backtrace_limit
        base, prev, kept = 0, None, deque()
        for seg in segments(self.head, self.rest, self.size, self.lookahead):
            carry(prev, seg)
            lines = self.last = _Lines(seg, self.past_main, self.top_inlines, None if bl is None else bl - base)
            if limit is not None and limit < 0:
                kept.append((lines, base))
                while len(kept) > 1 and base + len(lines) - kept[1][1] >= -limit:
                    kept.popleft()[0].walk.derived.clear()
            else:
                stop = len(lines) if limit is None else min(len(lines), limit - base)
                for k in range(lines.k0, lines.k0 + stop):
                    yield lines, k, base + k - lines.k0
                if limit is not None and base + stop >= limit:
                    self.more = stop < len(lines) or not lines.final
                    return
            base += len(lines)
            if prev is not None and not kept:
                prev.walk.derived.clear()      # frees the segment: its caches refer to it
                gc.collect(0)                  # and what refers to itself (exceptions kept)
            prev = seg
            if lines.final:
                break
        for lines, b in kept:
            for k in range(lines.k0, lines.k0 + len(lines)):
                if b + k - lines.k0 >= base + limit:
                    yield lines, k, b + k - lines.k0

    def stop_reason(self):
        """Why the walk ended (walked on to its end where the backtrace stopped first)."""
        if not self.rest.stop_reason:
            for _ in self.rest:
                pass
        return self.rest.stop_reason


def stream_text(head, rest, opts, aout_path, past_main, top_inlines, emit, collapse=DEFAULT_COLLAPSE,
                size=SEGMENT, lookahead=LOOKAHEAD):
    """Print a deep walk's text through ``emit(lines)``, segment by segment (``opts``: a
    BtOptions: GDB's settings, the levels asked for)."""
    style = text_style(opts)
    levels = Levels(head, rest, opts, past_main, top_inlines, size, lookahead)
    ctx = []

    def text(lines, k, label):
        if not ctx:
            ctx.append(text_context(lines.walk, opts.verbose, aout_path, opts.full, style))
        return level_lines(lines.walk, lines.shown, k, label, ctx[0])

    def about(sf, skipped):
        lib = sf.frame.library
        where = (f" at {sf.file}:{sf.line}" if sf.file else
                 f" from {lib.name}" if lib is not None and lib.name != aout_path else "")
        return f"[\u2026 {skipped} more frames of {sf.name or '??'} (){where} \u2026]"
    out = Collapser(collapse, emit, text, about)
    for lines, k, label in levels:
        out.level(lines, k, label)
    last = levels.last
    out.end(trailer_lines(last.walk, levels.more, last.cut, opts.verbose, limited=last.walk.limited))


class Collapser:
    """Levels out, grouped by frame (a physical frame's levels, its inlined calls first, and
    the tail-call frames between it and its caller); a run of more than ``limit`` groups alike
    (the same functions at the same pcs) printed as its first group and one line for the
    others (None: every level printed).  ``text(lines, k, label)``: a level's lines;
    ``about(shown, skipped)``: the line for a collapsed run (its first group's frame)."""

    def __init__(self, limit, emit, text, about):
        self.limit, self.emit, self.text, self.about_line = limit, emit, text, about
        self.group = []          # (lines, k, label) of the frame being gathered
        self.physical = None     # its physical frame
        self.key = None
        self.run = 0             # groups in the run so far
        self.held = []           # lines of the run's groups after its first, until it is known
        self.collapsed = False
        self.skipped = 0         # levels of a collapsed run left out
        self.about = None        # the run's frame, for the line that replaces it

    def level(self, lines, k, label):
        if self.limit is None:
            self.emit(self.text(lines, k, label))
            return
        sf = lines.shown[k]
        # a group: a physical frame's levels (its inlined calls first) and the tail-call
        # frames after it, up to the next physical frame, which may be in the next segment
        if self.group and sf.frame is not self.physical and sf.frame.kind != FrameKind.TAILCALL:
            self._close()
        if not self.group:
            self.physical = sf.frame
        self.group.append((lines, k, label))

    def _close(self):
        group, self.group = self.group, []
        own = [g[0].shown[g[1]] for g in group]
        key = tuple((sf.frame.ra, sf.kind, sf.name) for sf in own)
        if key != self.key or self.physical.is_top:
            self._flush()
            self.key, self.run = key, 1
            self.about = next((sf for sf in own if sf.frame is self.physical and sf.kind != INLINE), own[0])
            self.emit(self._text(group))
            return
        self.run += 1
        if self.collapsed or self.run > self.limit:
            if not self.collapsed:
                self.collapsed = True
                self.skipped = sum(n for n, _ in self.held)
                self.held = []
            self.skipped += len(group)
            return
        self.held.append((len(group), self._text(group)))

    def _text(self, group):
        out = []
        for lines, k, label in group:
            out.extend(self.text(lines, k, label))
        return out

    def _flush(self):
        if self.collapsed:
            self.emit([self.about_line(self.about, self.skipped)])
        else:
            for _n, held in self.held:
                self.emit(held)
        self.held, self.skipped, self.run, self.key, self.collapsed = [], 0, 0, None, False

    def end(self, trailer):
        if self.group:
            self._close()
        self._flush()
        if trailer:
            self.emit(trailer)


def stream_json(head, rest, opts, thread_num, tid, info, write, past_main, top_inlines,
                size=SEGMENT, lookahead=LOOKAHEAD):
    """A deep walk's JSON line (the one format.walk_json makes), written out in pieces
    through ``write(text)``, segment by segment; ``info``: more keys for its end."""
    import json   # only for JSON output: not at every start
    write(json.dumps({"thread": thread_num, "tid": tid})[:-1] + ', "frames": [')
    levels = Levels(head, rest, opts, past_main, top_inlines, size, lookahead)
    sep, batch, at = "", [], None
    for lines, k, label in levels:
        if lines is not at and batch:
            write(sep + ", ".join(batch))
            sep, batch = ", ", []
        at = lines
        batch.append(json.dumps(_frame_json(lines, k, label, opts)))
    if batch:
        write(sep + ", ".join(batch))
    end = {"stop_reason": levels.stop_reason(), **(info or {})}
    write("], " + json.dumps(end)[1:] + "\n")


def _frame_json(lines, k, label, opts):
    """The JSON record of level ``k`` of a segment (as format._walk_json makes it)."""
    sf = lines.shown[k]
    rec = frame_info(sf.frame, label, sf)
    if opts.full:
        found = variables(sf, lines.walk)
        rec["args"], rec["locals"] = found if found is not None else ([], [])
    if opts.verbose and sf.kind not in (INLINE, FrameKind.TAILCALL):
        if lines.pos is None:
            lines.pos = {id(f): i for i, f in enumerate(lines.walk)}
        prov = register_provenance(lines.walk, lines.pos[id(sf.frame)])
        if prov is not None:
            rec["registers"] = prov
    return rec
