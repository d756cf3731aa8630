/* tests/runtime/test_fiber.c — fibers and their stack pool (gramps/fiber.c and the
 * switch in gramps/fiber_<arch>.S): ping-pong with the main context, many fibers, a
 * fiber suspended on one pthread and resumed on another, callee-saved integer and
 * floating-point registers kept across switches, the FP control state (rounding mode,
 * MXCSR) kept per fiber, stack alignment at entry, stack reuse by the pool and by later
 * pools (the process-wide cache), deep
 * recursion, the guard page, and abort() when an entry function returns. */
#include "gramps/fiber.h"
#include "gramps/gramps.h"
#include "tests/check.h"

#include <errno.h>
#include <fenv.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

#define STACK_BYTES (256 * 1024)

static gr_stack_pool pool;

/* ---- ping-pong ------------------------------------------------------------------- */

typedef struct pingpong { gr_fiber main, fib; int value, rounds; } pingpong;

static void pong(void *arg)
{
    pingpong *p = arg;
    for (;;) {
        p->value = p->value * 2 + 1;                /* main sees each step in order */
        p->rounds++;
        gr_fiber_switch(&p->fib, &p->main);
    }
}

static void test_ping_pong(void)
{
    pingpong p = {0};
    gr_fiber_init_self(&p.main);
    CHECK(gr_fiber_create(&p.fib, &pool, pong, &p) == 0);
    for (int i = 0; i < 1000; i++) {
        p.value = i;
        gr_fiber_switch(&p.main, &p.fib);
        CHECK(p.value == 2 * i + 1);
    }
    CHECK(p.rounds == 1000);
    gr_fiber_destroy(&p.fib, &pool);
    gr_fiber_destroy_self(&p.main);
}

/* ---- many fibers, and fiber-to-fiber switches ------------------------------------- */

#define NFIB 200
#define STEPS 10

typedef struct many {
    gr_fiber main, fib[NFIB];
    int log[NFIB * STEPS + NFIB], nlog;
    int done[NFIB];
} many;

typedef struct fib_arg { many *m; int id; } fib_arg;

/* Runs STEPS steps, each logged, then ends by switching away for good. */
static void stepper(void *arg)
{
    fib_arg *a = arg;
    many *m = a->m;
    for (int s = 0; s < STEPS; s++) {
        m->log[m->nlog++] = a->id * 100 + s;
        gr_fiber_switch(&m->fib[a->id], &m->main);
    }
    m->done[a->id] = 1;
    gr_fiber_switch(&m->fib[a->id], &m->main);
}

static void test_many_fibers(void)
{
    many *m = calloc(1, sizeof *m);
    fib_arg args[NFIB];
    gr_fiber_init_self(&m->main);
    for (int i = 0; i < NFIB; i++) {
        args[i] = (fib_arg){ m, i };
        CHECK(gr_fiber_create(&m->fib[i], &pool, stepper, &args[i]) == 0);
    }
    for (int s = 0; s <= STEPS; s++)                 /* round robin, one step each */
        for (int i = 0; i < NFIB; i++) gr_fiber_switch(&m->main, &m->fib[i]);
    CHECK(m->nlog == NFIB * STEPS);
    int bad = 0;
    for (int s = 0; s < STEPS; s++)
        for (int i = 0; i < NFIB; i++) bad += m->log[s * NFIB + i] != i * 100 + s;
    CHECK(bad == 0);
    for (int i = 0; i < NFIB; i++) {
        CHECK(m->done[i]);
        gr_fiber_destroy(&m->fib[i], &pool);
    }
    gr_fiber_destroy_self(&m->main);
    free(m);
}

typedef struct chain { gr_fiber main, a, b; char trace[8]; int n; } chain;

static void chain_a(void *arg)
{
    chain *c = arg;
    c->trace[c->n++] = 'a';
    gr_fiber_switch(&c->a, &c->b);                    /* straight to another fiber */
    c->trace[c->n++] = 'A';
    gr_fiber_switch(&c->a, &c->main);
}

static void chain_b(void *arg)
{
    chain *c = arg;
    c->trace[c->n++] = 'b';
    gr_fiber_switch(&c->b, &c->a);
    abort();                                        /* never resumed */
}

