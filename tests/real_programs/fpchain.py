"""Sourced in GDB by tests/test_real_programs.py (before swk is loaded):
prints, per thread, chains of saved frame pointers as one line
``SWKFPCHAIN {"thread": N, "chains": [[[rbp, saved_rbp, return_address], ...], ...]}``.

V8 keeps a frame-pointer chain through all its JavaScript frames (JIT-compiled
code has neither symbols nor CFI), so such a chain is an oracle for the return
addresses of JIT frames that owes nothing to swk or to GDB's unwinders.  A
chain starts at the thread's %rbp, and again at the %rbp of each of GDB's own
frames up to the first frame outside every ELF file (GDB's CFI is right up to
there; a sample may stop in C++ code that uses %rbp as a general register).
A chain stops at the first link that is not 8-aligned, not above the
previous one, more than 1 MiB above it, or unreadable.
"""
import json
import struct

import gdb

MAX_LINKS = 20000
MAX_STEP = 1 << 20
MAX_STARTS = 64


def _chain(inf, rbp):
    links = []
    while len(links) < MAX_LINKS and rbp and rbp % 8 == 0:
        try:
            saved, ret = struct.unpack("<QQ", bytes(inf.read_memory(rbp, 16)))
        except gdb.MemoryError:
            break
        links.append([rbp, saved, ret])
        if not (rbp < saved <= rbp + MAX_STEP):
            break
        rbp = saved
    return links


def _anon_exec(pid):
    """[start, end) of the anonymous executable mappings (JIT code)."""
    ranges = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) >= 5 and "x" in parts[1] and (len(parts) == 5 or not parts[5].strip()):
                lo, hi = parts[0].split("-")
                ranges.append((int(lo, 16), int(hi, 16)))
    return ranges


def _starts(jit):
    starts = []
    frame = gdb.newest_frame()
    while frame is not None and len(starts) < MAX_STARTS:
        try:
            rbp = int(frame.read_register("rbp")) & 0xFFFFFFFFFFFFFFFF
            pc = int(frame.pc())
        except (gdb.error, ValueError):
            break
        if rbp not in starts:
            starts.append(rbp)
        if any(lo <= pc < hi for lo, hi in jit):
            break  # the first frame in JIT code: GDB's frames further out are guesses
        try:
            frame = frame.older()
        except gdb.error:
            break
    return starts


def swk_fp_chains():
    inf = gdb.selected_inferior()
    sel = gdb.selected_thread()
    jit = _anon_exec(inf.pid)
    try:
        for th in sorted(inf.threads(), key=lambda t: t.num):
            th.switch()
            chains = [_chain(inf, rbp) for rbp in _starts(jit)]
            print("SWKFPCHAIN " + json.dumps({"thread": th.num, "chains": chains}))
    finally:
        if sel is not None:
            sel.switch()
