"""Values printed by LLDB itself: swk found where a variable is, LLDB knows its type and
its data formatters (std::vector's ``size=3 {...}``, std::string's summary, a user's own).

For a struct or class value swk has read completely, the variable's SBType is taken
from LLDB's blocks at the frame's pc, and LLDB is given the value: at its address when
it is in memory, as bytes when it is not.  Only where LLDB has a summary or a synthetic
child provider for it is LLDB's text used, written on one line as ``frame variable``
prints it; a frame line takes LLDB's summary alone, as LLDB's own frame lines do.
"""
import lldb


def _scope_block(target, pc, depth):
    addr = target.ResolveLoadAddress(pc)
    sc = target.ResolveSymbolContextForAddress(addr, lldb.eSymbolContextBlock)
    block = sc.GetBlock()
    while block.IsValid() and depth > 0:
        if block.IsInlined():
            depth -= 1
        block = block.GetParent()
    return block


def find_type(target, pc, depth, name, is_param):
    """The SBType of variable ``name`` in the scope ``depth`` inlined calls out at pc."""
    block = _scope_block(target, pc, depth)
    while block.IsValid():
        values = block.GetVariables(target, is_param, not is_param, not is_param)
        for i in range(values.GetSize()):
            v = values.GetValueAtIndex(i)
            if v.GetName() == name:
                return v.GetType()
        if block.IsInlined():          # the top of an inlined call's scope
            return None
        block = block.GetParent()        # invalid past the function's own block
    return None


def _has_formatter(value):
    return value.GetTypeSummary().IsValid() or value.GetTypeSynthetic().IsValid() or value.IsSynthetic()


def one_line(value):
    """``frame variable``'s text of a value after "(type) name = ", on one line."""
    stream = lldb.SBStream()
    value.GetDescription(stream)
    text = stream.GetData() or ""
    head = f") {value.GetName()} = "
    cut = text.find(head)
    if cut >= 0:
        text = text[cut + len(head):]
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


class LldbValuePrinter:
    """Walker.value_printer inside LLDB."""

    def __init__(self, target):
        self.target = target

    def __call__(self, req):
        target = self.target
        t = find_type(target, req.pc, req.scope_depth, req.var.name, req.var.is_param)
        if t is None or not t.IsValid():
            return None
        vv = req.value
        if vv.address is not None:
            value = target.CreateValueFromAddress(req.var.name, lldb.SBAddress(vv.address, target), t)
        else:
            if len(vv.data) != t.GetByteSize():
                return None
            data = lldb.SBData.CreateDataFromUInt8Array(target.GetByteOrder(), target.GetAddressByteSize(),
                                                        list(vv.data))
            value = target.CreateValueFromData(req.var.name, data, t)
        if not value.IsValid() or not _has_formatter(value):
            return None
        if req.summary:
            return value.GetSummary() or None
        return one_line(value) or None
