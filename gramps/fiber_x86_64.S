/* fiber_x86_64.S — the context switch under gr_fiber_switch (gramps/fiber.c) on x86-64,
 * System V ABI. Assembles to nothing on other targets.
 *
 * void *gr_ctx_swap(void **save_sp, void *new_sp, void *transfer)
 *   %rdi = save_sp, %rsi = new_sp, %rdx = transfer
 * Pushes what a call must preserve and the compiler does not: rbp rbx r12-r15, then the
 * FP control state (MXCSR: SSE rounding mode, exception masks, FTZ/DAZ; x87 control
 * word: precision and rounding), so a fiber's fesetround() stays its own. Stores the
 * stack pointer in *save_sp, loads new_sp, and pops the same frame from there. The
 * frame, from the saved stack pointer up (fiber.c builds a new fiber's copy):
 *   0: MXCSR (4 bytes), x87 CW (2)   8: r15  16: r14  24: r13  32: r12  40: rbx
 *   48: rbp   56: return address
 * Returns `transfer` in %rax to the resumed context, which is how the resumed side
 * learns who switched to it whatever pthread it now runs on.
 * Caller-saved registers (including every xmm register) need no saving: gr_ctx_swap
 * is an ordinary call to the compiler. Both sides share one frame layout, so the CFI
 * below describes either stack. */
#if defined(__x86_64__)
    .text
    .globl gr_ctx_swap
    .hidden gr_ctx_swap
    .type gr_ctx_swap, @function
    .p2align 4
gr_ctx_swap:
    .cfi_startproc
    pushq %rbp
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %rbp, 0
    pushq %rbx
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %rbx, 0
    pushq %r12
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %r12, 0
    pushq %r13
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %r13, 0
    pushq %r14
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %r14, 0
    pushq %r15
    .cfi_adjust_cfa_offset 8
    .cfi_rel_offset %r15, 0
    subq $8, %rsp
    .cfi_adjust_cfa_offset 8
    stmxcsr (%rsp)
    fnstcw 4(%rsp)

    movq %rsp, (%rdi)            /* suspend: our frame is complete */
    movq %rsi, %rsp              /* resume: the other context's frame */

    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    .cfi_adjust_cfa_offset -8
    popq %r15
    .cfi_adjust_cfa_offset -8
    .cfi_restore %r15
    popq %r14
    .cfi_adjust_cfa_offset -8
    .cfi_restore %r14
    popq %r13
    .cfi_adjust_cfa_offset -8
    .cfi_restore %r13
    popq %r12
    .cfi_adjust_cfa_offset -8
    .cfi_restore %r12
    popq %rbx
    .cfi_adjust_cfa_offset -8
    .cfi_restore %rbx
    popq %rbp
    .cfi_adjust_cfa_offset -8
    .cfi_restore %rbp
    movq %rdx, %rax
    ret
    .cfi_endproc
    .size gr_ctx_swap, .-gr_ctx_swap

/* A new fiber's first "return" lands here: %r12 = the fiber, %rax = transfer (the
 * fiber that switched to it), %rsp 16-byte aligned, so the call below enters
 * gr_fiber_start(self, prev) with the alignment the ABI promises. It never returns. */
    .globl gr_ctx_trampoline
    .hidden gr_ctx_trampoline
    .type gr_ctx_trampoline, @function
    .p2align 4
gr_ctx_trampoline:
    .cfi_startproc
    .cfi_undefined %rip          /* outermost frame: unwinders stop here */
    movq %r12, %rdi
    movq %rax, %rsi
    call gr_fiber_start
    ud2
    .cfi_endproc
    .size gr_ctx_trampoline, .-gr_ctx_trampoline
#endif
    .section .note.GNU-stack,"",@progbits
