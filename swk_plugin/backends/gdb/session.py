"""Per-GDB-session state: one Walker per inferior, invalidated by GDB's events."""
import gdb

from ...errors import NoProcessError, SwkError
from ...walker import DEFAULT_FRAME_CAP, Walker
from .procstate import TARGET, GdbProcessState, arch_name, selected_thread
from .values import GdbValuePrinter


class Session:
    def __init__(self):
        self._walkers = {}   # inferior number -> Walker
        self.frame_cap = DEFAULT_FRAME_CAP
        self.debug = False
        #: Called whenever cached knowledge of the target goes stale (the unwinder's caches).
        self.listeners = []
        #: The unwinder declined a frame because the library list could not be made inside it.
        self.unready = False

    def walker(self, inferior=None, all_threads=False):
        """The Walker for the selected inferior, checked to have a stopped process or a core:
        the selected thread stopped, or with ``all_threads`` (swk-bt -all) any thread."""
        inferior = inferior or gdb.selected_inferior()
        TARGET.refresh()
        threads = [t for t in inferior.threads() if t.is_valid()]
        if not threads:
            if inferior.progspace is None or inferior.progspace.filename is None:
                raise NoProcessError("swk-bt: no process: load a program and run it, attach, or load a core file")
            raise NoProcessError("swk-bt: the program is not being run (no stack)")
        if all_threads:
            if all(t.is_running() for t in threads):
                raise NoProcessError("swk-bt: the program is running: interrupt it first")
        else:
            th = selected_thread()
            if th is not None and th.is_running():
                raise NoProcessError("swk-bt: the selected thread is running: interrupt it first")
        return self.walker_for(inferior)

    def walker_for(self, inferior):
        """The inferior's Walker, made on first use (no checks: unwinders use this)."""
        w = self._walkers.get(inferior.num)
        if w is None or w.process_state.inferior != inferior or not inferior.is_valid() \
                or w.process_state.gdb_arch_name != arch_name(inferior):
            # (a new program, or `set architecture`: the Architecture is asked again)
            w = Walker(GdbProcessState(inferior), frame_cap=self.frame_cap)
            w.value_printer = GdbValuePrinter()
            self._walkers[inferior.num] = w
        w.frame_cap = self.frame_cap
        return w

    # --- invalidation ----------------------------------------------------------------
    def on_target_changed(self, *_args):
        """A stop, resume, or a write: registers and memory are stale."""
        for fn in self.listeners:
            fn()
        for w in self._walkers.values():
            w.process_state.invalidate()
            w.process_state.library_state.mark_dirty()

    def on_stop(self, *_args):
        """At a stop, outside any unwinder: what the unwinder may need that only GDB commands
        give (a remote target's auxv, the pointer-authentication mask).  When the unwinder
        had to decline frames because it did not have them yet, GDB is made to ask again."""
        for w in list(self._walkers.values()):
            ps = w.process_state
            try:
                ps.library_state.auxv()
                ps.code_address_mask()
            except (gdb.error, RuntimeError, SwkError):
                continue
        if self.unready:
            self.unready = False
            gdb.invalidate_cached_frames()

    def on_objfiles_changed(self, *_args):
        TARGET.refresh()
        for fn in self.listeners:
            fn()
        for w in self._walkers.values():
            w.process_state.library_state.mark_dirty()
            w.process_state.invalidate()

    def on_inferior_gone(self, *_args):
        for fn in self.listeners:
            fn()
        self._walkers.clear()


SESSION = Session()


def connect_events():
    ev = gdb.events
    for reg in (ev.stop, ev.cont, ev.memory_changed, ev.register_changed, ev.inferior_call,
                ev.new_thread):
        reg.connect(SESSION.on_target_changed)
    ev.stop.connect(SESSION.on_stop)
    for reg in (ev.new_objfile, ev.free_objfile, ev.clear_objfiles):
        reg.connect(SESSION.on_objfiles_changed)
    for reg in (ev.exited, ev.inferior_deleted, ev.new_inferior):
        reg.connect(SESSION.on_inferior_gone)
