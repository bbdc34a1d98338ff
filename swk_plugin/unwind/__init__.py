"""Unwind services: what every stepper and unwinder hook needs of a target.

modules.py  the library, module, function and mapping at an address
cfi.py      a module's CFI tables and the UnwindRule they give at a pc
apply.py    applying an UnwindRule to a frame: its caller
"""
