/* fiber_x86_64.S — context switch for Thread-stage fibers on x86-64 (System V ABI).
 *
 * gr_ctx_swap(void **save_sp, void *new_sp): pushes the callee-saved registers and the
 * FP control words (MXCSR, x87 CW) on the running stack, stores the stack pointer in
 * *save_sp, switches to new_sp and pops the same frame from there. A new fiber's frame
 * (built by fiber.c) "returns" into gr_ctx_trampoline with the fiber in %r12. */
#if defined(__x86_64__)
    .text
    .globl gr_ctx_swap
    .hidden gr_ctx_swap
    .type gr_ctx_swap, @function
gr_ctx_swap:
    .cfi_startproc
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .cfi_endproc
    .size gr_ctx_swap, .-gr_ctx_swap

    .globl gr_ctx_trampoline
    .hidden gr_ctx_trampoline
    .type gr_ctx_trampoline, @function
gr_ctx_trampoline:
    .cfi_startproc
    .cfi_undefined rip
    movq %r12, %rdi
    call gr_fiber_start
    ud2
    .cfi_endproc
    .size gr_ctx_trampoline, .-gr_ctx_trampoline
#endif
    .section .note.GNU-stack,"",%progbits
