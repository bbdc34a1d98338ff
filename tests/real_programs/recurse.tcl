# Tcl sample: a recursive proc, called in a loop forever.
proc f {n} {
    if {$n == 0} {
        set s 0
        for {set i 0} {$i < 200} {incr i} { incr s [expr {$i * $i}] }
        return $s
    }
    return [expr {[f [expr {$n - 1}]] + 1}]
}
while 1 { f 300 }
