"""swk as LLDB's frame provider (LLDB 22+), so that LLDB's own `bt`, `bt all`,
`frame select` and `up`/`down` show swk's frames where LLDB alone is wrong.

LLDB makes one provider per thread per stop and asks it for frame 0, 1, 2 ...
until it answers None.  The provider walks the thread with swk (lazily, more
frames as more are asked for) and lines swk's frames up with LLDB's own
("input") frames by (pc, sp):

* where LLDB's frame has the pc and stack pointer swk found, LLDB's own frame is
  kept (its index is returned): registers, variables, inlined frames and
  LLDB's tail-call frames stay LLDB's;
* where LLDB has no such frame, swk's frame is given as {"idx", "pc"} (LLDB
  shows it with its symbol and line, marked [synthetic]);
* a frame in JIT code named from a source no debugger reads (a perf map, a jitdump:
  jit/symbols.named_only_by_swk) is given as a ScriptedFrame (JitNamedFrame): LLDB
  has no symbol there, and a frame given as {"idx", "pc"} (or LLDB's own) only
  shows its pc; a ScriptedFrame carries its name;
* in a CPython process, each _PyEval_EvalFrameDefault frame is followed by the Python
  frames its call was running, ScriptedFrames named ``[Python] NAME (FILE:LINE)``
  (pyframes.py); the thread is then walked whole at once, to place them;
* LLDB frames that match none of swk's (junk past a frame LLDB could not
  unwind) are dropped; when swk's walk ends without reaching the bottom of the
  stack at a frame LLDB also has, LLDB's frames below it are kept.

LLDB deadlocks (aborts) when a provider asks anything of a frame it has already
handed back to LLDB, so on its first call the provider copies what it needs of
LLDB's frames (pc, sp, inlined, artificial; frame 0's registers) and never
touches them again.

LLDB 22 calls a provider on whichever thread wants the frames - its event thread
too, printing a stop - while holding that thread's frame-list lock, and every SB call
takes the target's API lock.  A command on another thread (`bt`) takes the API lock
first and then wants the frame list: each waits for the other (llvm-project PR 208242,
after 22.1).  So a provider call that has to ask LLDB anything first takes the API
lock of the targets itself (try_lock, waiting a little: SBMutex) and holds it for the
whole call, computing a few frames ahead so that the event thread's next questions
(is the next frame hidden?) need no SB call; a call that cannot get the lock makes no
SB call at all (_busy).

LLDB swallows a provider's exceptions (the stack then just ends): every
exception is caught here, written to the log file ($TMPDIR/swk-lldb.log) and
reported once; the thread then shows LLDB's own frames.
"""
import bisect
import time

import lldb

from ...interp.cpython import find_runtime
from ...jit.symbols import named_only_by_swk
from .procstate import frame_registers, register_bytes
from .pyframes import PythonFrame, python_runs
from .session import SESSION

try:
    from lldb.plugins.scripted_frame_provider import ScriptedFrameProvider
    from lldb.plugins.scripted_process import ScriptedFrame
    HAVE_PROVIDERS = hasattr(lldb.SBTarget, "RegisterScriptedFrameProvider")
except ImportError:  # LLDB < 22
    ScriptedFrameProvider = ScriptedFrame = object
    HAVE_PROVIDERS = False

#: How the provider class is named to LLDB (swk_lldb is put in LLDB's script namespace).
PROVIDER_CLASS = "swk_lldb.provider.SwkFrameProvider"
WATCHER_CLASS = "swk_lldb.provider.SwkTargetWatcher"
WATCHER_NAME = "swk_frame_provider"

#: (process unique id, tid) -> (stop id, provider): LLDB's own frames for swk-bt -compare.
LATEST = {}


