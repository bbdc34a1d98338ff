"""GDB back-end: `source gdb_init.py` calls install()."""
_installed = False


def install():
    global _installed
    if _installed:
        return False
    from . import commands, session
    commands.register()
    session.connect_events()
    _installed = True
    return True
