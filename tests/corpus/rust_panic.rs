// A Rust program (rustc -g -O) whose thread panics on an out-of-bounds index: names GDB builds
// from DWARF for Rust frames (tests/test_gdb_exact.py, test_rust_names).
use std::thread;
#[inline(never)]
fn deep(v: &[u8], i: usize) -> u8 {
    if i == 0 { return v[v.len() + 1]; }
    deep(v, i - 1).wrapping_add(1)
}
fn main() {
    let h = thread::spawn(|| { let v = vec![1u8, 2, 3]; deep(&v, 3) });
    let _ = h.join();
}