def remember(process, tid, provider):
    """LATEST[(process, tid)] = (stop id, provider), forgetting the entries of the process's
    earlier stops: a long session with threads coming and going would otherwise keep a
    provider (and its walk) for every thread it ever had."""
    uid, sid = process.GetUniqueID(), process.GetStopID()
    for key in [k for k, (s, _p) in LATEST.items() if k[0] == uid and s != sid]:
        del LATEST[key]
    if len(LATEST) >= 256:   # other processes' (a session that ran many)
        LATEST.clear()
    LATEST[(uid, tid)] = (sid, provider)


#: LLDB's frames looked at past the last one matched, at least (MATCH_AHEAD) and at most
#: (MATCH_MOST, while they are below the frame of swk's being matched): LLDB's own frames
#: are copied as far as matching needs, not all of them (a deep stack's are many).
MATCH_AHEAD, MATCH_MOST = 64, 4096
#: The most of LLDB's own frames copied (its own frame cap is 300,000).
MAX_INPUT = 1_000_000

#: How long a provider call waits for the targets' API lock before answering without it
#: (_busy): a long wait is another thread's walk; the lock never comes when that thread
#: waits for this thread's frame list.
API_LOCK_PATIENCE = 3.0
#: Frames placed past the one asked for while the lock is held (LLDB asks the next one too).
LOOKAHEAD = 2

#: Statistics for tests and `swk-settings`: frames given by swk, frames kept from LLDB.
STATS = {"swk": 0, "lldb": 0, "providers": 0, "bypassed": 0, "jit": 0, "python": 0, "busy": 0}


class JitNamedFrame(ScriptedFrame):
    """A frame in JIT code that only swk can name (a perf map's, a jitdump's name): LLDB 22
    shows a ScriptedFrame's get_function_name where it finds no symbol.  It has no registers:
    LLDB 22.1 crashes on the first read of a ScriptedFrame's register context (its register
    info is freed once made, llvm-project PR 216840), so none is given (docs/lldb.md)."""

    def __init__(self, frame):   # not ScriptedFrame.__init__: its SB calls are not needed
        self.idx = 0
        self.pc = frame.ra
        self.name = frame.name

    def get_id(self):
        return self.idx

    def get_pc(self):
        return self.pc

    def get_function_name(self):
        return self.name

    def is_artificial(self):
        return False

    def get_register_info(self):
        return None

    def get_register_context(self):
        return None


