// Node sample: a recursive function called in a loop, warm enough that V8's
// JIT (Sparkplug/Maglev/TurboFan) compiles it: its frames are then code in
// anonymous mappings, with neither symbols nor CFI.
'use strict';
function fib(n) {
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}
function deep(n, acc) {
  if (n === 0) return fib(18) + acc;
  return deep(n - 1, (acc * 31 + n) | 0) ^ 1;
}
let sink = 0;
for (;;) {
  sink = (sink + deep(200, sink)) | 0;
}