static void test_fiber_to_fiber(void)
{
    chain c = {0};
    gr_fiber_init_self(&c.main);
    CHECK(gr_fiber_create(&c.a, &pool, chain_a, &c) == 0);
    CHECK(gr_fiber_create(&c.b, &pool, chain_b, &c) == 0);
    gr_fiber_switch(&c.main, &c.a);
    CHECK(c.n == 3 && memcmp(c.trace, "abA", 3) == 0);
    gr_fiber_destroy(&c.a, &pool);
    gr_fiber_destroy(&c.b, &pool);
    gr_fiber_destroy_self(&c.main);
}

/* ---- migration between pthreads --------------------------------------------------- */

#define HOPS 200

typedef struct migrate {
    gr_fiber fib;
    gr_fiber *home;                 /* set by whichever thread resumes the fiber */
    _Atomic(int) turn;              /* 0 or 1: which thread resumes next; 2: stop */
    pid_t tid_seen[HOPS];
    int hops, locals_ok;
} migrate;

/* syscall(SYS_gettid), not pthread_self(): glibc declares pthread_self const, so the
 * compiler may fold two calls around a switch into one. */
static pid_t current_tid(void) { return (pid_t)syscall(SYS_gettid); }

static void traveller(void *arg)
{
    migrate *m = arg;
    volatile long seed = 7;
    long k1 = seed * 3, k2 = seed * 5, k3 = seed * 11;   /* live across every switch */
    double d1 = seed * 0.25, d2 = seed * 1.5;
    for (int h = 0; h < HOPS; h++) {
        m->tid_seen[h] = current_tid();
        m->hops++;
        gr_fiber_switch(&m->fib, m->home);
        k1 += 1; k2 += 2; k3 += 3; d1 += 0.5; d2 += 0.25;
    }
    m->locals_ok = k1 == 21 + HOPS && k2 == 35 + 2 * HOPS && k3 == 77 + 3 * HOPS &&
                   d1 == 1.75 + 0.5 * HOPS && d2 == 10.5 + 0.25 * HOPS;
    for (;;) gr_fiber_switch(&m->fib, m->home);
}

typedef struct hopper { migrate *m; int me; pid_t tid; } hopper;

/* Two threads take turns resuming the same fiber. The atomic turn hands the fiber over
 * only after it has switched back, so it never runs on both at once. */
static void *hop_thread(void *arg)
{
    hopper *h = arg;
    migrate *m = h->m;
    gr_fiber self;
    gr_fiber_init_self(&self);
    h->tid = current_tid();
    for (;;) {
        int t;
        while ((t = atomic_load(&m->turn)) != h->me && t != 2) sched_yield();
        if (t == 2) break;
        m->home = &self;
        gr_fiber_switch(&self, &m->fib);
        atomic_store(&m->turn, m->hops >= HOPS ? 2 : 1 - h->me);
    }
    gr_fiber_destroy_self(&self);
    return NULL;
}

static void test_resume_on_other_thread(void)
{
    migrate *m = calloc(1, sizeof *m);
    CHECK(gr_fiber_create(&m->fib, &pool, traveller, m) == 0);
    hopper h[2] = { { m, 0, 0 }, { m, 1, 0 } };
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, hop_thread, &h[i]);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    CHECK(m->hops == HOPS);
    CHECK(h[0].tid != h[1].tid);
    int wrong = 0;
    for (int i = 0; i < HOPS; i++) wrong += m->tid_seen[i] != h[i % 2].tid;
    CHECK_MSG(wrong == 0, "%d hops ran on the wrong thread", wrong);
    /* The fiber's last run (which checks its locals) needs one more resume: do it from
     * this third thread, after both threads it ran on have exited. */
    gr_fiber self;
    gr_fiber_init_self(&self);
    m->home = &self;
    gr_fiber_switch(&self, &m->fib);
    CHECK(m->locals_ok);
    gr_fiber_destroy(&m->fib, &pool);
    gr_fiber_destroy_self(&self);
    free(m);
}

/* ---- registers -------------------------------------------------------------------- */

typedef struct regs { gr_fiber main, fib; int rounds; } regs;