class SwkFrameProvider(ScriptedFrameProvider):
    @staticmethod
    def get_description():
        return "swk: frames found by swk's stack walker where LLDB's own unwinder is wrong"

    def __init__(self, input_frames, args):
        # No SB call here: LLDB may make a provider on its event thread while swk-bt runs on
        # the main one (see Session.enter_command); the base class's are made in _setup().
        self._init_args = (input_frames, args)
        self._ready = False
        self._bypassed = False  # LLDB's own frames for this stop (swk-bt ran elsewhere)
        self.input_frames = None
        self.thread = self.process = self.target = None
        self._out = []          # output frames: int (LLDB frame index) or dict (swk frame)
        self._done = False
        self._failed = False
        self._walk = None
        self._k = 0             # next swk frame to place
        self._j = 0             # next LLDB frame that may be kept
        self._last_real = None  # LLDB frame index the last placed swk frame matched
        self._real = None       # [(pc, sp, inlined, artificial)] of LLDB's frames
        self._index = None      # (pc, sp) -> sorted LLDB frame indices
        self._regs0 = None      # frame 0's registers
        self._py = None         # ({walk index: [PythonFrame] after it}, [PythonFrame] first)
        STATS["providers"] += 1

    def _setup(self):
        self._ready = True
        super().__init__(*self._init_args)
        if self.process is not None and self.thread is not None:
            remember(self.process, self.thread.GetThreadID(), self)

    # --- LLDB's entry point -----------------------------------------------------------------
    def get_frame_at_index(self, index):
        if self._bypassed or not SESSION.provider_enter():
            return self._bypass(index)
        try:
            if self._placed(index):
                return self._answer(index)
            held = lock_targets(API_LOCK_PATIENCE)
            if held is None:
                return self._busy(index)
            try:
                return self._frame_at_index(index)
            finally:
                for mutex in reversed(held):
                    mutex.unlock()
        finally:
            SESSION.provider_exit()

    def _placed(self, index):
        """Whether the answer for ``index`` is known without asking LLDB anything."""
        return self._ready and self._real is not None and not self._failed \
            and SESSION.provider_enabled and (index < len(self._out) or self._done)

    def _busy(self, index):
        """Another thread holds the API lock and may be waiting for this thread's frames:
        answered without an SB call, as after swk-bt ran elsewhere (_bypass)."""
        STATS["busy"] += 1
        SESSION.log(f"frame provider: the targets' API lock stayed busy for {API_LOCK_PATIENCE} s "
                    f"(another thread wants these frames?): LLDB's own frames for this stop")
        return self._bypass(index)

    def _bypass(self, index):
        """swk-bt runs on another thread: no SB call may be made (it would deadlock LLDB).
        LLDB's own frames for this stop, unless swk's were shown already (then the stack ends)."""
        if not self._bypassed:
            self._bypassed = True
            STATS["bypassed"] += 1
        if self._real is None and not self._out:
            return index   # LLDB checks the index against its own frames
        return self._passthrough(index, sb=False)

    def _frame_at_index(self, index):
        try:
            if not self._ready:
                self._setup()
            if self._real is None:
                self._snapshot()
            if self._failed or not SESSION.provider_enabled:
                return self._passthrough(index)
            if index == 0:
                return 0 if self._n_real() > 0 else None
            while len(self._out) <= index + LOOKAHEAD and not self._done:
                self._place_next()
            return self._answer(index)
        except BaseException as exc:  # SystemExit too: LLDB would swallow it and end the stack
            self._fail(exc)
            return self._passthrough(index)

    def _answer(self, index):
        """The frame placed at ``index`` as LLDB takes it (None: the stack ends)."""
        if index == 0:
            return 0 if self._n_real() > 0 else None
        try:
            if index < len(self._out):
                entry = self._out[index]
                if isinstance(entry, dict):
                    STATS["swk"] += 1
                    return dict(entry, idx=index)
                if isinstance(entry, JitNamedFrame):
                    STATS["swk"] += 1
                    STATS["jit"] += 1
                    entry.idx = index
                    return entry
                if isinstance(entry, PythonFrame):
                    STATS["python"] += 1
                    entry.idx = index
                    return entry
                STATS["lldb"] += 1
                return entry
            return None
        except BaseException as exc:  # SystemExit too: LLDB would swallow it and end the stack
            self._fail(exc)
            return self._passthrough(index)

    # --- LLDB's own frames --------------------------------------------------------------------
    def _snapshot(self):
        """Start copying what swk needs of LLDB's frames, before any is handed back to LLDB:
        frame 0 now, the others as swk's walk is matched against them (_copy): asked for all
        at once, LLDB would unwind a 262,000-frame overflow whole before its first stop line."""
        self._real, self._index, self._real_all = [], {}, False
        if self.input_frames is None:
            self._real_all = True
            return
        self._copy(1)
        if self._real and self.process is not None:
            walker = SESSION.walker_for(self.process)
            arch = walker.process_state.arch
            frame0 = self.input_frames.GetFrameAtIndex(0)
            self._regs0 = frame_registers(frame0, arch)
            if arch.thread_pointer:     # CPython 3.10 finds a thread's state by its thread pointer
                data = register_bytes(frame0, arch.thread_pointer)
                if data:
                    self._regs0[arch.thread_pointer] = arch.unpack_int(data)

    def _copy(self, n=None):
        """LLDB's frames copied up to index ``n`` - 1 (None: all of them)."""
        fl = self.input_frames
        while not self._real_all and (n is None or len(self._real) < n):
            i = len(self._real)
            f = fl.GetFrameAtIndex(i) if i < MAX_INPUT else None
            if f is None or not f.IsValid():
                self._real_all = True
                break
            pc, sp = f.GetPC(), f.GetSP()
            self._real.append((pc, sp, f.IsInlined(), f.IsArtificial()))
            self._index.setdefault((pc, sp), []).append(i)

    def _n_real(self):
        return len(self._real or ())

    def real_frames(self):
        """LLDB's own frames of this thread as [(pc, sp, inlined, artificial)]."""
        if self._real is not None:
            self._copy()
        return list(self._real or ())

    def _passthrough(self, index, sb=True):
        """After a failure: LLDB's own frames, unless swk's frames were shown already
        (``sb``: whether SB calls may be made, to copy more of LLDB's frames)."""
        if all(isinstance(e, int) and e == i for i, e in enumerate(self._out)):
            if self._real is None:
                return index   # LLDB checks the index against its own frames
            if sb:
                self._copy(index + 1)
            elif not self._real_all and index >= len(self._real):
                return index
            return index if index < len(self._real) else None
        return None

    # --- swk's walk ---------------------------------------------------------------------------
    def _walk_to(self, k):
        """swk's walk with at least k+1 frames if the stack has them (re-walked with
        more frames as LLDB asks for deeper ones: caches make a re-walk cheap)."""
        walk = self._walk
        if walk is not None and (len(walk) > k or not walk.limited):
            return walk
        walker = SESSION.walker_for(self.process)
        ps = walker.process_state
        tid = self.thread.GetThreadID()
        if tid not in ps._regs:
            ps.prime_registers(tid, self._regs0 or {})
        want = 16
        while want <= k:
            want *= 8
        if walk is not None:
            want = max(want, len(walk) * 8)
        n_errors = len(walker.stepper_errors)
        self._walk = walker.walk_stack(tid, max_frames=min(want, walker.frame_cap))
        del walker.stepper_errors[n_errors:]   # swk-bt shows its own; these would pile up for ever
        return self._walk

    def _python(self):
        """The Python frames to place (pyframes.python_runs), from the whole walk of the thread."""
        if self._py is None:
            walker = SESSION.walker_for(self.process)
            runs = None
            if find_runtime(walker.process_state) is not None:
                runs = python_runs(walker.process_state, self._walk_to(walker.frame_cap))
            self._py = runs or ({}, [])
        return self._py

    def _place_next(self):
        k = self._k
        self._place_native()
        after, before = self._python()
        if k == 0 and self._out:
            self._out.extend(before)
        if len(self._out) and self._k > k:
            self._out.extend(after.get(k, ()))

    def _place_native(self):
        walk = self._walk_to(self._k)
        if self._k >= len(walk):
            # swk's walk is over.  It gave up at a frame LLDB has too: keep LLDB's frames below.
            if not walk.complete and not walk.limited and self._last_real is not None:
                self._copy()
                self._out.extend(range(self._last_real + 1, self._n_real()))
            self._done = True
            return
        frame = walk[self._k]
        if frame.kind == "inline":
            self._k += 1   # LLDB makes its own frames for inlined calls
            return
        m = self._match(frame.ra, frame.sp)
        if self._k == 0 and m != 0:
            m = 0 if self._n_real() else None   # frame 0 is LLDB's: the registers themselves
        elif m is not None and frame.kind == "signal" and self._misnamed_trampoline(frame.ra):
            m = None                    # swk's frame, looked up at its pc: LLDB's would be misnamed
        if self._k > 0 and frame.library is None and named_only_by_swk(frame):
            # LLDB's frame there (if any) would show only a pc: swk's, with its name, instead
            self._out.append(JitNamedFrame(frame))
            if m is not None:
                self._j = m + 1
            self._last_real = m
        elif m is None:
            self._out.append({"idx": len(self._out), "pc": self._shown_pc(frame)})
            self._last_real = None
        else:
            # LLDB's tail-call frames just above the match are LLDB's knowledge: keep them.
            keep = range(self._j, m)
            if keep and all(self._real[i][3] for i in keep):
                self._out.extend(keep)
            end = m
            key = self._real[m][:2]
            # before an evaluator frame's Python frames, all of LLDB's frames of the physical
            # frame: its inlined calls, innermost first, then the concrete function, at one sp
            # (a caller inlined at its call's own pc: LLDB's _PyEval_EvalFrameDefault itself)
            whole = bool(self._python()[0].get(self._k))
            while True:    # LLDB's inlined frames share the pc and sp of their concrete frame
                self._copy(end + 2)
                if end + 1 >= self._n_real():
                    break
                nxt = self._real[end + 1]
                if nxt[:2] != key and not (whole and self._real[end][2] and nxt[1] == key[1]):
                    break
                end += 1
            self._out.extend(range(m, end + 1))
            self._j = end + 1
            self._last_real = end
        self._k += 1

    def _shown_pc(self, frame):
        """The pc LLDB gets for a frame of swk's: the return address, as LLDB shows its own
        frames, unless LLDB would name it wrong.  LLDB looks a given pc up as it is, not
        at pc-1 as for its own callers, so a call that ends a function (or an inlined
        call) would take the name of what follows: then pc-1."""
        pc = frame.ra
        if frame.is_top or frame.non_call or frame.kind == "signal" or not pc:
            return pc
        if self._lldb_symbol(pc) != self._lldb_symbol(pc - 1):
            return pc - 1
        return pc

    def _misnamed_trampoline(self, pc):
        """Whether LLDB, not knowing a sigreturn trampoline without CFI for one (i386 code's
        own SA_RESTORER trampoline), would name its frame after the function before it: it
        looks a caller's pc up at pc-1, and pc-1 is in another named function."""
        before = self._lldb_symbol(pc - 1)
        return before[1] is not None and before != self._lldb_symbol(pc)

    def _lldb_symbol(self, pc):
        addr = self.target.ResolveLoadAddress(pc)
        fn, sym = addr.GetFunction(), addr.GetSymbol()
        block = addr.GetBlock()
        inl = block.GetContainingInlinedBlock() if block.IsValid() else None
        return (fn.GetName() if fn.IsValid() else None, sym.GetName() if sym.IsValid() else None,
                inl.GetInlinedName() if inl is not None and inl.IsValid() else None)

    def _match(self, pc, sp):
        # LLDB's frames copied as far as one at this sp could be: past it (a stack's frames lie
        # at rising sp), and some way past the last one placed
        j = self._j
        while not self._real_all and (len(self._real) < j + MATCH_AHEAD or (
                self._real[-1][1] <= sp and len(self._real) < j + MATCH_MOST)):
            self._copy(len(self._real) + 1)
        idx = self._index.get((pc, sp))
        if not idx:
            return None
        i = bisect.bisect_left(idx, self._j)
        return idx[i] if i < len(idx) else None

    # --- failures -------------------------------------------------------------------------------
    def _fail(self, exc):
        self._failed = True
        path = SESSION.log(f"frame provider: {exc.__class__.__name__}: {exc}", exc)
        debugger = None
        try:
            debugger = self.target.GetDebugger() if self.target is not None else None
        except Exception:
            pass
        SESSION.report_once(debugger, ("provider", exc.__class__.__name__, str(exc)),
                            f"swk: the frame provider failed ({exc.__class__.__name__}: {exc}); "
                            f"LLDB's own frames are shown (shown once; details in {path})")


