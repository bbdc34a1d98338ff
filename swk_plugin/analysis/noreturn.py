"""Functions that never return: a call to one ends its path in the stack-height analysis.

These are C library and language runtime names, not instruction-set facts: the
analysis of every architecture asks ``is_noreturn_name`` about a call's target.
"""


#: Functions that never return: a call to them ends its path (the next bytes
#: belong to another block or function, whose state may differ).
NORETURN = frozenset({
    "abort", "exit", "_exit", "_Exit", "quick_exit", "__stack_chk_fail", "__stack_chk_fail_local",
    "__assert_fail", "__assert_perror_fail", "__assert", "__cxa_throw", "__cxa_rethrow",
    "__cxa_bad_cast", "__cxa_bad_typeid", "__cxa_pure_virtual", "__cxa_deleted_virtual",
    "__cxa_throw_bad_array_new_length", "__cxa_call_terminate", "_Unwind_Resume", "longjmp",
    "_longjmp", "siglongjmp", "__longjmp_chk", "pthread_exit", "__pthread_exit", "__fortify_fail",
    "__chk_fail", "err", "errx", "verr", "verrx", "__libc_fatal", "__libc_longjmp",
    "_ZSt9terminatev", "__f90_stop", "__gnat_last_chance_handler", "thrd_exit",
})


def is_noreturn_name(name):
    """Whether a (linkage) function name is one that never returns."""
    if name is None:
        return False
    name = name.split("@", 1)[0]
    return name in NORETURN or (name.startswith("_ZSt") and "__throw_" in name)


