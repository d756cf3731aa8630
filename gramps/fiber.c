/* fiber.c — fibers for Thread-stage instances: pooled guard-paged stacks, the initial
 * frame a new fiber starts from, and the switch (assembly on x86-64 and aarch64,
 * ucontext elsewhere) wrapped in the sanitizer and valgrind announcements. */
#include "gramps/fiber.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__aarch64__)
#define GR_ASM_SWITCH 1
#else
#include <ucontext.h>
#endif

#if defined(__SANITIZE_THREAD__)
#define GR_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GR_TSAN 1
#endif
#endif

#if defined(__SANITIZE_ADDRESS__)
#define GR_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GR_ASAN 1
#endif
#endif

#ifdef GR_TSAN
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
#endif
#ifdef GR_ASAN
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define GR_VALGRIND 1
#endif
#endif

#ifdef GR_ASM_SWITCH
void gr_ctx_swap(void **save_sp, void *new_sp);
void gr_ctx_trampoline(void);
#endif
void gr_fiber_start(gr_fiber *f);

/* ---- stack pool ------------------------------------------------------------------------- */

static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

int gr_stack_pool_init(gr_stack_pool *pool, size_t stack_bytes)
{
    memset(pool, 0, sizeof *pool);
    size_t page = page_size();
    pool->stack_bytes = (stack_bytes + page - 1) / page * page;
    return pthread_mutex_init(&pool->lock, NULL) == 0 ? 0 : -1;
}

void gr_stack_pool_destroy(gr_stack_pool *pool)
{
    for (size_t i = 0; i < pool->nfree; i++)
        munmap(pool->free_stacks[i], pool->stack_bytes + page_size());
    free(pool->free_stacks);
    pthread_mutex_destroy(&pool->lock);
}

/* A stack with a PROT_NONE guard page below it, from the pool or freshly mapped. */
static void *stack_get(gr_stack_pool *pool)
{
    pthread_mutex_lock(&pool->lock);
    void *base = pool->nfree ? pool->free_stacks[--pool->nfree] : NULL;
    pthread_mutex_unlock(&pool->lock);
    if (base) return base;
    size_t page = page_size();
    base = mmap(NULL, pool->stack_bytes + page, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) return NULL;
    if (mprotect(base, page, PROT_NONE) != 0) {
        munmap(base, pool->stack_bytes + page);
        return NULL;
    }
    pthread_mutex_lock(&pool->lock);
    pool->mapped++;
    pthread_mutex_unlock(&pool->lock);
    return base;
}

static void stack_put(gr_stack_pool *pool, void *base)
{
    pthread_mutex_lock(&pool->lock);
    if (pool->nfree == pool->cap) {
        size_t ncap = pool->cap ? pool->cap * 2 : 64;
        void **p = realloc(pool->free_stacks, ncap * sizeof *p);
        if (!p) {
            pthread_mutex_unlock(&pool->lock);
            munmap(base, pool->stack_bytes + page_size());
            return;
        }
        pool->free_stacks = p;
        pool->cap = ncap;
    }
    pool->free_stacks[pool->nfree++] = base;
    pthread_mutex_unlock(&pool->lock);
}

/* ---- sanitizer bookkeeping -------------------------------------------------------------- */

#ifdef GR_ASAN
/* The fiber that switched to the one now running, on this pthread. Read through a
 * non-inlined function: after a switch we may be on another pthread, and a TLS address
 * computed before the switch would be the old thread's. */
static __thread gr_fiber *asan_from;
__attribute__((noinline)) static gr_fiber **asan_from_slot(void) { return &asan_from; }

static void asan_before(gr_fiber *from, gr_fiber *to)
{
    *asan_from_slot() = from;
    __sanitizer_start_switch_fiber(&from->asan_fake_stack, to->asan_stack_bottom,
                                   to->asan_stack_size);
}

static void asan_after(gr_fiber *self)
{
    gr_fiber *from = *asan_from_slot();
    __sanitizer_finish_switch_fiber(self ? self->asan_fake_stack : NULL,
                                    &from->asan_stack_bottom, &from->asan_stack_size);
}
#else
static void asan_before(gr_fiber *from, gr_fiber *to) { (void)from; (void)to; }
static void asan_after(gr_fiber *self) { (void)self; }
#endif

/* ---- fibers ---------------------------------------------------------------------------- */

