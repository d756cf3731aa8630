/* fiber.c — user-level threads for Thread-stage instances (gramps/thread_stage.c):
 * the pool of guard-paged stacks, the first frame a new fiber starts from, and
 * gr_fiber_switch, which wraps the context switch (fiber_x86_64.S, fiber_aarch64.S, or
 * ucontext elsewhere) in the ThreadSanitizer, AddressSanitizer and valgrind
 * announcements.
 *
 * A fiber may be suspended on one pthread and resumed on another. Nothing here keeps
 * per-pthread state across a switch: what the resumed side needs to know (which fiber
 * switched to it, for AddressSanitizer) travels through the switch itself. */
#include "gramps/fiber.h"
#include "gramps/gramps.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* GR_FIBER_FORCE_UCONTEXT builds the portable path on x86-64/aarch64 too (for testing). */
#if (defined(__x86_64__) || defined(__aarch64__)) && !defined(GR_FIBER_FORCE_UCONTEXT)
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
/* The ThreadSanitizer fiber API (tsan_interface.h is not always installed). */
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
#endif
#ifdef GR_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define GR_VALGRIND 1
#endif
#endif

#define MIN_STACK_BYTES (16u * 1024)

#ifdef GR_ASM_SWITCH
/* Saves the running context on its stack, stores sp in *save_sp, resumes new_sp.
 * Returns, in the resumed context, the `transfer` its resumer passed. */
void *gr_ctx_swap(void **save_sp, void *new_sp, void *transfer);
void gr_ctx_trampoline(void);
#endif
/* First C code on a new fiber's stack (called from the trampoline). */
__attribute__((visibility("hidden"), noreturn))
void gr_fiber_start(gr_fiber *self, gr_fiber *prev);

static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

/* ---- stack pool ------------------------------------------------------------------ */

int gr_stack_pool_init(gr_stack_pool *pool, size_t stack_bytes)
{
    memset(pool, 0, sizeof *pool);
    size_t page = page_size();
    if (stack_bytes < MIN_STACK_BYTES) stack_bytes = MIN_STACK_BYTES;
    pool->stack_bytes = (stack_bytes + page - 1) / page * page;
    return pthread_mutex_init(&pool->lock, NULL) == 0 ? 0 : -1;
}

static size_t mapping_bytes(const gr_stack_pool *pool)
{
    return pool->stack_bytes + page_size();   /* guard page + stack */
}

/* Stacks outlive their graph: a pool's free stacks go to this process-wide cache when
 * the graph is destroyed, and pools take from it before mapping new ones. A renderer
 * builds a graph per frame with a Thread instance per framebuffer tile; without the
 * cache every frame mapped hundreds of stacks and faulted their first pages in again
 * (8% of a 1024x1024 raster frame on the development VM). It holds stacks of one size
 * (the last one given back), at most STACK_CACHE_MAX; gr_release_cached_stacks unmaps
 * them. Only the pages a fiber touched stay resident. */
#define STACK_CACHE_MAX 4096

static struct {
    pthread_mutex_t lock;
    size_t mapping_bytes;
    size_t n;
    void *stacks[STACK_CACHE_MAX];
} cache = {PTHREAD_MUTEX_INITIALIZER, 0, 0, {0}};

static void *cache_take(size_t bytes)
{
    pthread_mutex_lock(&cache.lock);
    void *base = cache.n && cache.mapping_bytes == bytes ? cache.stacks[--cache.n] : NULL;
    pthread_mutex_unlock(&cache.lock);
    return base;
}

