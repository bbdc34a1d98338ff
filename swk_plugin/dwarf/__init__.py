"""DWARF readers swk needs for unwinding: call frame information and expressions."""