/* Actually overwrites the callee-saved registers (the clobber list makes the compiler
 * save and restore the fiber's own values), so if gr_fiber_switch did not restore
 * main's, main's live locals would come back as garbage. */
static void trash_callee_saved(void)
{
#if defined(__x86_64__)
    __asm__ __volatile__("movq $-1, %%rbx\n\tmovq $-2, %%r12\n\tmovq $-3, %%r13\n\t"
                         "movq $-4, %%r14\n\tmovq $-5, %%r15\n\t"
                         ::: "rbx", "r12", "r13", "r14", "r15", "memory");
#elif defined(__aarch64__)
    __asm__ __volatile__("mov x19, #-1\n\tmov x20, #-2\n\tmov x21, #-3\n\tmov x22, #-4\n\t"
                         "mov x23, #-5\n\tmov x24, #-6\n\tmov x25, #-7\n\tmov x26, #-8\n\t"
                         "mov x27, #-9\n\tmov x28, #-10\n\tfmov d8, #-1.0\n\t"
                         "fmov d9, #-2.0\n\tfmov d10, #-3.0\n\tfmov d11, #-4.0\n\t"
                         "fmov d12, #-5.0\n\tfmov d13, #-6.0\n\tfmov d14, #-7.0\n\t"
                         "fmov d15, #-8.0\n\t"
                         ::: "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27",
                             "x28", "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15",
                             "memory");
#endif
}

static void scrambler(void *arg)
{
    regs *r = arg;
    volatile long seed = 3;
    long f1 = seed * 1000, f2 = seed * 2000, f3 = seed * 3000, f4 = seed * 4000;
    double g1 = seed * 0.5, g2 = seed * 0.125;
    for (;;) {
        trash_callee_saved();
        r->rounds++;
        gr_fiber_switch(&r->fib, &r->main);
        f1++; f2 += 2; f3 += 3; f4 += 4; g1 += 1.0; g2 += 2.0;
        long n = r->rounds;
        if (f1 - 3000 != n || f2 - 6000 != 2 * n || f3 - 9000 != 3 * n ||
            f4 - 12000 != 4 * n || g1 != 1.5 + n || g2 != 0.375 + 2.0 * n)
            r->rounds = -1000000;                  /* the fiber's own locals broke */
    }
}

/* Twelve integers and eight doubles, all live across every switch: more than there are
 * callee-saved registers, so both registers and the stack must survive. */
static void test_callee_saved_registers(void)
{
    regs r = {0};
    gr_fiber_init_self(&r.main);
    CHECK(gr_fiber_create(&r.fib, &pool, scrambler, &r) == 0);
    volatile long seed = 1;
    long a = seed * 1, b = seed * 2, c = seed * 3, d = seed * 4, e = seed * 5, f = seed * 6;
    long g = seed * 7, h = seed * 8, i = seed * 9, j = seed * 10, k = seed * 11, l = seed * 12;
    double x1 = seed * 1.5, x2 = seed * 2.5, x3 = seed * 3.5, x4 = seed * 4.5;
    double x5 = seed * 5.5, x6 = seed * 6.5, x7 = seed * 7.5, x8 = seed * 8.5;
    for (int n = 0; n < 100; n++) {
        gr_fiber_switch(&r.main, &r.fib);
        a += 1; b += 2; c += 3; d += 4; e += 5; f += 6;
        g += 7; h += 8; i += 9; j += 10; k += 11; l += 12;
        x1 += 1; x2 += 2; x3 += 3; x4 += 4; x5 += 5; x6 += 6; x7 += 7; x8 += 8;
    }
    CHECK(a == 101 && b == 202 && c == 303 && d == 404 && e == 505 && f == 606);
    CHECK(g == 707 && h == 808 && i == 909 && j == 1010 && k == 1111 && l == 1212);
    CHECK(x1 == 101.5 && x2 == 202.5 && x3 == 303.5 && x4 == 404.5);
    CHECK(x5 == 505.5 && x6 == 606.5 && x7 == 707.5 && x8 == 808.5);
    CHECK(r.rounds == 100);                        /* and the fiber's locals held too */
    gr_fiber_destroy(&r.fib, &pool);
    gr_fiber_destroy_self(&r.main);
}

