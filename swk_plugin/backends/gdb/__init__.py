"""GDB back-end: `source gdb_init.py` calls install()."""
_installed = False


def gdb_invalidate():
    """Frames GDB made before swk's unwinder existed are made again with it."""
    import gdb
    try:
        gdb.invalidate_cached_frames()
    except Exception:
        pass


def _freeze_at_exit():
    """At GDB's exit Python collects and frees everything: swk's caches (tens of thousands of
    objects) need no cycle search first.  Frozen, the collector passes them over (GDB quits
    5 ms sooner after a first swk-bt; they are freed all the same)."""
    import gc
    gc.freeze()


def install():
    global _installed
    if _installed:
        return False
    import atexit
    atexit.register(_freeze_at_exit)
    from . import commands, jitnames, prewarm, procstate, pyframes, session, unwinder
    commands.register()
    session.connect_events()
    prewarm.install()
    procstate.TARGET.refresh()   # a core loaded before swk was sourced
    unwinder.install(session.SESSION)
    jitnames.install()
    pyframes.install()
    gdb_invalidate()
    _installed = True
    return True
