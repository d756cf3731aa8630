/* User-level threads ("fibers") for Thread stages (internal).
 *
 * A fiber is a stack plus a saved stack pointer. gr_fiber_switch saves the callee-saved
 * registers and the floating-point control words (x87 CW and MXCSR on x86-64, FPCR on
 * aarch64) of the running context on its stack, stores its stack pointer in `from`, and
 * resumes `to`. It is hand-written assembly for x86-64 and aarch64; other targets use
 * ucontext (slower: it makes a sigprocmask system call per switch).
 *
 * Stacks come from a pool: mmap'd, with a PROT_NONE guard page below each so an
 * overflow faults instead of corrupting a neighbour, and reused instead of unmapped,
 * by later graphs too (a process-wide cache: gr_release_cached_stacks).
 * Every switch is announced to ThreadSanitizer (__tsan_switch_to_fiber), AddressSanitizer
 * (__sanitizer_start/finish_switch_fiber) and valgrind (VALGRIND_STACK_REGISTER) when
 * built with them, so sanitizer runs of Thread stages stay clean. */
#ifndef GRAMPS_FIBER_H
#define GRAMPS_FIBER_H

#include <pthread.h>
#include <stddef.h>

typedef struct gr_stack_pool {
    pthread_mutex_t lock;
    size_t stack_bytes;           /* usable bytes per stack, page multiple */
    void **free_stacks;           /* base addresses (guard page included) */
    size_t nfree, cap;
    size_t mapped;                /* stacks currently mapped (in use or pooled) */
} gr_stack_pool;

typedef struct gr_fiber {
    void *sp;                     /* saved stack pointer while switched out */
    void *stack_base;             /* mapping base (guard page first); NULL for a thread's own */
    size_t stack_bytes;
    void (*entry)(void *arg);
    void *arg;
    void *tsan_fiber;             /* ThreadSanitizer fiber handle, when built with TSan */
    const void *asan_stack_bottom;/* AddressSanitizer bookkeeping, when built with ASan */
    size_t asan_stack_size;
    void *asan_fake_stack;
    unsigned valgrind_id;
    void *uctx;                   /* ucontext_t *, fallback targets only */
} gr_fiber;

int gr_stack_pool_init(gr_stack_pool *pool, size_t stack_bytes);
/* Gives the pooled stacks to the process-wide cache later pools take from (fiber.c). */
void gr_stack_pool_destroy(gr_stack_pool *pool);

/* Makes `self` stand for the calling pthread's own context (no stack of its own). */
void gr_fiber_init_self(gr_fiber *self);
void gr_fiber_destroy_self(gr_fiber *self);

/* Creates a fiber that will run entry(arg) on a pooled stack the first time it is
 * switched to. entry must never return: it ends by switching away for good, after which
 * the owner calls gr_fiber_destroy. Returns 0, or -1 when no stack could be mapped. */
int gr_fiber_create(gr_fiber *f, gr_stack_pool *pool, void (*entry)(void *), void *arg);
void gr_fiber_destroy(gr_fiber *f, gr_stack_pool *pool);

/* Saves the running context into `from` and resumes `to`. Returns when some later
 * switch resumes `from`, possibly on another pthread. */
void gr_fiber_switch(gr_fiber *from, gr_fiber *to);

#endif