/* The same, pinned: each value lives in one named callee-saved register across the
 * switch (a local register variable stays in its register for the asm operands that
 * use it; the empty asms make the value be there before the call and be read from
 * there after it), so every register the switch must restore is checked by name. */
static void test_callee_saved_by_name(void)
{
    regs r = {0};
    gr_fiber_init_self(&r.main);
    CHECK(gr_fiber_create(&r.fib, &pool, scrambler, &r) == 0);
    int bad = 0;
    for (long n = 0; n < 10; n++) {
#if defined(__x86_64__)
        register long v0 __asm__("rbx") = n + 0x1111;
        register long v1 __asm__("r12") = n + 0x2222;
        register long v2 __asm__("r13") = n + 0x3333;
        register long v3 __asm__("r14") = n + 0x4444;
        register long v4 __asm__("r15") = n + 0x5555;
        __asm__ __volatile__("" : "+r"(v0), "+r"(v1), "+r"(v2), "+r"(v3), "+r"(v4));
        gr_fiber_switch(&r.main, &r.fib);
        __asm__ __volatile__("" : "+r"(v0), "+r"(v1), "+r"(v2), "+r"(v3), "+r"(v4));
        bad += (v0 != n + 0x1111) + (v1 != n + 0x2222) + (v2 != n + 0x3333) +
               (v3 != n + 0x4444) + (v4 != n + 0x5555);
#elif defined(__aarch64__)
        register long v0 __asm__("x19") = n + 19, v1 __asm__("x20") = n + 20;
        register long v2 __asm__("x21") = n + 21, v3 __asm__("x22") = n + 22;
        register long v4 __asm__("x23") = n + 23, v5 __asm__("x24") = n + 24;
        register long v6 __asm__("x25") = n + 25, v7 __asm__("x26") = n + 26;
        register long v8 __asm__("x27") = n + 27, v9 __asm__("x28") = n + 28;
        register double w0 __asm__("d8") = n + 8.5, w1 __asm__("d9") = n + 9.5;
        register double w2 __asm__("d10") = n + 10.5, w3 __asm__("d11") = n + 11.5;
        register double w4 __asm__("d12") = n + 12.5, w5 __asm__("d13") = n + 13.5;
        register double w6 __asm__("d14") = n + 14.5, w7 __asm__("d15") = n + 15.5;
#define PINNED "+r"(v0), "+r"(v1), "+r"(v2), "+r"(v3), "+r"(v4), "+r"(v5), "+r"(v6), \
               "+r"(v7), "+r"(v8), "+r"(v9), "+w"(w0), "+w"(w1), "+w"(w2), "+w"(w3), \
               "+w"(w4), "+w"(w5), "+w"(w6), "+w"(w7)
        __asm__ __volatile__("" : PINNED);
        gr_fiber_switch(&r.main, &r.fib);
        __asm__ __volatile__("" : PINNED);
#undef PINNED
        long iv[10] = { v0, v1, v2, v3, v4, v5, v6, v7, v8, v9 };
        double dv[8] = { w0, w1, w2, w3, w4, w5, w6, w7 };
        for (int i = 0; i < 10; i++) bad += iv[i] != n + 19 + i;
        for (int i = 0; i < 8; i++) bad += dv[i] != n + 8.5 + i;
#else
        gr_fiber_switch(&r.main, &r.fib);
#endif
    }
    CHECK_MSG(bad == 0, "%d callee-saved register values lost", bad);
    CHECK(r.rounds == 10);
    gr_fiber_destroy(&r.fib, &pool);
    gr_fiber_destroy_self(&r.main);
}

/* ---- stack alignment at entry ----------------------------------------------------- */

/* __builtin_frame_address forces a frame pointer here: it is the caller's stack
 * pointer at the call minus one word, so it is 16-byte aligned exactly when the stack
 * was aligned at the call, as the ABI requires (on x86-64 and aarch64 alike). */
__attribute__((noinline)) static uintptr_t frame_address(void)
{
    return (uintptr_t)__builtin_frame_address(0);
}

typedef struct align { gr_fiber main, fib; uintptr_t fa; } align;

static void report_alignment(void *arg)
{
    align *a = arg;
    a->fa = frame_address();
    for (;;) gr_fiber_switch(&a->fib, &a->main);
}