/* Keeps the stacks it can; unmaps the others (and, for another size, the cached ones). */
static void cache_give(void *const *stacks, size_t n, size_t bytes)
{
    pthread_mutex_lock(&cache.lock);
    if (n && cache.mapping_bytes != bytes) {
        for (size_t i = 0; i < cache.n; i++) munmap(cache.stacks[i], cache.mapping_bytes);
        cache.n = 0;
        cache.mapping_bytes = bytes;
    }
    size_t i = 0;
    for (; i < n && cache.n < STACK_CACHE_MAX; i++) cache.stacks[cache.n++] = stacks[i];
    pthread_mutex_unlock(&cache.lock);
    for (; i < n; i++) munmap(stacks[i], bytes);
}

void gr_release_cached_stacks(void)
{
    pthread_mutex_lock(&cache.lock);
    for (size_t i = 0; i < cache.n; i++) munmap(cache.stacks[i], cache.mapping_bytes);
    cache.n = 0;
    pthread_mutex_unlock(&cache.lock);
}

/* Stacks still in use by live fibers are not given back: their owners destroy them first. */
void gr_stack_pool_destroy(gr_stack_pool *pool)
{
    cache_give(pool->free_stacks, pool->nfree, mapping_bytes(pool));
    pool->mapped -= pool->nfree;
    free(pool->free_stacks);
    pool->free_stacks = NULL;
    pool->nfree = pool->cap = 0;
    pthread_mutex_destroy(&pool->lock);
}

/* A cached stack, or a new mapping whose lowest page is PROT_NONE, so running off the
 * end (stacks grow down) faults at once instead of writing over whatever is mapped
 * below (cached stacks were made so too). */
