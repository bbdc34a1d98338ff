"""DW_TAG, DW_AT and DW_LANG numbers the DWARF readers use (DWARF 5, section 7)."""

# DW_TAG
TAG_compile_unit = 0x11
TAG_partial_unit = 0x3c
TAG_skeleton_unit = 0x4a
TAG_subprogram = 0x2e
TAG_namespace = 0x39
TAG_class_type = 0x02
TAG_structure_type = 0x13
TAG_union_type = 0x17
TAG_enumeration_type = 0x04
TAG_lexical_block = 0x0b
TAG_interface_type = 0x38
SCOPE_TAGS = frozenset((TAG_namespace, TAG_class_type, TAG_structure_type, TAG_union_type,
                         TAG_enumeration_type, TAG_interface_type))
#: The DIEs a unit's function scan decodes: functions, and the scopes that qualify their
#: names (a lexical block is none: a name is qualified past it, as if it were not there).
RECORD_TAGS = SCOPE_TAGS | {TAG_subprogram}

# DW_AT
AT_sibling = 0x01
AT_name = 0x03
AT_stmt_list = 0x10
AT_low_pc = 0x11
AT_high_pc = 0x12
AT_language = 0x13
AT_comp_dir = 0x1b
AT_abstract_origin = 0x31
AT_declaration = 0x3c
AT_specification = 0x47
AT_ranges = 0x55
AT_linkage_name = 0x6e
AT_MIPS_linkage_name = 0x2007
AT_str_offsets_base = 0x72
AT_addr_base = 0x73
AT_rnglists_base = 0x74
AT_GNU_addr_base = 0x2133
AT_GNU_ranges_base = 0x2132
AT_dwo_name = 0x76
AT_GNU_dwo_name = 0x2130
AT_GNU_dwo_id = 0x2131

LANG_rust = 0x1c
LANG_asm = 0x8001        # DW_LANG_Mips_Assembler, what gas emits for .S files
CPP_LANGS = frozenset((0x04, 0x1a, 0x21, 0x2b, 0x2c, 0x33))   # C++, C++03, C++11, C++14, C++17, C++20

DIE_ATTRS_TOP = frozenset((AT_name, AT_stmt_list, AT_low_pc, AT_high_pc, AT_language, AT_comp_dir,
                            AT_ranges, AT_str_offsets_base, AT_addr_base, AT_rnglists_base,
                            AT_GNU_addr_base, AT_dwo_name, AT_GNU_dwo_name, AT_GNU_dwo_id,
                            AT_GNU_ranges_base))
DIE_ATTRS_FUNC = frozenset((AT_name, AT_low_pc, AT_high_pc, AT_ranges, AT_linkage_name,
                             AT_MIPS_linkage_name, AT_specification, AT_abstract_origin,
                             AT_declaration, AT_sibling))

TAG_array_type = 0x01
TAG_formal_parameter = 0x05
TAG_pointer_type = 0x0f
TAG_reference_type = 0x10
TAG_subroutine_type = 0x15
TAG_typedef = 0x16
TAG_unspecified_parameters = 0x18
TAG_ptr_to_member_type = 0x1f
TAG_subrange_type = 0x21
TAG_base_type = 0x24
TAG_const_type = 0x26
TAG_volatile_type = 0x35
TAG_restrict_type = 0x37
TAG_unspecified_type = 0x3b
TAG_rvalue_reference_type = 0x42
TAG_atomic_type = 0x47
TAG_template_type_param = 0x2f
AT_type = 0x49
AT_artificial = 0x34
AT_upper_bound = 0x2f
AT_count = 0x37
AT_containing_type = 0x1d
AT_signature = 0x69
AT_object_pointer = 0x64
