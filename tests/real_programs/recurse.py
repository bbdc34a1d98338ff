# CPython sample: Python recursion a few hundred deep, forever.  Every third
# level goes through C (sorted() calling its key function), so the C stack is
# deep too: _PyEval_EvalFrameDefault -> builtin sorted -> ... -> eval again.
import sys

sys.setrecursionlimit(100000)


def f(n):
    if n == 0:
        return sum(i * i for i in range(200))
    if n % 3 == 0:
        return sorted([n - 1], key=f)[0] and 1
    return f(n - 1) + 1


while True:
    f(300)