static void *stack_map(gr_stack_pool *pool)
{
    void *base = cache_take(mapping_bytes(pool));
    if (!base) {
        base = mmap(NULL, mapping_bytes(pool), PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
        if (base == MAP_FAILED) return NULL;
        if (mprotect(base, page_size(), PROT_NONE) != 0) {
            munmap(base, mapping_bytes(pool));
            return NULL;
        }
    }
    pthread_mutex_lock(&pool->lock);
    pool->mapped++;
    pthread_mutex_unlock(&pool->lock);
    return base;
}

/* A pooled stack if there is one (the most recently freed: warmest in cache). */
static void *stack_get(gr_stack_pool *pool)
{
    pthread_mutex_lock(&pool->lock);
    void *base = pool->nfree ? pool->free_stacks[--pool->nfree] : NULL;
    pthread_mutex_unlock(&pool->lock);
    return base ? base : stack_map(pool);
}

static void stack_put(gr_stack_pool *pool, void *base)
{
    pthread_mutex_lock(&pool->lock);
    if (pool->nfree == pool->cap) {
        size_t ncap = pool->cap ? pool->cap * 2 : 64;
        void **p = realloc(pool->free_stacks, ncap * sizeof *p);
        if (p) {
            pool->free_stacks = p;
            pool->cap = ncap;
        }
    }
    bool pooled = pool->nfree < pool->cap;
    if (pooled) pool->free_stacks[pool->nfree++] = base;
    else pool->mapped--;
    pthread_mutex_unlock(&pool->lock);
    if (!pooled) munmap(base, mapping_bytes(pool));   /* no memory to remember it */
}

/* ---- sanitizer announcements ----------------------------------------------------- */

#ifdef GR_ASAN
/* Before leaving `from` for `to`: tells ASan which stack is about to run and saves
 * from's fake stack (the use-after-return frames). */
static void asan_leave(gr_fiber *from, gr_fiber *to)
{
    __sanitizer_start_switch_fiber(&from->asan_fake_stack, to->asan_stack_bottom,
                                   to->asan_stack_size);
}

/* First thing after being resumed: restores self's fake stack, and learns the bounds
 * of the stack we came from (a pthread's own stack is only known this way). */
static void asan_arrive(void *fake_stack, gr_fiber *prev)
{
    __sanitizer_finish_switch_fiber(fake_stack, &prev->asan_stack_bottom,
                                    &prev->asan_stack_size);
}

/* A reused stack still carries the poisoned redzones of frames the previous fiber never
 * returned from; instrumented code would misreport accesses through them. */
static void asan_fresh_stack(void *lo, size_t bytes)
{
    __asan_unpoison_memory_region(lo, bytes);
}
#else
static void asan_leave(gr_fiber *from, gr_fiber *to) { (void)from; (void)to; }
static void asan_arrive(void *fake_stack, gr_fiber *prev) { (void)fake_stack; (void)prev; }
static void asan_fresh_stack(void *lo, size_t bytes) { (void)lo; (void)bytes; }
#endif

#ifdef GR_TSAN
static void tsan_self(gr_fiber *f) { f->tsan_fiber = __tsan_get_current_fiber(); }
static void tsan_create(gr_fiber *f) { f->tsan_fiber = __tsan_create_fiber(0); }
static void tsan_destroy(gr_fiber *f) { __tsan_destroy_fiber(f->tsan_fiber); }
/* flags 0: the switch synchronises, so what `from` did happens before what `to` does. */
static void tsan_switch(gr_fiber *to) { __tsan_switch_to_fiber(to->tsan_fiber, 0); }
#else
static void tsan_self(gr_fiber *f) { (void)f; }
static void tsan_create(gr_fiber *f) { (void)f; }
static void tsan_destroy(gr_fiber *f) { (void)f; }
static void tsan_switch(gr_fiber *to) { (void)to; }
#endif

static void valgrind_register(gr_fiber *f, char *lo, char *hi)
{
#ifdef GR_VALGRIND
    f->valgrind_id = VALGRIND_STACK_REGISTER(lo, hi);
#else
    (void)f; (void)lo; (void)hi;
#endif
}

static void valgrind_deregister(gr_fiber *f)
{
#ifdef GR_VALGRIND
    VALGRIND_STACK_DEREGISTER(f->valgrind_id);
#else
    (void)f;
#endif
}

/* ---- the portable switch (ucontext) ---------------------------------------------- */

#ifndef GR_ASM_SWITCH
/* swapcontext cannot carry a value, so the resumer leaves its fiber here. */
static _Thread_local gr_fiber *uctx_handoff;

/* The thread-local's address must be recomputed after a switch, which may have moved
 * us to another pthread: noinline, and the empty asm stops the compiler treating the
 * function as const and reusing an address computed before swapcontext. */
__attribute__((noinline)) static gr_fiber **handoff_slot(void)
{
    gr_fiber **p = &uctx_handoff;
    __asm__ __volatile__("" : "+r"(p));
    return p;
}

static void uctx_entry(unsigned hi, unsigned lo)   /* makecontext passes ints only */
{
    gr_fiber *self = (gr_fiber *)(((uintptr_t)hi << 16 << 16) | (uintptr_t)lo);
    gr_fiber_start(self, *handoff_slot());
}

static gr_fiber *uctx_swap(gr_fiber *from, gr_fiber *to)
{
    *handoff_slot() = from;
    swapcontext(from->uctx, to->uctx);
    return *handoff_slot();
}

static int uctx_prepare(gr_fiber *f, char *lo)
{
    ucontext_t *u = calloc(1, sizeof *u);
    if (!u || getcontext(u) != 0) {
        free(u);
        return -1;
    }
    u->uc_stack.ss_sp = lo;
    u->uc_stack.ss_size = f->stack_bytes;
    u->uc_link = NULL;
    uintptr_t v = (uintptr_t)f;
    makecontext(u, (void (*)(void))uctx_entry, 2, (unsigned)(v >> 16 >> 16), (unsigned)v);
    f->uctx = u;
    return 0;
}
#endif

/* ---- fibers ---------------------------------------------------------------------- */

void gr_fiber_init_self(gr_fiber *self)
{
    memset(self, 0, sizeof *self);
    tsan_self(self);
#ifndef GR_ASM_SWITCH
    self->uctx = calloc(1, sizeof(ucontext_t));
    if (!self->uctx) {
        fprintf(stderr, "gramps: out of memory for a thread's context\n");
        abort();
    }
#endif
}

void gr_fiber_destroy_self(gr_fiber *self)
{
    free(self->uctx);
    self->uctx = NULL;
}

void gr_fiber_start(gr_fiber *self, gr_fiber *prev)
{
    asan_arrive(NULL, prev);                          /* a new fiber has no fake stack */
    self->entry(self->arg);
    fprintf(stderr, "gramps: a fiber's entry function returned (entry must end by "
            "switching away for good)\n");
    abort();
}

#ifdef GR_ASM_SWITCH
/* Builds, at the top of the new stack, the frame gr_ctx_swap pops: its `ret` then goes
 * to gr_ctx_trampoline with the fiber in a callee-saved register and the stack pointer
 * 16-byte aligned, so the trampoline's call enters gr_fiber_start as the ABI requires.
 * The FP control state is inherited from the creator, as a new pthread inherits it. */
static void *initial_frame(gr_fiber *f, char *hi)
{
    char *top = (char *)((uintptr_t)hi & ~(uintptr_t)15);
#if defined(__x86_64__)
    /* layout (see fiber_x86_64.S): MXCSR, x87 CW | r15 r14 r13 r12 rbx rbp | return */
    uint64_t *sp = (uint64_t *)(top - 8 * 8);
    memset(sp, 0, 8 * 8);
    uint32_t mxcsr;
    uint16_t fpucw;
    __asm__ __volatile__("stmxcsr %0" : "=m"(mxcsr));
    __asm__ __volatile__("fnstcw %0" : "=m"(fpucw));
    memcpy(&sp[0], &mxcsr, sizeof mxcsr);
    memcpy((char *)&sp[0] + 4, &fpucw, sizeof fpucw);
    sp[4] = (uint64_t)(uintptr_t)f;                   /* r12 */
    sp[7] = (uint64_t)(uintptr_t)gr_ctx_trampoline;   /* return address; rbp = 0 ends
                                                         frame-pointer backtraces */
#else
    /* layout (see fiber_aarch64.S): x19..x30, d8..d15, FPCR, pad: 22 words */
    uint64_t *sp = (uint64_t *)(top - 22 * 8);
    memset(sp, 0, 22 * 8);
    uint64_t fpcr;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
    sp[0] = (uint64_t)(uintptr_t)f;                   /* x19 */
    sp[11] = (uint64_t)(uintptr_t)gr_ctx_trampoline;  /* x30 (x29 = 0) */
    sp[20] = fpcr;
#endif
    return sp;
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
#ifdef GR_ASM_SWITCH
    f->sp = initial_frame(f, hi);
#else
    if (uctx_prepare(f, lo) != 0) {
        stack_put(pool, f->stack_base);
        f->stack_base = NULL;
        return -1;
    }
#endif
    f->asan_stack_bottom = lo;
    f->asan_stack_size = f->stack_bytes;
    asan_fresh_stack(lo, f->stack_bytes);
    valgrind_register(f, lo, hi);
    tsan_create(f);
    return 0;
}

void gr_fiber_destroy(gr_fiber *f, gr_stack_pool *pool)
{
    if (!f->stack_base) return;
    valgrind_deregister(f);
    tsan_destroy(f);
    stack_put(pool, f->stack_base);
    f->stack_base = NULL;
    free(f->uctx);
    f->uctx = NULL;
}

void gr_fiber_switch(gr_fiber *from, gr_fiber *to)
{
    asan_leave(from, to);
    tsan_switch(to);                 /* must come right before the switch itself */
#ifdef GR_ASM_SWITCH
    gr_fiber *prev = gr_ctx_swap(&from->sp, to->sp, from);
#else
    gr_fiber *prev = uctx_swap(from, to);
#endif
    /* Resumed, perhaps on another pthread, by `prev`. */
    asan_arrive(from->asan_fake_stack, prev);
}