static void test_entry_stack_alignment(void)
{
    align a = {0};
    gr_fiber_init_self(&a.main);
    CHECK(gr_fiber_create(&a.fib, &pool, report_alignment, &a) == 0);
    gr_fiber_switch(&a.main, &a.fib);
    CHECK_MSG(a.fa % 16 == 0, "frame address %#lx", (unsigned long)a.fa);
    uintptr_t lo = (uintptr_t)a.fib.stack_base + (uintptr_t)sysconf(_SC_PAGESIZE);
    CHECK(a.fa > lo && a.fa < lo + a.fib.stack_bytes);   /* on the fiber's own stack */
    gr_fiber_destroy(&a.fib, &pool);
    gr_fiber_destroy_self(&a.main);
}

/* ---- floating-point control state ------------------------------------------------- */

#if defined(__x86_64__)
static uint32_t read_mxcsr(void)
{
    uint32_t v;
    __asm__ __volatile__("stmxcsr %0" : "=m"(v));
    return v;
}
#define MXCSR_RC(v) (((v) >> 13) & 3)              /* 1 = down, 2 = up */
#endif

typedef struct fpenv {
    gr_fiber main, fib;
    int fiber_mode_ok, fiber_sse_ok, created_mode;
} fpenv;

/* a/b in the current rounding mode (SSE arithmetic on x86-64). The constants it is
 * compared with are folded at compile time, round-to-nearest: 1/3 rounds down there and
 * 1/10 rounds up, so FE_UPWARD shows in the first and FE_DOWNWARD in the second. */
static double divide(double a, double b)
{
    volatile double x = a, y = b;
    return x / y;
}

static void rounder(void *arg)
{
    fpenv *e = arg;
    e->created_mode = fegetround();                  /* inherited from the creator */
    fesetround(FE_UPWARD);
    gr_fiber_switch(&e->fib, &e->main);              /* main sets FE_DOWNWARD meanwhile */
    e->fiber_mode_ok = fegetround() == FE_UPWARD;
    /* valgrind keeps the mode registers per fiber but computes SSE in nearest only */
    e->fiber_sse_ok = RUNNING_ON_VALGRIND || divide(1, 3) > 1.0 / 3.0;
#if defined(__x86_64__)
    e->fiber_sse_ok &= MXCSR_RC(read_mxcsr()) == 2;
#endif
    for (;;) gr_fiber_switch(&e->fib, &e->main);
}

static void test_rounding_mode_per_fiber(void)
{
    fpenv e = {0};
    gr_fiber_init_self(&e.main);
    fesetround(FE_TOWARDZERO);
    CHECK(gr_fiber_create(&e.fib, &pool, rounder, &e) == 0);
    fesetround(FE_TONEAREST);
    gr_fiber_switch(&e.main, &e.fib);
    CHECK(e.created_mode == FE_TOWARDZERO);
    CHECK(fegetround() == FE_TONEAREST);             /* the fiber's FE_UPWARD stayed there */
    CHECK(divide(1, 3) == 1.0 / 3.0 && divide(1, 10) == 0.1);
#if defined(__x86_64__)
    CHECK(MXCSR_RC(read_mxcsr()) == 0);
#endif
    fesetround(FE_DOWNWARD);
    gr_fiber_switch(&e.main, &e.fib);
    CHECK(e.fiber_mode_ok);
    CHECK(e.fiber_sse_ok);
    CHECK(fegetround() == FE_DOWNWARD);
    CHECK(RUNNING_ON_VALGRIND || divide(1, 10) < 0.1);
#if defined(__x86_64__)
    CHECK(MXCSR_RC(read_mxcsr()) == 1);
#endif
    fesetround(FE_TONEAREST);
    gr_fiber_destroy(&e.fib, &pool);
    gr_fiber_destroy_self(&e.main);
}

/* ---- stack pool ------------------------------------------------------------------- */

typedef struct once { gr_fiber main, fib; int ran; } once;

static void run_once(void *arg)
{
    once *o = arg;
    o->ran++;
    gr_fiber_switch(&o->fib, &o->main);
    abort();
}

