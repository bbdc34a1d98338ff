/* Hand-written frames for asm_main.c (x86-64 SysV, GNU as).
 *
 *   asm_fp_nocfi(x)     push %rbp / mov %rsp,%rbp prologue and NO CFI at all:
 *                       only a frame-pointer (or prologue-analysing) unwinder
 *                       gets past it.  Calls asm_realign(x+1).
 *   asm_realign(x)      aligns %rsp to 64 bytes (and $-64,%rsp) after setting
 *                       up %rbp; CFI describes the CFA through %rbp.
 *                       Calls asm_cfi_noframe(x+1).
 *   asm_cfi_noframe(x)  no frame pointer, odd stack adjustment (sub $40),
 *                       %rbp saved in the middle of the frame and used as a
 *                       scratch register (holds 0x5eed) across the call:
 *                       CFI only.  Calls c_leaf(x+1).
 */
        .text

        .globl  asm_fp_nocfi
        .type   asm_fp_nocfi, @function
asm_fp_nocfi:
        pushq   %rbp
        movq    %rsp, %rbp
        subq    $16, %rsp
        addl    $1, %edi
        call    asm_realign
        addl    $1, %eax
        leave
        ret
        .size   asm_fp_nocfi, .-asm_fp_nocfi

        .globl  asm_realign
        .type   asm_realign, @function
asm_realign:
        .cfi_startproc
        pushq   %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        movq    %rsp, %rbp
        .cfi_def_cfa_register %rbp
        andq    $-64, %rsp
        subq    $64, %rsp
        addl    $1, %edi
        call    asm_cfi_noframe
        addl    $1, %eax
        movq    %rbp, %rsp
        popq    %rbp
        .cfi_def_cfa %rsp, 8
        ret
        .cfi_endproc
        .size   asm_realign, .-asm_realign

        .globl  asm_cfi_noframe
        .type   asm_cfi_noframe, @function
asm_cfi_noframe:
        .cfi_startproc
        subq    $40, %rsp
        .cfi_def_cfa_offset 48
        movq    %rbp, 16(%rsp)      /* %rbp saved mid-frame, then used as */
        .cfi_offset %rbp, -32       /* scratch: it is no frame pointer here */
        movq    $0x5eed, %rbp
        addl    $1, %edi
        call    c_leaf
        addl    $1, %eax
        movq    16(%rsp), %rbp
        .cfi_restore %rbp
        addq    $40, %rsp
        .cfi_def_cfa_offset 8
        ret
        .cfi_endproc
        .size   asm_cfi_noframe, .-asm_cfi_noframe

        .section .note.GNU-stack,"",@progbits
