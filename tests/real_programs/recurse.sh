# bash sample: shell-function recursion, in a loop forever.
f() {
    if [ "$1" -gt 0 ]; then
        f $(( $1 - 1 ))
    else
        s=0
        for i in 1 2 3 4 5 6 7 8 9 10; do s=$(( s + i * i )); done
    fi
}
while :; do f 150; done
