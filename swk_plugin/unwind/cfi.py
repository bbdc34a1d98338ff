"""DWARF call-frame information of a module, as UnwindRules per pc.

CFI comes from the module's .eh_frame (searched through .eh_frame_hdr) and
from .debug_frame — the module's own or its separate debug file's, inflated
when compressed.  A rule found for a pc is kept in the module's cache, so a
pc walked twice costs one dictionary lookup.
"""
from ..arch import UnsupportedArchitecture, from_elf_machine
from ..dwarf.cfi import CfiError, CfiTable
from ..elf.debugfile import attach_debug_file
from ..errors import BadFileError
from ..rule import RULE_UNDEFINED, UnwindRule
from .modules import module_at

#: Rules remembered per module (a memo: it starts over past this many pcs).
RULES_PER_MODULE = 1 << 16


def module_cfi(module):
    """The module's CFI tables, [eh_frame, debug_frame] (either may be missing)."""
    return module.cache.value("cfi", lambda: _tables(module))


def _architecture(module):
    """The module's Architecture (by machine, class and byte order), or None."""
    try:
        return from_elf_machine(module.machine, module.elfclass, module.byteorder)
    except UnsupportedArchitecture:
        return None


def _renumbering(module):
    """{is .eh_frame: {column: DWARF number}} of the module's architecture (Power's GCC
    numbers some registers its own way in CFI), or {}."""
    arch = _architecture(module)
    return arch.cfi_renumber if arch is not None else {}


def _with_undefined(module, rule):
    """``rule`` with the architecture's ``cfi_undefined`` registers it gives no rule for marked
    undefined (Power: the volatile registers, as GDB's DWARF unwinder takes them), shared per
    rule; ``rule`` itself where the architecture has none."""
    undefined = module.cache.value("cfi-undefined", lambda: _undefined_of(module))
    if not undefined:
        return rule
    memo = module.cache.memo("cfi-undefined-rules", RULES_PER_MODULE)
    key = id(rule)
    got = memo.get(key)
    if got is None or got[0] is not rule:
        regs = dict(rule.regs)
        for r in undefined:
            regs.setdefault(r, RULE_UNDEFINED)
        got = memo.put(key, (rule, UnwindRule(rule.address, rule.cfa, regs, rule.signal_frame, rule.ra_reg,
                                               rule.ra_signed)))
    return got[1]


def _undefined_of(module):
    arch = _architecture(module)
    return arch.cfi_undefined if arch is not None else frozenset()


def _tables(module):
    tables = []
    renumber = _renumbering(module)
    eh = module.section(".eh_frame")
    if eh is not None and eh.size:
        hdr = module.section(".eh_frame_hdr")
        try:
            tables.append(CfiTable.from_eh_frame(eh.data, eh.addr, hdr.data if hdr else None,
                                                 hdr.addr if hdr else None, ptr_size=module.ptr_size,
                                                 renumber=renumber.get(True), byteorder=module.byteorder))
        except (CfiError, BadFileError):   # unreadable CFI: the other steppers still work
            pass
    for mod in (module, _debug_file(module)):
        if mod is None:
            continue
        df = mod.section(".debug_frame")
        if df is not None and df.size:
            try:
                tables.append(CfiTable.from_debug_frame(df.data, 0, ptr_size=module.ptr_size,
                                                        renumber=renumber.get(False), byteorder=mod.byteorder))
            except (CfiError, BadFileError):
                pass
            break
    return tables


def _debug_file(module):
    try:
        return attach_debug_file(module)
    except Exception:   # an unreadable debug file costs only its .debug_frame
        return None


def cfi_rule_at(module, addr):
    """The UnwindRule CFI gives at unbiased ``addr``, or None: from the FDE GDB takes
    (its dwarf2_frame_find_fde over one table of both sections, sorted by start with
    .debug_frame's entries before .eh_frame's, duplicates dropped): the covering FDE that
    starts last, the .debug_frame one where both start at the same address."""
    memo = module.cache.memo("cfi-rules", RULES_PER_MODULE)
    rule = memo.get(addr, memo)
    if rule is memo:
        rule = memo.put(addr, _rule_at(module, addr))
    return rule


def _rule_at(module, addr):
    best = best_key = None
    for table in module_cfi(module):
        try:
            fde = table.find_fde(addr)
            rule = table.row_at(addr) if fde is not None else None
        except CfiError:
            continue
        if rule is None:
            continue
        key = (fde.pc_begin, not table.is_eh)
        if best_key is None or key > best_key:
            best, best_key = rule, key
    return _with_undefined(module, best) if best is not None else None


def cfi_function_start(module, addr):
    """Where the function holding unbiased ``addr`` starts as the CFI bounds it (the covering
    FDE that starts last, as cfi_rule_at takes), or None: a name for code without a symbol."""
    best = None
    for table in module_cfi(module):
        try:
            fde = table.find_fde(addr)
        except CfiError:
            continue
        if fde is not None and (best is None or fde.pc_begin > best):
            best = fde.pc_begin
    return best


def cfi_covers(ps, pc):
    """Whether the CFI of the module holding ``pc`` has a row for it."""
    lib, mod = module_at(ps, pc)
    return mod is not None and cfi_rule_at(mod, pc - lib.base) is not None
