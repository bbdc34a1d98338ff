"""The x87 register format (80-bit extended precision), for the architectures that have it.

A float or double an optimised function keeps on the x87 stack is read from a
10-byte register and converted to its own type, as GDB's i387_register_to_value
does; a long double is the register's bytes, padded to the type's size.
"""
import math
import struct

EXTENDED_SIZE = 10


def extended_to_fraction(raw):
    """The exact value of an 80-bit extended float: a Fraction, or a float for inf/nan."""
    from fractions import Fraction   # (and decimal) only where a long double is read
    mant = int.from_bytes(raw[:8], "little")
    se = int.from_bytes(raw[8:10], "little")
    sign = -1 if se & 0x8000 else 1
    exp = se & 0x7FFF
    if exp == 0x7FFF:
        if mant & ((1 << 63) - 1):
            return math.nan
        return sign * math.inf
    if exp == 0:
        exp = 1                     # denormal: no integer bit, the smallest exponent
    return sign * Fraction(mant) * Fraction(2) ** (exp - 16383 - 63)


def convert(raw, size):
    """The bytes of a ``size``-byte floating value held in an x87 register ``raw``."""
    raw = bytes(raw[:EXTENDED_SIZE])
    if size >= EXTENDED_SIZE:
        return raw + bytes(size - EXTENDED_SIZE)
    v = extended_to_fraction(raw)
    if size == 8:
        return struct.pack("<d", float(v))
    if size == 4:
        try:
            return struct.pack("<f", float(v))
        except OverflowError:
            return struct.pack("<f", math.copysign(math.inf, float(v)))
    return raw[:size]
