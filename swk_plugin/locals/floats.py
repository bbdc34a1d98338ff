"""Floating-point values as GDB 13 prints them: %g of the exact value with the format's
own precision (9 digits for IEEE single, 17 for double, 5 for half, 36 for quad, and the
x87 extended format's), with inf, -inf and nan(0x...) spelled as GDB spells them.  A
value's bytes are in the target's byte order (``byteorder``); IBM's double-double is two
doubles, the high one first, each in that order; x87's extended format is little-endian
by nature (only x86 has it)."""
import struct


def _g(num, den, prec, neg):
    """printf("%.{prec}g") of the exact value num/den (>= 0), rounded half-even as glibc."""
    sign = "-" if neg else ""
    if num == 0:
        return sign + "0"
    from decimal import Context, Decimal, ROUND_HALF_EVEN   # floats only: not every session
    ctx = Context(prec=prec, rounding=ROUND_HALF_EVEN, Emax=999999, Emin=-999999)
    d = ctx.divide(Decimal(num), Decimal(den))
    x = d.adjusted()
    digits = d.as_tuple().digits
    ds = "".join(map(str, digits)).ljust(prec, "0")[:prec]
    if -4 <= x < prec:
        if x >= 0:
            ip, fp = ds[:x + 1], ds[x + 1:]
        else:
            ip, fp = "0", "0" * (-x - 1) + ds
        fp = fp.rstrip("0")
        return sign + ip + ("." + fp if fp else "")
    mant = ds[0] + ("." + ds[1:].rstrip("0") if ds[1:].rstrip("0") else "")
    return f"{sign}{mant}e{'-' if x < 0 else '+'}{abs(x):02d}"


def _mantissa_hex(mant, man_len):
    """floatformat_mantissa: the first (man_len % 32 or 32) bits in %lx, then %08lx chunks."""
    first = man_len % 32 or 32
    rest = man_len - first
    s = "%x" % (mant >> rest)
    while rest > 0:
        rest -= 32
        s += "%08x" % ((mant >> rest) & 0xFFFFFFFF)
    return s


#: IEEE 754-2008 decimal formats in their binary (BID) encoding, x86's and AArch64's:
#: width -> (exponent bits, coefficient bits of the short form, digits of precision, bias)
_BID = {"bid32": (4, 8, 23, 7, 101), "bid64": (8, 10, 53, 16, 398), "bid128": (16, 14, 113, 34, 6176)}


def format_decimal(data, fmt, byteorder="little"):
    """A _Decimal32/64/128 as GDB prints it (libdecnumber's to-scientific-string):
    0.1, 1.0, 1.23E+5, -0, Infinity, NaN, sNaN."""
    size, elen, clen, digits, bias = _BID[fmt]
    raw = int.from_bytes(data[:size], byteorder)
    top = size * 8 - 1
    sign = "-" if raw >> top & 1 else ""
    comb = raw >> (top - 5) & 0x1F
    if comb == 0x1F:
        return sign + ("sNaN" if raw >> (top - 6) & 1 else "NaN")
    if comb == 0x1E:
        return sign + "Infinity"
    if raw >> (top - 2) & 3 == 3:        # the long form: exponent after "11", coefficient 100...
        exp = raw >> (clen - 2) & ((1 << elen) - 1)
        coef = (0b100 << (clen - 2)) | (raw & ((1 << (clen - 2)) - 1))
    else:
        exp = raw >> clen & ((1 << elen) - 1)
        coef = raw & ((1 << clen) - 1)
    if coef >= 10 ** digits:             # non-canonical: zero
        coef = 0
    e = exp - bias
    ds = str(coef)
    adjusted = e + len(ds) - 1
    if e <= 0 and adjusted >= -6:
        if e == 0:
            return sign + ds
        point = len(ds) + e
        return sign + (ds[:point] + "." + ds[point:] if point > 0 else "0." + "0" * -point + ds)
    mant = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
    return f"{sign}{mant}E{'+' if adjusted >= 0 else '-'}{abs(adjusted)}"


