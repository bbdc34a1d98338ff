"""GDB back-end: `source gdb_init.py` calls install()."""
_installed = False


def gdb_invalidate():
    """Frames GDB made before swk's unwinder existed are made again with it."""
    import gdb
    try:
        gdb.invalidate_cached_frames()
    except Exception:
        pass


def install():
    global _installed
    if _installed:
        return False
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
