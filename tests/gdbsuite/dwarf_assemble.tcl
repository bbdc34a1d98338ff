# Builds a program of GDB's testsuite whose DWARF its .exp generates with GDB's Tcl DWARF
# assembler (Dwarf::assemble, lib/dwarf.exp), without DejaGnu, and writes down what the .exp
# then does with GDB (tests/gdbsuite/assembled.py replays it with swk-bt beside GDB's bt).
#
#   tclsh dwarf_assemble.tcl TESTSUITE SUBDIR NAME OUTDIR GDB RECIPE
#
# TESTSUITE is gdb/testsuite of GDB's source (lib/dwarf.exp is sourced from it, and its
# ../../include/dwarf2.{h,def} give the DWARF constants), NAME the .exp's name without .exp,
# OUTDIR where everything is written (standard_output_file), GDB the debugger that answers
# the assembler's questions (function addresses and lengths, type sizes), RECIPE the file the
# result goes to.
#
# The .exp itself is sourced: only the procs of DejaGnu and of lib/gdb.exp it calls are
# defined here (this file's own, much smaller versions).  Until the .exp builds a program from
# assembler output the procs talk to a live GDB ("live" mode: the sessions the .exp uses to ask
# GDB about its C code); from that build on they write the GDB commands the .exp would send
# into the recipe instead ("record" mode), since swk is compared with GDB there, not here.
# The recipe's lines:
#
#   variant EXE          a program built from assembler output (a .exp may loop over variants)
#   session EXE          a new GDB session (clean_restart) on EXE ("" when none is loaded yet)
#   cmd COMMAND          a command the .exp sends to GDB in that session
#   note TEXT            something the recording could not follow (a reply it did not see)
#   done                 the .exp ran to its end
#   error TEXT           the .exp failed here (a proc this file lacks, a build that failed ...)
#
# A command the .exp answers "n" to (gdb_test's question/response) is left out; the actions
# of gdb_test_multiple, which depend on GDB's reply, are not run in record mode (the recipe
# says so with a note).

lassign $argv srcdir subdir gdb_test_file_name ::_swk_outdir ::_swk_gdb ::_swk_recipe_path
set objdir $::_swk_outdir
set hex "0x\[0-9A-Fa-f\]+"
set decimal "\[0-9\]+"
set gdb_prompt "\[(\]gdb\[)\]"
set inferior_exited_re "(?:\\\[Inferior \[0-9\]+ \\(process \[0-9\]+\\) exited)"
set timeout 60
set use_gdb_stub 0

set ::_swk_mode live          ;# live | record
set ::_swk_gdbfd ""           ;# the live GDB's pipe
set ::_swk_derived {}         ;# files made from the assembler's output
set ::_swk_last_exe ""
set ::_swk_in_session 0
file mkdir $::_swk_outdir
set ::_swk_recipe [open $::_swk_recipe_path.tmp w]

proc _swk_out {kind text} {
    puts $::_swk_recipe "$kind $text"
    flush $::_swk_recipe
}

# --- DejaGnu's reporting: nothing to report here -------------------------------------------

proc verbose {args} {}
proc pass {args} {}
proc fail {args} {}
proc xfail {args} {}
proc kfail {args} {}
proc kpass {args} {}
proc xpass {args} {}
proc setup_xfail {args} {}
proc setup_kfail {args} {}
proc untested {args} { _swk_out note "untested: [join $args]" }
proc unsupported {args} { _swk_out note "unsupported: [join $args]" }
proc unresolved {args} {}
proc note {args} {}
proc perror {args} { _swk_out note "perror: [join $args]" }
proc warning {args} {}
proc load_lib {name} {
    global srcdir
    if {$name eq "dwarf.exp"} {
        uplevel #0 [list source [file join $srcdir lib dwarf.exp]]
        _swk_after_dwarf_exp
    }
}

# --- the target: native x86-64 GNU/Linux, gcc ----------------------------------------------

