"""Where a target's file is found on this machine: a cross target's libraries live under a
sysroot (``--sysroot``, GDB's ``set sysroot``, Debian's /usr/<triple> cross packages).

The dynamic linker of a program run under qemu-user with ``-L SYSROOT`` names its
libraries as it found them through qemu's path redirection: ``/lib/libc.so.6`` for
SYSROOT/lib/libc.so.6, or ``/lib/aarch64-linux-gnu/libc.so.6`` in a multiarch sysroot.
A path that exists here as is may be this machine's own file of another architecture
(``/lib/ld-linux...``): a candidate counts only when its ELF machine is the target's.
"""
import os

from ..arch import UnsupportedArchitecture, from_elf_machine

#: Directories under a sysroot where a library's file name is looked up when its own path
#: is not there.
LIB_DIRS = ("lib", "usr/lib", "lib64", "usr/lib64")


def candidates(path, roots):
    """Paths under each sysroot where ``path`` (absolute, from the target) may be."""
    base = os.path.basename(path)
    for root in roots:
        if not root:
            continue
        yield os.path.join(root, path.lstrip("/"))
        for d in LIB_DIRS:
            yield os.path.join(root, d, base)


def find_in_sysroot(path, roots, arch=None):
    """The first existing file for ``path`` under ``roots`` (of ``arch``'s machine when
    given), or None."""
    if not path or not path.startswith("/"):
        return None
    for cand in candidates(path, roots):
        if os.path.isfile(cand) and (arch is None or elf_machine_is(cand, arch)):
            return cand
    return None


def is_elf(path):
    """Whether ``path`` is a readable ELF file."""
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == b"\x7fELF"
    except OSError:
        return False


def elf_machine_is(path, arch):
    """Whether the ELF file at ``path`` is for ``arch`` (False when unreadable or not ELF)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(20)
    except OSError:
        return False
    if len(head) < 20 or head[:4] != b"\x7fELF":
        return False
    byteorder = "little" if head[5] == 1 else "big"
    machine = int.from_bytes(head[18:20], byteorder)
    try:   # the class and byte order too: ppc64 and ppc64le are one machine
        return from_elf_machine(machine, 64 if head[4] == 2 else 32, byteorder) == arch
    except UnsupportedArchitecture:
        return False


def resolve_target_path(path, arch, sysroots=()):
    """Where the target's ``path`` is here: as is when it exists and is for ``arch``, else
    under ``sysroots`` (the user's, then the architecture's own: ``arch.sysroots``), else
    None."""
    if path and os.path.isfile(path) and elf_machine_is(path, arch):
        return path
    return find_in_sysroot(path, tuple(sysroots) + tuple(arch.sysroots), arch)
