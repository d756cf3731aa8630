/* fiber_aarch64.S — context switch for Thread-stage fibers on aarch64 (AAPCS64).
 *
 * gr_ctx_swap(void **save_sp, void *new_sp): saves x19-x30, d8-d15 and FPCR in a
 * 176-byte frame on the running stack, stores sp in *save_sp, switches to new_sp and
 * restores the same frame from there. A new fiber's frame has x30 = gr_ctx_trampoline
 * and x19 = the fiber. */
#if defined(__aarch64__)
    .text
    .globl gr_ctx_swap
    .hidden gr_ctx_swap
    .type gr_ctx_swap, %function
gr_ctx_swap:
    sub sp, sp, #176
    stp x19, x20, [sp, #0]
    stp x21, x22, [sp, #16]
    stp x23, x24, [sp, #32]
    stp x25, x26, [sp, #48]
    stp x27, x28, [sp, #64]
    stp x29, x30, [sp, #80]
    stp d8, d9, [sp, #96]
    stp d10, d11, [sp, #112]
    stp d12, d13, [sp, #128]
    stp d14, d15, [sp, #144]
    mrs x9, fpcr
    str x9, [sp, #160]
    mov x9, sp
    str x9, [x0]
    mov sp, x1
    ldr x9, [sp, #160]
    msr fpcr, x9
    ldp x19, x20, [sp, #0]
    ldp x21, x22, [sp, #16]
    ldp x23, x24, [sp, #32]
    ldp x25, x26, [sp, #48]
    ldp x27, x28, [sp, #64]
    ldp x29, x30, [sp, #80]
    ldp d8, d9, [sp, #96]
    ldp d10, d11, [sp, #112]
    ldp d12, d13, [sp, #128]
    ldp d14, d15, [sp, #144]
    add sp, sp, #176
    ret
    .size gr_ctx_swap, .-gr_ctx_swap

    .globl gr_ctx_trampoline
    .hidden gr_ctx_trampoline
    .type gr_ctx_trampoline, %function
gr_ctx_trampoline:
    mov x0, x19
    bl gr_fiber_start
    brk #0
    .size gr_ctx_trampoline, .-gr_ctx_trampoline
#endif
    .section .note.GNU-stack,"",%progbits
