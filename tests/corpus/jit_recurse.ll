; An LLVM IR program for swk's JIT tests (tests/test_jit_gdbjit.py), run by lli: its code
; exists only as the objects lli's JIT registers through GDB's JIT interface.  main calls
; down 12 levels deep; at the bottom leaf faults (no argument) or says "ready" and waits in
; pause() (any argument).  noinline keeps every call a real frame.
declare i32 @pause()
declare i64 @write(i32, i8*, i64)
@nowhere = global i32* null
@ready = constant [6 x i8] c"ready\0A"

define i32 @leaf(i32 %n, i32 %block) noinline {
entry:
  %b = icmp ne i32 %block, 0
  br i1 %b, label %wait, label %crash
wait:
  %msg = getelementptr [6 x i8], [6 x i8]* @ready, i64 0, i64 0
  %w = call i64 @write(i32 1, i8* %msg, i64 6)
  %r = call i32 @pause()
  ret i32 %r
crash:
  %p = load volatile i32*, i32** @nowhere
  store volatile i32 %n, i32* %p
  ret i32 %n
}

define i32 @down(i32 %n, i32 %block) noinline {
entry:
  %z = icmp eq i32 %n, 0
  br i1 %z, label %bottom, label %rec
bottom:
  %l = call i32 @leaf(i32 %n, i32 %block)
  ret i32 %l
rec:
  %m = sub i32 %n, 1
  %d = call i32 @down(i32 %m, i32 %block)
  %s = add i32 %d, 1
  ret i32 %s
}

define i32 @main(i32 %argc, i8** %argv) {
  %block = icmp sgt i32 %argc, 1
  %bi = zext i1 %block to i32
  %r = call i32 @down(i32 12, i32 %bi)
  ret i32 %r
}