def format_float(data, fmt, byteorder="little"):
    """A float as GDB prints it: %.9g / %.17g / %.21Lg (DECIMAL_DIG of the format),
    inf, nan(0xmantissa), <invalid float value>; decimal floats by format_decimal.
    ``data``: the value's bytes in the target's ``byteorder``."""
    if fmt in _BID:
        return format_decimal(data, fmt, byteorder)
    if fmt == "ieee32":
        raw = int.from_bytes(data[:4], byteorder)
        neg, exp, man, elen, mlen = raw >> 31, (raw >> 23) & 0xFF, raw & 0x7FFFFF, 8, 23
        prec = 9
    elif fmt == "ieee64":
        raw = int.from_bytes(data[:8], byteorder)
        neg, exp, man, elen, mlen = raw >> 63, (raw >> 52) & 0x7FF, raw & ((1 << 52) - 1), 11, 52
        prec = 17
    elif fmt == "ieee16":
        raw = int.from_bytes(data[:2], byteorder)
        neg, exp, man, elen, mlen = raw >> 15, (raw >> 10) & 0x1F, raw & 0x3FF, 5, 10
        prec = 5
    elif fmt == "ieee128":
        raw = int.from_bytes(data[:16], byteorder)
        neg, exp, man, elen, mlen = raw >> 127, (raw >> 112) & 0x7FFF, raw & ((1 << 112) - 1), 15, 112
        prec = 36
    elif fmt == "ibm128":
        return _ibm128(data, byteorder)
    elif fmt == "x87":
        raw = int.from_bytes(data[:10], "little")
        man = raw & ((1 << 64) - 1)
        exp = (raw >> 64) & 0x7FFF
        neg = (raw >> 79) & 1
        intbit = man >> 63
        if (exp == 0) != (intbit == 0):
            return "<invalid float value>"
        sign = "-" if neg else ""
        if exp == 0x7FFF:
            if man & ((1 << 63) - 1):
                return f"{sign}nan(0x{_mantissa_hex(man, 64)})"
            return sign + "inf"
        e = (exp or 1) - 16383 - 63
        num, den = (man << e, 1) if e >= 0 else (man, 1 << -e)
        return _g(num, den, 21, neg)
    else:
        return "<invalid float value>"
    sign = "-" if neg else ""
    if exp == (1 << elen) - 1:
        if man:
            return f"{sign}nan(0x{_mantissa_hex(man, mlen)})"
        return sign + "inf"
    bias = (1 << (elen - 1)) - 1
    if exp == 0:
        m, e = man, 1 - bias - mlen
    else:
        m, e = man | (1 << mlen), exp - bias - mlen
    if fmt == "ieee64":
        return "%.17g" % struct.unpack("<d" if byteorder == "little" else ">d", data[:8])[0]
    if fmt == "ieee32":
        return "%.9g" % struct.unpack("<f" if byteorder == "little" else ">f", data[:4])[0]
    num, den = (m << e, 1) if e >= 0 else (m, 1 << -e)
    return _g(num, den, prec, neg)


def _ibm128(data, byteorder):
    """IBM's double-double (Power's long double): the sum of two doubles rounded to twice a
    double's precision (106 bits, to nearest: GDB's MPFR conversion, floatformat_precision),
    printed as GDB does with 33 significant digits; the high double (the first) alone says
    whether it is inf or nan."""
    from fractions import Fraction      # (floats only: not every session)
    hi, lo = struct.unpack("<dd" if byteorder == "little" else ">dd", bytes(data[:16]))
    if hi != hi or hi in (float("inf"), float("-inf")):
        return format_float(data[:8], "ieee64", byteorder)
    num, den = (Fraction(hi) + Fraction(lo)).as_integer_ratio()
    neg = num < 0 or (num == 0 and str(hi).startswith("-"))
    if num:
        num, den = _round_bits(abs(num), den, 106)
    return _g(abs(num), den, 33, neg)


def _round_bits(num, den, bits):
    """num/den (> 0) rounded to ``bits`` significant bits, to nearest with ties to even
    (MPFR's RNDN), as (numerator, denominator)."""
    e = num.bit_length() - den.bit_length()            # 2**(e-1) < num/den < 2**(e+1)
    if (num << max(0, -e)) < (den << max(0, e)):       # num/den < 2**e
        e -= 1
    shift = bits - 1 - e                               # the mantissa: bits bits
    n2, d2 = (num << shift, den) if shift >= 0 else (num, den << -shift)
    q, r = divmod(n2, d2)
    if 2 * r > d2 or (2 * r == d2 and q & 1):
        q += 1
    return (q, 1 << shift) if shift >= 0 else (q << -shift, 1)