set ::_swk_triplet x86_64-pc-linux-gnu
proc istarget {pat} { string match $pat $::_swk_triplet }
proc ishost {pat} { string match $pat $::_swk_triplet }
proc isnative {} { return 1 }
proc is_remote {which} { return 0 }
proc is_64_target {} { return 1 }
proc is_ilp32_target {} { return 0 }
proc is_lp64_target {} { return 1 }
proc is_amd64_regs_target {} { return 1 }
proc is_x86_like_target {} { return 0 }
proc is_x86_64_m64_target {} { return 1 }
proc is_aarch64_target {} { return 0 }
proc is_aarch32_target {} { return 0 }
proc is_c_compiler_gcc {} { return 1 }
proc test_compiler_info {{compiler ""} {language ""}} {
    if {$compiler eq ""} { return gcc-12-2-0 }
    string match $compiler gcc-12-2-0
}
proc readnow {args} { return 0 }
proc skip_shlib_tests {} { return 0 }
proc skip_python_tests {} { return 0 }
proc allow_python_tests {} { return 1 }
proc use_gdb_stub {} { return 0 }
proc target_info {what args} { return 0 }
proc gdb_target_symbol_prefix {} { return "" }
proc gdb_target_symbol {sym} { return $sym }
proc gdb_find_objcopy {} { return objcopy }
proc require {fn args} {
    if {[llength $args] == 1} {
        set op ==
        set val [lindex $args 0]
    } elseif {[llength $args] == 2} {
        lassign $args op val
    } else {
        set op !=
        set val 0
    }
    if {![expr [list [uplevel 1 $fn]] $op [list $val]]} {
        _swk_out note "requirement not met: $fn"
        return -code return
    }
}

# --- small utilities of lib/gdb.exp, written anew -----------------------------------------

proc string_to_regexp {str} {
    regsub -all {[]\\*+?.^$(){}[|]} $str {\\&}
}
proc multi_line {args} { join $args "\r\n" }
proc multi_line_input {args} { join $args "\n" }
proc gdb_assert {cond args} { return 1 }
proc with_test_prefix {prefix body} { uplevel 1 $body }
proc foreach_with_prefix {var list body} {
    upvar 1 $var v
    foreach v $list {
        set code [catch {uplevel 1 $body} result]
        if {$code == 1} {
            return -code error -errorinfo $::errorInfo $result
        } elseif {$code == 2} {
            return -code return $result
        } elseif {$code == 3} {
            break
        }
    }
}
proc proc_with_prefix {name arguments body} { uplevel 1 [list proc $name $arguments $body] }

# OPTIONSET: {name default} pairs (or a bare name: a flag); the caller's "options" list holds
# name value pairs.  Each name becomes a variable of the caller, its value substituted there.
proc parse_options {optionset} {
    upvar 1 options opts
    foreach spec $optionset {
        set name [string trim [lindex $spec 0]]
        set at [lsearch -exact $opts $name]
        if {[llength $spec] == 1} {
            set value [expr {$at >= 0}]
            if {$at >= 0} { set opts [lreplace $opts $at $at] }
        } else {
            if {$at >= 0} {
                set value [uplevel 2 [list subst [lindex $opts [expr {$at + 1}]]]]
                set opts [lreplace $opts $at [expr {$at + 1}]]
            } else {
                set value [uplevel 1 [list subst [lindex $spec 1]]]
            }
        }
        uplevel 1 [list set $name $value]
    }
    if {[llength $opts] != 0} { error "options not understood: $opts" }
}

proc with_override {name override body} {
    set saved ""
    if {[info procs $name] ne ""} {
        set saved [list [info args $name] [info body $name]]
    }
    proc $name [info args $override] [info body $override]
    set code [catch {uplevel 1 $body} result]
    if {$saved ne ""} {
        proc $name {*}$saved
    } else {
        rename $name ""
    }
    if {$code == 1} { return -code error -errorinfo $::errorInfo $result }
    return -code $code $result
}

