/* Hand-written frames for hard_asm_main.c (x86-64 SysV, GNU as), WITHOUT
 * any CFI directives (unless built with -DSWK_TWIN_CFI, the sanity twin
 * whose CFI lets gdb prove the chain; the instructions are the same).
 *
 *   asm_keep_frame(x)   classic frame: push %rbp / mov %rsp,%rbp / sub $16.
 *                       Calls asm_reuse_rbp(x+1).
 *   asm_reuse_rbp(x)    no frame: saves %rbp and %rbx like any callee-saved
 *                       register, then uses %rbp as a general register (a
 *                       pointer to its own local buffer, 8 bytes above %rsp)
 *                       across the call: following %rbp as a frame pointer
 *                       leads into the middle of this frame.
 *                       Calls asm_push_saved(x+1).
 *   asm_push_saved(x)   no frame pointer: pushes %rbx, %r12..%r15 and
 *                       allocates 32 bytes (sub $32,%rsp): the return
 *                       address is 72 bytes above %rsp at the call.
 *                       Calls c_leaf(x+1).
 */
#ifdef SWK_TWIN_CFI
#define CFI(...) __VA_ARGS__
#else
#define CFI(...)
#endif

        .text

        .globl  asm_keep_frame
        .type   asm_keep_frame, @function
asm_keep_frame:
        CFI(.cfi_startproc)
        pushq   %rbp
        CFI(.cfi_def_cfa_offset 16)
        CFI(.cfi_offset %rbp, -16)
        movq    %rsp, %rbp
        CFI(.cfi_def_cfa_register %rbp)
        subq    $16, %rsp
        movl    %edi, -4(%rbp)
        addl    $1, %edi
        call    asm_reuse_rbp
        addl    -4(%rbp), %eax
        leave
        CFI(.cfi_def_cfa %rsp, 8)
        ret
        CFI(.cfi_endproc)
        .size   asm_keep_frame, .-asm_keep_frame

        .globl  asm_reuse_rbp
        .type   asm_reuse_rbp, @function
asm_reuse_rbp:
        CFI(.cfi_startproc)
        pushq   %rbp
        CFI(.cfi_def_cfa_offset 16)
        CFI(.cfi_offset %rbp, -16)
        pushq   %rbx
        CFI(.cfi_def_cfa_offset 24)
        CFI(.cfi_offset %rbx, -24)
        subq    $24, %rsp
        CFI(.cfi_def_cfa_offset 48)
        leaq    8(%rsp), %rbp           /* %rbp = &local buffer: no frame pointer */
        movl    %edi, (%rbp)
        movl    %edi, %ebx
        addl    $1, %edi
        call    asm_push_saved
        addl    (%rbp), %eax
        addl    %ebx, %eax
        addq    $24, %rsp
        CFI(.cfi_def_cfa_offset 24)
        popq    %rbx
        CFI(.cfi_def_cfa_offset 16)
        popq    %rbp
        CFI(.cfi_def_cfa_offset 8)
        ret
        CFI(.cfi_endproc)
        .size   asm_reuse_rbp, .-asm_reuse_rbp

        .globl  asm_push_saved
        .type   asm_push_saved, @function
asm_push_saved:
        CFI(.cfi_startproc)
        pushq   %rbx
        CFI(.cfi_def_cfa_offset 16)
        CFI(.cfi_offset %rbx, -16)
        pushq   %r12
        CFI(.cfi_def_cfa_offset 24)
        CFI(.cfi_offset %r12, -24)
        pushq   %r13
        CFI(.cfi_def_cfa_offset 32)
        CFI(.cfi_offset %r13, -32)
        pushq   %r14
        CFI(.cfi_def_cfa_offset 40)
        CFI(.cfi_offset %r14, -40)
        pushq   %r15
        CFI(.cfi_def_cfa_offset 48)
        CFI(.cfi_offset %r15, -48)
        subq    $32, %rsp
        CFI(.cfi_def_cfa_offset 80)
        movl    %edi, %ebx
        leal    1(%rdi), %r12d
        movl    $0x1234, %r13d
        movq    %rsp, %r14
        movq    $-1, %r15
        movl    %edi, 16(%rsp)
        addl    $1, %edi
        call    c_leaf
        addl    16(%rsp), %eax
        addq    $32, %rsp
        CFI(.cfi_def_cfa_offset 48)
        popq    %r15
        CFI(.cfi_def_cfa_offset 40)
        popq    %r14
        CFI(.cfi_def_cfa_offset 32)
        popq    %r13
        CFI(.cfi_def_cfa_offset 24)
        popq    %r12
        CFI(.cfi_def_cfa_offset 16)
        popq    %rbx
        CFI(.cfi_def_cfa_offset 8)
        ret
        CFI(.cfi_endproc)
        .size   asm_push_saved, .-asm_push_saved

        .section .note.GNU-stack,"",@progbits