class SwkTargetWatcher:
    """A scripted breakpoint resolver that never sets a location: a breakpoint with it on
    LLDB's dummy target is copied into every target made later, and LLDB makes the
    resolver anew for the copy, before the target has a process.  That is the moment to
    register the frame provider: registered later, with a process, LLDB re-announces the
    thread's position and (during a launch) can deadlock in the provider."""

    def __init__(self, bkpt, extra_args, internal_dict):
        try:
            ensure_provider(bkpt.GetTarget())
        except Exception as exc:
            SESSION.log(f"target watcher: {exc.__class__.__name__}: {exc}", exc)

    def __callback__(self, sym_ctx):
        return

    def __get_depth__(self):
        return lldb.eSearchDepthTarget

    def get_short_help(self):
        return "swk: registers swk's frame provider on new targets"


_REGISTERED = []   # [(SBTarget, provider id)]


def _registered_id(target):
    for t, pid in _REGISTERED:
        if t == target:
            return pid
    return None


def lock_targets(patience):
    """The API lock of every target swk's provider is registered on, taken by try_lock
    (never blocking: see the module's docstring) and tried again for up to ``patience``
    seconds; the SBMutexes now held (to unlock), or None.  Every target's, since finding
    which target a thread belongs to is itself an SB call that takes the lock; LLDB < 22.1
    has no SBMutex (and no providers)."""
    mutexes = [t.GetAPIMutex() for t, _pid in _REGISTERED if t.IsValid()]
    deadline = time.monotonic() + patience
    while True:
        held = []
        for mutex in mutexes:
            if not mutex.try_lock():
                break
            held.append(mutex)
        if len(held) == len(mutexes):
            return held
        for mutex in reversed(held):
            mutex.unlock()
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.002)