static void test_stack_pool_reuse(void)
{
    gr_stack_pool p;
    CHECK(gr_stack_pool_init(&p, 100 * 1000) == 0);
    CHECK(p.stack_bytes >= 100 * 1000 && p.stack_bytes % (size_t)sysconf(_SC_PAGESIZE) == 0);
    once o = {0};
    gr_fiber_init_self(&o.main);
    void *bases[3];
    for (int round = 0; round < 3; round++) {         /* one at a time: one stack */
        CHECK(gr_fiber_create(&o.fib, &p, run_once, &o) == 0);
        bases[round] = o.fib.stack_base;
        gr_fiber_switch(&o.main, &o.fib);
        gr_fiber_destroy(&o.fib, &p);
    }
    CHECK(o.ran == 3);
    CHECK(bases[1] == bases[0] && bases[2] == bases[0]);
    CHECK(p.mapped == 1 && p.nfree == 1);
    gr_fiber f[3];                                      /* three at once: three stacks */
    for (int i = 0; i < 3; i++) CHECK(gr_fiber_create(&f[i], &p, run_once, &o) == 0);
    CHECK(p.mapped == 3 && p.nfree == 0);
    CHECK(f[0].stack_base == bases[0]);               /* the pooled one first */
    for (int i = 0; i < 3; i++) gr_fiber_destroy(&f[i], &p);   /* never run: fine too */
    CHECK(p.mapped == 3 && p.nfree == 3);
    for (int i = 0; i < 3; i++) CHECK(gr_fiber_create(&f[i], &p, run_once, &o) == 0);
    CHECK(p.mapped == 3);
    for (int i = 0; i < 3; i++) gr_fiber_destroy(&f[i], &p);
    gr_fiber_destroy_self(&o.main);
    gr_stack_pool_destroy(&p);
}

/* A destroyed pool's stacks go to the process-wide cache: a later pool of the same size
 * gets those very stacks and runs fibers on them, and gr_release_cached_stacks unmaps
 * them (msync on an unmapped page fails with ENOMEM). */
static void test_stacks_outlive_their_pool(void)
{
    enum { N = 5 };
    gr_release_cached_stacks();
    gr_stack_pool a, b;
    CHECK(gr_stack_pool_init(&a, 64 * 1024) == 0);
    once o = {0};
    gr_fiber_init_self(&o.main);
    gr_fiber f[N];
    void *first[N];
    for (int i = 0; i < N; i++) {
        CHECK(gr_fiber_create(&f[i], &a, run_once, &o) == 0);
        first[i] = f[i].stack_base;
    }
    for (int i = 0; i < N; i++) gr_fiber_destroy(&f[i], &a);
    gr_stack_pool_destroy(&a);
    CHECK(gr_stack_pool_init(&b, 64 * 1024) == 0);
    int reused = 0;
    for (int i = 0; i < N; i++) {
        CHECK(gr_fiber_create(&f[i], &b, run_once, &o) == 0);
        for (int k = 0; k < N; k++) reused += f[i].stack_base == first[k];
    }
    CHECK_MSG(reused == N, "%d of %d stacks reused", reused, N);
    gr_fiber_switch(&o.main, &f[N - 1]);
    CHECK(o.ran == 1);
    for (int i = 0; i < N; i++) gr_fiber_destroy(&f[i], &b);
    gr_stack_pool_destroy(&b);
    gr_release_cached_stacks();
    const long page = sysconf(_SC_PAGESIZE);
    for (int k = 0; k < N; k++) {
        errno = 0;
        CHECK(msync((char *)first[k] + page, (size_t)page, MS_ASYNC) == -1 && errno == ENOMEM);
    }
    gr_fiber_destroy_self(&o.main);
}

/* ---- deep recursion and the guard page -------------------------------------------- */

typedef struct deep { gr_fiber main, fib; uintptr_t lowest, deepest_array; long sum; } deep;

/* About 1 KiB of stack per level; the array is really used so it is not optimised out.
 * The depth reached is measured by frame address, not the array's: with ASan's
 * detect_stack_use_after_return the arrays live on a heap "fake stack". */
