// A JS program for swk's JIT tests (tests/test_jit_perfmap.py): a recursion N deep that
// blocks at its bottom in Atomics.wait (a native futex wait), after writing V8's own account
// of the stack (new Error().stack) to a file: the oracle of the JS functions' order.
// Warmed up first, so that `down` is compiled by the optimising tiers as well as interpreted.
'use strict';
const fs = require('fs');
const depth = Number(process.argv[2] || 20);
const out = process.argv[3];
let blocking = false;

function leaf(n) {
  if (!blocking) return n;
  Error.stackTraceLimit = Infinity;
  fs.writeFileSync(out + '.tmp', new Error().stack + '\n');
  fs.renameSync(out + '.tmp', out);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  return n;
}

function down(n) {
  if (n === 0) return leaf(n);
  return down(n - 1) + 1;
}

function warm(rounds) {
  let s = 0;
  for (let i = 0; i < rounds; i++) s += down(i % 30);
  return s;
}

function start() {
  warm(Number(process.argv[4] || 0));
  blocking = true;
  return down(depth);
}

start();