def ensure_provider(target):
    """Register swk's frame provider on ``target`` (once); returns an error line or None."""
    if not HAVE_PROVIDERS or not SESSION.provider_enabled:
        return None
    if target is None or not target.IsValid() or _registered_id(target) is not None:
        return None
    err = lldb.SBError()
    pid = target.RegisterScriptedFrameProvider(PROVIDER_CLASS, lldb.SBStructuredData(), err)
    if not err.Success() or not pid:
        SESSION.log(f"could not register the frame provider: {err.GetCString()}")
        return f"swk: could not register the frame provider: {err.GetCString()}"
    _REGISTERED[:] = [(t, p) for t, p in _REGISTERED if t.IsValid()]
    _REGISTERED.append((target, pid))
    return None


def remove_providers():
    """Unregister swk's provider from every target (swk-settings provider off)."""
    for t, pid in _REGISTERED:
        try:
            if t.IsValid():
                t.RemoveScriptedFrameProvider(pid)
        except Exception as exc:
            SESSION.log(f"removing the frame provider: {exc}", exc)
    del _REGISTERED[:]


def lldb_own_frame(process, thread, index):
    """LLDB's own SBFrame at ``index`` (of lldb_own_frames), without swk's provider."""
    entry = LATEST.get((process.GetUniqueID(), thread.GetThreadID()))
    if entry is not None and entry[0] == process.GetStopID() and entry[1]._real is not None \
            and entry[1].input_frames is not None and _registered_id(process.GetTarget()) is not None \
            and SESSION.provider_enabled:
        return entry[1].input_frames.GetFrameAtIndex(index)
    return thread.GetFrameAtIndex(index)


def lldb_own_frames(process, thread):
    """LLDB's own frames of ``thread`` at this stop, without swk's provider, as
    [(pc, sp, inlined, artificial)]: the input frames LLDB gave the provider, or the
    thread's frames when no provider runs."""
    n = thread.GetNumFrames()  # makes LLDB build the thread's frames (and the provider)
    entry = LATEST.get((process.GetUniqueID(), thread.GetThreadID()))
    if entry is not None and entry[0] == process.GetStopID() and entry[1]._real is not None \
            and _registered_id(process.GetTarget()) is not None and SESSION.provider_enabled:
        return entry[1].real_frames()
    out = []
    for i in range(n):
        f = thread.GetFrameAtIndex(i)
        out.append((f.GetPC(), f.GetSP(), f.IsInlined(), f.IsArtificial()))
    return out
