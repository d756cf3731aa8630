/* fiber_aarch64.S — the context switch under gr_fiber_switch (gramps/fiber.c) on
 * aarch64, AAPCS64. Assembles to nothing on other targets.
 *
 * void *gr_ctx_swap(void **save_sp, void *new_sp, void *transfer)
 *   x0 = save_sp, x1 = new_sp, x2 = transfer
 * Saves what a call must preserve: x19-x28, the frame pointer x29, the return address
 * x30, the low halves d8-d15 of v8-v15, and FPCR (rounding mode, flush-to-zero, trap
 * enables), so a fiber's fesetround() stays its own. Stores sp in *save_sp, loads
 * new_sp, and restores the same 176-byte frame from there:
 *   0: x19 x20 ... 80: x29 x30   96: d8 d9 ... 144: d14 d15   160: FPCR   168: pad
 * (fiber.c builds a new fiber's copy). Returns `transfer` in x0 to the resumed context.
 * FPCR is only written when it differs: on many cores an FPCR write is
 * pipeline-serialising, and fibers almost always share one FP mode. */
#if defined(__aarch64__)
    .text
    .globl gr_ctx_swap
    .hidden gr_ctx_swap
    .type gr_ctx_swap, %function
    .p2align 4
gr_ctx_swap:
    .cfi_startproc
    sub sp, sp, #176
    .cfi_adjust_cfa_offset 176
    stp x19, x20, [sp, #0]
    stp x21, x22, [sp, #16]
    stp x23, x24, [sp, #32]
    stp x25, x26, [sp, #48]
    stp x27, x28, [sp, #64]
    stp x29, x30, [sp, #80]
    .cfi_rel_offset x29, 80
    .cfi_rel_offset x30, 88
    stp d8, d9, [sp, #96]
    stp d10, d11, [sp, #112]
    stp d12, d13, [sp, #128]
    stp d14, d15, [sp, #144]
    mrs x9, fpcr
    str x9, [sp, #160]

    mov x10, sp                  /* suspend: our frame is complete */
    str x10, [x0]
    mov sp, x1                   /* resume: the other context's frame */

    ldr x10, [sp, #160]
    cmp x9, x10
    b.eq 1f
    msr fpcr, x10
1:
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
    .cfi_adjust_cfa_offset -176
    .cfi_restore x29
    .cfi_restore x30
    mov x0, x2
    ret
    .cfi_endproc
    .size gr_ctx_swap, .-gr_ctx_swap

/* A new fiber's first "return" lands here: x19 = the fiber, x0 = transfer (the fiber
 * that switched to it), sp 16-byte aligned, x29 = 0 (ends frame-pointer chains).
 * Calls gr_fiber_start(self, prev), which never returns. */
    .globl gr_ctx_trampoline
    .hidden gr_ctx_trampoline
    .type gr_ctx_trampoline, %function
    .p2align 4
gr_ctx_trampoline:
    .cfi_startproc
    .cfi_undefined x30           /* outermost frame: unwinders stop here */
    mov x1, x0
    mov x0, x19
    bl gr_fiber_start
    brk #0
    .cfi_endproc
    .size gr_ctx_trampoline, .-gr_ctx_trampoline
#endif
    .section .note.GNU-stack,"",%progbits
