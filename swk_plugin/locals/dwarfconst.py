"""The DWARF tag, attribute and encoding numbers the locals engine reads."""

# DW_TAG
TAG_array_type = 0x01
TAG_class_type = 0x02
TAG_enumeration_type = 0x04
TAG_formal_parameter = 0x05
TAG_imported_declaration = 0x08
TAG_label = 0x0a
TAG_lexical_block = 0x0b
TAG_member = 0x0d
TAG_pointer_type = 0x0f
TAG_reference_type = 0x10
TAG_compile_unit = 0x11
TAG_structure_type = 0x13
TAG_subroutine_type = 0x15
TAG_typedef = 0x16
TAG_union_type = 0x17
TAG_unspecified_parameters = 0x18
TAG_inheritance = 0x1c
TAG_inlined_subroutine = 0x1d
TAG_ptr_to_member_type = 0x1f
TAG_subrange_type = 0x21
TAG_base_type = 0x24
TAG_catch_block = 0x25
TAG_const_type = 0x26
TAG_enumerator = 0x28
TAG_subprogram = 0x2e
TAG_template_type_param = 0x2f
TAG_template_value_param = 0x30
TAG_try_block = 0x32
TAG_variable = 0x34
TAG_volatile_type = 0x35
TAG_restrict_type = 0x37
TAG_namespace = 0x39
TAG_imported_module = 0x3a
TAG_unspecified_type = 0x3b
TAG_rvalue_reference_type = 0x42
TAG_generic_subrange = 0x45
TAG_atomic_type = 0x47
TAG_call_site = 0x48
TAG_call_site_parameter = 0x49
TAG_GNU_call_site = 0x4109
TAG_GNU_call_site_parameter = 0x410a

# DW_AT
AT_location = 0x02
AT_name = 0x03
AT_byte_size = 0x0b
AT_bit_offset = 0x0c
AT_bit_size = 0x0d
AT_low_pc = 0x11
AT_high_pc = 0x12
AT_language = 0x13
AT_const_value = 0x1c
AT_containing_type = 0x1d
AT_lower_bound = 0x22
AT_prototyped = 0x27
AT_upper_bound = 0x2f
AT_abstract_origin = 0x31
AT_artificial = 0x34
AT_count = 0x37
AT_data_member_location = 0x38
AT_declaration = 0x3c
AT_encoding = 0x3e
AT_external = 0x3f
AT_frame_base = 0x40
AT_specification = 0x47
AT_type = 0x49
AT_virtuality = 0x4c
AT_entry_pc = 0x52
AT_ranges = 0x55
AT_call_file = 0x58
AT_call_line = 0x59
AT_object_pointer = 0x64
AT_signature = 0x69
AT_data_bit_offset = 0x6b
AT_enum_class = 0x6d
AT_linkage_name = 0x6e
AT_call_return_pc = 0x7d
AT_call_value = 0x7e
AT_call_origin = 0x7f
AT_call_pc = 0x81
AT_call_tail_call = 0x82
AT_call_target = 0x83
AT_call_data_value = 0x86
AT_loclists_base = 0x8c
AT_MIPS_linkage_name = 0x2007
AT_GNU_vector = 0x2107
AT_GNU_call_site_value = 0x2111
AT_GNU_call_site_data_value = 0x2112
AT_GNU_call_site_target = 0x2113
AT_GNU_tail_call = 0x2115

# DW_ATE
ATE_address = 0x1
ATE_boolean = 0x2
ATE_complex_float = 0x3
ATE_float = 0x4
ATE_signed = 0x5
ATE_signed_char = 0x6
ATE_unsigned = 0x7
ATE_unsigned_char = 0x8
ATE_decimal_float = 0xf
ATE_UTF = 0x10

# DW_FORM classes used to tell a location list from an expression
FORM_exprloc = 0x18
FORM_block_forms = frozenset((0x09, 0x0a, 0x03, 0x04, 0x18))
FORM_loclistx = 0x22
FORM_sec_offset = 0x17

LANG_CPP = frozenset((0x04, 0x1a, 0x21, 0x2b, 0x2c, 0x33))

#: Opcodes of DWARF 5's typed-stack operations (and their GNU forms).
TYPED_OPS = frozenset((0xa4, 0xa5, 0xa6, 0xa8, 0xa9, 0xf4, 0xf5, 0xf6, 0xf7, 0xf9))