__attribute__((noinline)) static long recurse(deep *d, int depth)
{
    volatile char frame[1000];
    frame[0] = (char)depth;
    frame[999] = (char)(depth >> 8);
    uintptr_t fa = (uintptr_t)__builtin_frame_address(0);
    if (fa < d->lowest) d->lowest = fa;
    if (depth == 0) d->deepest_array = (uintptr_t)&frame[0];
    long below = depth > 0 ? recurse(d, depth - 1) : 0;
    return below + frame[0] + frame[999];
}

#define DEPTH 180                                       /* ~180 KiB of 256 KiB */

static void deep_entry(void *arg)
{
    deep *d = arg;
    d->lowest = UINTPTR_MAX;
    d->sum = recurse(d, DEPTH);
    for (;;) gr_fiber_switch(&d->fib, &d->main);
}

static void test_deep_recursion(void)
{
    deep d = {0};
    gr_fiber_init_self(&d.main);
    CHECK(gr_fiber_create(&d.fib, &pool, deep_entry, &d) == 0);
    gr_fiber_switch(&d.main, &d.fib);
    long expect = 0;
    for (int i = 0; i <= DEPTH; i++) expect += (char)i + (char)(i >> 8);
    CHECK(d.sum == expect);
    uintptr_t lo = (uintptr_t)d.fib.stack_base + (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t hi = lo + d.fib.stack_bytes;
    CHECK(d.lowest > lo && d.lowest < hi);
    bool on_stack = d.deepest_array > lo && d.deepest_array < hi;   /* else fake stack */
    CHECK_MSG(!on_stack || hi - d.lowest > (uintptr_t)DEPTH * 1000, "used only %lu bytes",
              (unsigned long)(hi - d.lowest));
    gr_fiber_destroy(&d.fib, &pool);
    gr_fiber_destroy_self(&d.main);
}

/* Finds the /proc/self/maps line covering addr and copies its permissions. */
static int maps_perms(uintptr_t addr, char perms[5])
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return 0;
    unsigned long lo, hi;
    char p[5];
    int found = 0;
    while (!found && fscanf(f, "%lx-%lx %4s%*[^\n]", &lo, &hi, p) == 3)
        if (addr >= lo && addr < hi) {
            memcpy(perms, p, 5);
            found = 1;
        }
    fclose(f);
    return found;
}

static void test_guard_page(void)
{
    gr_fiber f;
    CHECK(gr_fiber_create(&f, &pool, run_once, NULL) == 0);
    uintptr_t base = (uintptr_t)f.stack_base, page = (uintptr_t)sysconf(_SC_PAGESIZE);
    char perms[5] = "";
    CHECK(maps_perms(base, perms) && strncmp(perms, "---", 3) == 0);         /* guard */
    CHECK(maps_perms(base + page - 1, perms) && strncmp(perms, "---", 3) == 0);
    CHECK(maps_perms(base + page, perms) && strncmp(perms, "rw", 2) == 0);   /* stack */
    CHECK(maps_perms(base + page + f.stack_bytes - 1, perms) && strncmp(perms, "rw", 2) == 0);
    gr_fiber_destroy(&f, &pool);
}

/* ---- an entry function that returns ----------------------------------------------- */

static void returns(void *arg) { (void)arg; }

/* In a child process, so the abort stays there; its message is silenced. */
static void test_returning_entry_aborts(void)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stderr)) _exit(1);
        gr_fiber self, f;
        gr_fiber_init_self(&self);
        if (gr_fiber_create(&f, &pool, returns, NULL) == 0) gr_fiber_switch(&self, &f);
        _exit(0);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "child status %#x", status);
}

int main(void)
{
    CHECK(gr_stack_pool_init(&pool, STACK_BYTES) == 0);
    RUN(test_ping_pong);
    RUN(test_many_fibers);
    RUN(test_fiber_to_fiber);
    RUN(test_resume_on_other_thread);
    RUN(test_callee_saved_registers);
    RUN(test_callee_saved_by_name);
    RUN(test_entry_stack_alignment);
    RUN(test_rounding_mode_per_fiber);
    RUN(test_stack_pool_reuse);
    RUN(test_stacks_outlive_their_pool);
    RUN(test_deep_recursion);
    RUN(test_guard_page);
    RUN(test_returning_entry_aborts);
    gr_stack_pool_destroy(&pool);
    return check_finish();
}