# --- files --------------------------------------------------------------------------------

proc standard_output_file {basename} {
    file mkdir $::_swk_outdir
    return [file join $::_swk_outdir $basename]
}
proc standard_temp_file {basename} {
    file mkdir [file join $::_swk_outdir temp]
    return [file join $::_swk_outdir temp $basename]
}
proc standard_testfile {args} {
    global gdb_test_file_name testfile binfile
    set testfile $gdb_test_file_name
    set binfile [standard_output_file $testfile]
    if {[llength $args] == 0} { set args .c }
    set suffix ""
    foreach arg $args {
        if {$arg eq ""} {
            set arg $testfile.c
        } elseif {[string index $arg 0] in {. -}} {
            set arg $testfile$arg
        }
        uplevel #0 [list set srcfile$suffix $arg]
        set suffix [expr {$suffix eq "" ? 2 : $suffix + 1}]
    }
}
proc _swk_src {file} {
    if {[file pathtype $file] eq "absolute"} { return $file }
    return [file join $::srcdir $::subdir $file]
}
proc gdb_get_line_number {text {file ""}} {
    if {$file eq ""} { set file $::srcfile }
    set fd [open [_swk_src $file]]
    set n 0
    while {[gets $fd line] >= 0} {
        incr n
        if {[string first $text $line] >= 0} {
            close $fd
            return $n
        }
    }
    close $fd
    error "gdb_get_line_number: \"$text\" is not in $file"
}
proc remote_exec {where cmd args} {
    set rc [catch {exec {*}$cmd 2>@1} out]
    return [list $rc $out]
}
proc remote_file {where op args} {
    if {$op eq "delete"} { file delete -force {*}$args }
    return ""
}
proc remote_download {where from {to ""}} {
    if {$to eq ""} { set to [standard_output_file [file tail $from]] }
    file copy -force $from $to
    return $to
}

# --- building (gcc, as lib/gdb.exp's gdb_compile drives it on a native GNU/Linux host) ------