void gr_fiber_init_self(gr_fiber *self)
{
    memset(self, 0, sizeof *self);
#ifdef GR_TSAN
    self->tsan_fiber = __tsan_get_current_fiber();
#endif
#ifndef GR_ASM_SWITCH
    self->uctx = calloc(1, sizeof(ucontext_t));
#endif
}

void gr_fiber_destroy_self(gr_fiber *self)
{
    free(self->uctx);
    self->uctx = NULL;
}

void gr_fiber_start(gr_fiber *f)
{
    asan_after(NULL);
    f->entry(f->arg);
    fprintf(stderr, "gramps: a fiber's entry function returned; this is a runtime bug\n");
    abort();
}

#ifdef GR_ASM_SWITCH
/* The frame gr_ctx_swap pops the first time it switches to the fiber. */
static void *initial_frame(gr_fiber *f, char *top)
{
    top = (char *)((uintptr_t)top & ~(uintptr_t)15);
#if defined(__x86_64__)
    uint64_t *sp = (uint64_t *)(top - 64);
    memset(sp, 0, 64);
    uint32_t mxcsr;
    uint16_t fpucw;
    __asm__ __volatile__("stmxcsr %0" : "=m"(mxcsr));
    __asm__ __volatile__("fnstcw %0" : "=m"(fpucw));
    memcpy(sp, &mxcsr, 4);
    memcpy((char *)sp + 4, &fpucw, 2);
    sp[4] = (uint64_t)(uintptr_t)f;                      /* r12 */
    sp[7] = (uint64_t)(uintptr_t)gr_ctx_trampoline;      /* return address */
    return sp;
#else
    uint64_t *sp = (uint64_t *)(top - 176);
    memset(sp, 0, 176);
    uint64_t fpcr;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
    sp[0] = (uint64_t)(uintptr_t)f;                      /* x19 */
    sp[11] = (uint64_t)(uintptr_t)gr_ctx_trampoline;     /* x30 */
    sp[20] = fpcr;
    return sp;
#endif
}
#else
static void uctx_entry(unsigned hi, unsigned lo)
{
    gr_fiber_start((gr_fiber *)(((uintptr_t)hi << 32) | (uintptr_t)lo));
}
#endif

int gr_fiber_create(gr_fiber *f, gr_stack_pool *pool, void (*entry)(void *), void *arg)
{
    memset(f, 0, sizeof *f);
    f->stack_base = stack_get(pool);
    if (!f->stack_base) return -1;
    f->stack_bytes = pool->stack_bytes;
    f->entry = entry;
    f->arg = arg;
    char *lo = (char *)f->stack_base + page_size(), *hi = lo + f->stack_bytes;
    f->asan_stack_bottom = lo;
    f->asan_stack_size = f->stack_bytes;
#ifdef GR_VALGRIND
    f->valgrind_id = VALGRIND_STACK_REGISTER(lo, hi);
#endif
#ifdef GR_TSAN
    f->tsan_fiber = __tsan_create_fiber(0);
#endif
#ifdef GR_ASM_SWITCH
    f->sp = initial_frame(f, hi);
#else
    ucontext_t *u = calloc(1, sizeof *u);
    if (!u) { stack_put(pool, f->stack_base); return -1; }
    getcontext(u);
    u->uc_stack.ss_sp = lo;
    u->uc_stack.ss_size = f->stack_bytes;
    u->uc_link = NULL;
    makecontext(u, (void (*)(void))uctx_entry, 2, (unsigned)((uintptr_t)f >> 32),
                (unsigned)(uintptr_t)f);
    f->uctx = u;
#endif
    return 0;
}

void gr_fiber_destroy(gr_fiber *f, gr_stack_pool *pool)
{
    if (!f->stack_base) return;
#ifdef GR_VALGRIND
    VALGRIND_STACK_DEREGISTER(f->valgrind_id);
#endif
#ifdef GR_TSAN
    __tsan_destroy_fiber(f->tsan_fiber);
#endif
    stack_put(pool, f->stack_base);
    f->stack_base = NULL;
    free(f->uctx);
    f->uctx = NULL;
}

void gr_fiber_switch(gr_fiber *from, gr_fiber *to)
{
#ifdef GR_TSAN
    __tsan_switch_to_fiber(to->tsan_fiber, 0);
#endif
    asan_before(from, to);
#ifdef GR_ASM_SWITCH
    gr_ctx_swap(&from->sp, to->sp);
#else
    swapcontext(from->uctx, to->uctx);
#endif
    asan_after(from);
}
