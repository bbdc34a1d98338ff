"""Local variables and inline scopes from DWARF, printed the way GDB prints them
(spec: "Accessing Local Variables").

    function_at(module, addr)        -> Function | None    (spec getFunctionForFrame)
    scopes_at(module, addr)          -> [Scope]            innermost inline first, the function last
    frame_variables(scope, addr)     -> (args, locals)     ``info args`` / ``info locals`` order
    FrameVariables.of_level(walk, level) / FrameVariables(addr, regs, cfa, read_mem, bias, ...)
                                     what a variable's value needs from its frame: a walk's level,
                                     or the values themselves
    read_variable(var, frame_vars)   -> VarValue
    format_value(vv, read_mem, symbolize=None, summary=False) -> str   GDB 13's text for the value
                                                     (read in the target's byte order, vv.byteorder)
    type_name(type)                  -> str                GDB's ``whatis`` name
    call_site_entry_regs(module, caller_vars, ...) -> {regno: value}  entry values from the caller's
                                     call site, computed in the caller's FrameVariables
    make_symbolizer(libraries)       -> addr -> "sym+off"  GDB's <symbol> for pointers, process-wide

The spec's getLocalVariableValue return codes are here too (SUCCESS, EPARAM, EOUTOFSCOPE,
EBUFFERSIZE, EUNKNOWN), for the walker that implements it with read_variable.

Addresses given to and returned by the DWARF side are the module's own (unbiased);
``bias`` (the library's load bias) is only applied to what is read from the target.
Nothing here imports gdb or lldb.
"""
from .scopes import Function, Scope, Variable, function_at, scopes_at, frame_variables, engine_for
from .types import Type, Field, type_name
from .locations import VarValue, read_variable
from .entry import call_site_entry_regs
from .frames import FrameVariables
from .symbolize import make_symbolizer, module_symbolizer
from .plans import int_on_cfa_plan, var_plans
from .format import format_value, format_float

# spec: getLocalVariableValue's return codes (glvv_*)
SUCCESS = 0
EPARAM = -1
EOUTOFSCOPE = -2
EBUFFERSIZE = -3
EUNKNOWN = -4

__all__ = ["SUCCESS", "EPARAM", "EOUTOFSCOPE", "EBUFFERSIZE", "EUNKNOWN",
           "int_on_cfa_plan", "function_at", "scopes_at", "frame_variables", "FrameVariables", "read_variable",
           "format_value",
           "type_name", "call_site_entry_regs", "make_symbolizer", "module_symbolizer",
           "Function", "Scope", "Variable", "VarValue", "Type", "Field", "format_float",
           "engine_for", "var_plans"]