proc _swk_is_derived {file} {
    if {[lsearch -exact $::_swk_derived $file] >= 0} { return 1 }
    # the assembler's output: an assembly file in the output directory
    expr {[string match $::_swk_outdir/* $file] && [file extension $file] in {.S .s}}
}

# What lib/gdb.exp's gdb_compile passes gcc for OPTIONS (those the testsuite's C programs use):
# "" when it built, else the compiler's complaint.
proc gdb_compile {source dest type options} {
    set cc gcc
    set early {-fno-stack-protector -fdiagnostics-color=never}
    set flags {}
    set ldflags {}
    set libs {}
    set inputs {}
    set shlib 0
    foreach src $source { lappend inputs [_swk_src $src] }
    foreach opt $options {
        switch -glob -- $opt {
            debug { lappend flags -g }
            nodebug - quiet - split-dwo - build-id - nowarnings - getting_compiler_info {}
            c++ { set cc g++ }
            c { }
            macros { lappend flags -g3 }
            pie { lappend flags -fPIE; lappend ldflags -pie }
            nopie { lappend flags -fno-pie; lappend ldflags -no-pie }
            additional_flags=* { lappend flags {*}[string range $opt 17 end] }
            optimize=* { lappend flags {*}[string range $opt 9 end] }
            early_flags=* { lappend early {*}[string range $opt 12 end] }
            ldflags=* { lappend ldflags {*}[string range $opt 8 end] }
            libs=* { lappend libs {*}[string range $opt 5 end] }
            incdir=* { lappend flags -I[string range $opt 7 end] }
            shlib=* {
                if {$type eq "executable"} {
                    lappend inputs [string range $opt 6 end]
                    set shlib 1
                }
            }
            default { return "gdb_compile option $opt is not handled by the shim" }
        }
    }
    if {$shlib} {
        lappend early -Wl,--no-as-needed
        lappend ldflags {-Wl,-rpath,$ORIGIN}
    }
    switch -- $type {
        executable { set argv [list $cc {*}$early {*}$inputs {*}$flags {*}$ldflags {*}$libs -o $dest] }
        object { set argv [list $cc {*}$early -c {*}$inputs {*}$flags -o $dest] }
        preprocess { set argv [list $cc {*}$early -E {*}$inputs {*}$flags -o $dest] }
        assembly { set argv [list $cc {*}$early -S {*}$inputs {*}$flags -o $dest] }
        default { return "gdb_compile type $type is not handled by the shim" }
    }
    file mkdir [file dirname $dest]
    if {[catch {exec {*}$argv 2>@1} out]} {
        _swk_out note "build failed: $argv: $out"
        return "$out"
    }
    set derived 0
    foreach src $inputs {
        if {[_swk_is_derived $src]} { set derived 1 }
    }
    if {$derived} { lappend ::_swk_derived $dest }
    if {$type eq "executable"} {
        set ::_swk_last_exe $dest
        _swk_built $dest $derived
    }
    return ""
}

proc gdb_compile_shlib {sources dest options} {
    set objects {}
    foreach src $sources {
        set src [_swk_src $src]
        if {[file extension $src] eq ".o"} {
            lappend objects $src
            continue
        }
        set obj [file join [file dirname $dest] [file tail $src].o]
        set err [gdb_compile $src $obj object [concat $options additional_flags=-fpic]]
        if {$err ne ""} { return $err }
        lappend objects $obj
    }
    set cc gcc
    set link {}
    foreach opt $options {
        switch -glob -- $opt {
            c++ { set cc g++ }
            ldflags=* { lappend link {*}[string range $opt 8 end] }
            libs=* { lappend link {*}[string range $opt 5 end] }
        }
    }
    set argv [list $cc -shared {*}$objects {*}$link -o $dest]
    if {[catch {exec {*}$argv 2>@1} out]} {
        _swk_out note "build failed: $argv: $out"
        return $out
    }
    set derived 0
    foreach obj $objects {
        if {[_swk_is_derived $obj]} { set derived 1 }
    }
    if {$derived} {
        lappend ::_swk_derived $dest
        _swk_built $::_swk_last_exe 1
    }
    return ""
}

# A program was linked: from the assembler's output (a variant of the recipe: record from here
# on) or not (a program the .exp asks GDB about: live from here on).
proc _swk_built {exe derived} {
    if {$derived} {
        gdb_exit
        set ::_swk_mode record
        set ::_swk_in_session 0
        _swk_out variant $exe
    } else {
        set ::_swk_mode live
    }
}

proc build_executable {testname executable {sources ""} {options {debug}}} {
    if {[llength $sources] == 0} { set sources $executable.c }
    if {[file pathtype $executable] ne "absolute"} {
        set executable [standard_output_file $executable]
    }
    if {[gdb_compile $sources $executable executable $options] ne ""} { return -1 }
    return 0
}
proc prepare_for_testing {testname executable {sources ""} {options {debug}}} {
    if {[build_executable $testname $executable $sources $options] == -1} { return -1 }
    clean_restart $executable
    return 0
}

# --- GDB: a live session before the program under test is built, a recording after -------

proc _swk_gdb_send {command} {
    if {$::_swk_gdbfd eq ""} { gdb_start }
    set fd $::_swk_gdbfd
    puts $fd $command
    puts $fd "echo \\n@@SWK-DONE@@\\n"
    flush $fd
    set out {}
    while {[gets $fd line] >= 0} {
        regsub {^(?:\(gdb\) )+} $line {} line         ;# its prompts (stdin is no terminal)
        if {$line eq "@@SWK-DONE@@"} {
            while {[llength $out] && [lindex $out end] eq ""} { set out [lrange $out 0 end-1] }
            return [join $out "\r\n"]
        }
        lappend out $line
    }
    error "GDB exited during \"$command\": [join $out \n]"
}

proc gdb_exit {} {
    if {$::_swk_gdbfd ne ""} {
        catch {puts $::_swk_gdbfd "kill"; puts $::_swk_gdbfd "quit"; flush $::_swk_gdbfd}
        catch {close $::_swk_gdbfd}
        set ::_swk_gdbfd ""
    }
}
proc gdb_start {} {
    if {$::_swk_mode eq "record"} {
        _swk_out session ""
        set ::_swk_in_session 1
        return 0
    }
    gdb_exit
    set argv [list $::_swk_gdb -nx -q -ex "set width 0" -ex "set height 0" -ex "set pagination off" \
                  -ex "set confirm off"]
    set ::_swk_gdbfd [open "|[join [lmap a $argv {list $a}]] 2>@1" r+]
    fconfigure $::_swk_gdbfd -buffering line
    return 0
}
proc gdb_load {exe} {
    if {$::_swk_mode eq "record"} {
        if {!$::_swk_in_session} {
            _swk_out session $exe
            set ::_swk_in_session 1
        } else {
            _swk_cmd "file $exe"
        }
        return 0
    }
    _swk_gdb_send "file $exe"
    return 0
}
proc gdb_load_no_complaints {exe} { gdb_load $exe }
proc gdb_load_shlib {lib} { return $lib }
proc gdb_reinitialize_dir {dir} {}
proc clean_restart {args} {
    if {$::_swk_mode eq "record"} {
        set exe ""
        if {[llength $args]} {
            set exe [lindex $args 0]
            if {[file pathtype $exe] ne "absolute"} { set exe [standard_output_file $exe] }
        }
        _swk_out session $exe
        set ::_swk_in_session 1
        return 0
    }
    gdb_start
    if {[llength $args]} {
        set exe [lindex $args 0]
        if {[file pathtype $exe] ne "absolute"} { set exe [standard_output_file $exe] }
        gdb_load $exe
    }
    return 0
}

# A command the .exp sends: to the live GDB, or into the recipe.
proc _swk_cmd {command} {
    if {$command eq ""} { return "" }
    if {$::_swk_mode eq "record"} {
        if {!$::_swk_in_session} {
            _swk_out session $::_swk_last_exe
            set ::_swk_in_session 1
        }
        _swk_out cmd $command
        return ""
    }
    return [_swk_gdb_send $command]
}

proc gdb_test {command {pattern ""} {message ""} {question ""} {response ""}} {
    if {$question ne "" && ![string match {[yY]*} $response]} {
        return 0                    ;# the .exp declines what the command asks
    }
    _swk_cmd $command
    return 0
}
proc gdb_test_no_output {args} {
    set args [lsearch -all -inline -not -regexp $args {^-(nopass|prompt)$}]
    _swk_cmd [lindex $args 0]
    return 0
}
proc gdb_test_sequence {command args} { _swk_cmd $command; return 0 }
proc gdb_test_lines {command args} { _swk_cmd $command; return 0 }
proc gdb_test_multiple {command message args} {
    if {$::_swk_mode eq "live" && $command ne ""} {
        error "gdb_test_multiple \"$command\" in a live session: the shim does not read replies"
    }
    if {$command ne ""} {
        _swk_cmd $command
        _swk_out note "gdb_test_multiple \"$command\": its actions on GDB's reply are not followed"
    }
    return 0
}
proc send_gdb {string args} { _swk_cmd [string trimright $string "\n"] }
proc delete_breakpoints {} { _swk_cmd "delete" }
proc gdb_breakpoint {linespec args} {
    set cmd break
    if {"temporary" in $args} { set cmd tbreak }
    if {"qualified" in $args} { append cmd " -qualified" }
    _swk_cmd "$cmd $linespec"
    return 1
}
proc gdb_run_cmd {args} { _swk_cmd [string trim "run [join $args]"]; return 0 }
proc gdb_starti_cmd {args} { _swk_cmd [string trim "starti [join $args]"]; return 0 }
proc gdb_start_cmd {args} { _swk_cmd [string trim "start [join $args]"]; return 0 }
proc runto {linespec args} {
    delete_breakpoints
    gdb_breakpoint $linespec {*}$args
    gdb_run_cmd
    return 1
}
proc runto_main {} { return [runto main qualified] }
proc gdb_continue_to_breakpoint {name {location_pattern .*}} { _swk_cmd continue; return 0 }
proc gdb_continue_to_end {args} { _swk_cmd continue; return 0 }

# GDB's answers the assembler needs (get_sizeof, get_integer_valueof ... as lib/gdb.exp asks
# them: "print /d EXP"); in record mode there is no GDB to ask: the default.
proc get_integer_valueof {exp default {test ""}} {
    if {$::_swk_mode eq "record"} {
        _swk_out note "get_integer_valueof $exp: no GDB to ask while recording (took $default)"
        return $default
    }
    set out [_swk_gdb_send "print /d $exp"]
    if {[regexp {\$[0-9]+ = (-?[0-9]+)} $out -> val]} { return $val }
    return $default
}
proc get_hexadecimal_valueof {exp default {test ""}} {
    if {$::_swk_mode eq "record"} { return $default }
    set out [_swk_gdb_send "print /x $exp"]
    if {[regexp {\$[0-9]+ = (0x[0-9a-fA-F]+)} $out -> val]} { return $val }
    return $default
}
proc get_sizeof {type default {test ""}} { get_integer_valueof "sizeof ($type)" $default $test }

# dwarf.exp's function_range asks GDB three things of FUNC in a program built from SRC (or the
# shared session): FUNC_label's offset in FUNC, the offset of FUNC's last instruction (the last
# line of "disassemble"), and that instruction's length (the next address "x/2i" shows).  The
# same questions, read with this file's own patterns; the answer is dwarf.exp's form,
# {"FUNC_label - OFFSET" LENGTH}, so the assembly stays right wherever the linker puts FUNC.
proc _swk_after_dwarf_exp {} {
    proc ::function_range {func src {options {debug}}} {
        shared_gdb_start_use $src $options
        set out [_swk_gdb_send "p ${func}_label - ${func}"]
        if {![regexp { = ([0-9]+)\s*$} $out -> offset]} {
            error "function_range $func: GDB says: $out"
        }
        set out [_swk_gdb_send "disassemble $func"]
        set last ""
        foreach line [split [string map {"\r\n" "\n"} $out] "\n"] {
            if {[regexp {^(?:=>)?\s+0x[0-9a-f]+ <\+([0-9]+)>:} $line -> at]} { set last $at }
        }
        if {$last eq ""} { error "function_range $func: no disassembly: $out" }
        set out [_swk_gdb_send "with print asm-demangle on -- x/2i $func+$last"]
        set addrs [regexp -all -inline -line {^(?:=>)?\s+(0x[0-9a-f]+)} $out]
        if {[llength $addrs] < 4} { error "function_range $func: x/2i says: $out" }
        set length [expr {$last + [lindex $addrs 3] - [lindex $addrs 1]}]
        shared_gdb_end_use
        return [list "${func}_label - $offset" $length]
    }
}

# --- run the .exp ----------------------------------------------------------------------------

set code [catch {source [file join $srcdir $subdir $gdb_test_file_name.exp]} result]
gdb_exit
if {$code == 1} {
    _swk_out error [string map {"\n" " | "} $result]
    close $::_swk_recipe
    file rename -force $::_swk_recipe_path.tmp $::_swk_recipe_path
    puts stderr $::errorInfo
    exit 1
}
_swk_out done ""
close $::_swk_recipe
file rename -force $::_swk_recipe_path.tmp $::_swk_recipe_path
