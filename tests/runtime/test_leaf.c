/* Unit tests of the runtime's leaf modules: the Chase-Lev deque (semantics, growth, and
 * every item taken exactly once under concurrent stealing), fibers (ping-pong, resuming
 * on another pthread, register and FP-mode preservation, deep stacks), the lock-free key
 * map (concurrent inserts of overlapping keys) and the packet-stealing buffer manager. */
#include "gramps/bufpool.h"
#include "gramps/dq.h"
#include "gramps/fiber.h"
#include "gramps/keymap.h"
#include "tests/check.h"

#include <fenv.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define ITEMS 20000

/* ---- deque ------------------------------------------------------------------------------ */

static void test_dq_semantics(void)
{
    gr_dq dq;
    CHECK(gr_dq_init(&dq, 2) == 0);
    CHECK(gr_dq_pop(&dq) == NULL && gr_dq_steal(&dq) == NULL);
    for (uintptr_t i = 1; i <= 100; i++) CHECK(gr_dq_push(&dq, (void *)i) == 0);   /* grows */
    CHECK(gr_dq_size(&dq) == 100);
    CHECK(gr_dq_pop(&dq) == (void *)100);              /* owner: LIFO */
    CHECK(gr_dq_steal(&dq) == (void *)1);              /* thief: FIFO */
    uintptr_t n = 0;
    while (gr_dq_pop(&dq)) n++;
    CHECK(n == 98 && gr_dq_size(&dq) == 0);
    gr_dq_destroy(&dq);
}

typedef struct dq_shared { gr_dq dq; _Atomic(int) taken[ITEMS + 1]; _Atomic(bool) done; } dq_shared;

static void *thief(void *arg)
{
    dq_shared *s = arg;
    while (!atomic_load(&s->done) || gr_dq_size(&s->dq) > 0) {
        uintptr_t x = (uintptr_t)gr_dq_steal(&s->dq);
        if (x) atomic_fetch_add(&s->taken[x], 1);
    }
    return NULL;
}

static void test_dq_concurrent(void)
{
    static dq_shared s;
    memset(&s, 0, sizeof s);
    gr_dq_init(&s.dq, 3);
    pthread_t t[3];
    for (int i = 0; i < 3; i++) pthread_create(&t[i], NULL, thief, &s);
    for (uintptr_t i = 1; i <= ITEMS; i++) {
        gr_dq_push(&s.dq, (void *)i);
        if (i % 3 == 0) {
            uintptr_t x = (uintptr_t)gr_dq_pop(&s.dq);
            if (x) atomic_fetch_add(&s.taken[x], 1);
        }
    }
    for (uintptr_t x; (x = (uintptr_t)gr_dq_pop(&s.dq));) atomic_fetch_add(&s.taken[x], 1);
    atomic_store(&s.done, true);
    for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
    int wrong = 0;
    for (int i = 1; i <= ITEMS; i++) wrong += atomic_load(&s.taken[i]) != 1;
    CHECK_MSG(wrong == 0, "%d items taken zero or several times", wrong);
    gr_dq_destroy(&s.dq);
}

/* ---- fibers ----------------------------------------------------------------------------- */

typedef struct ping { gr_fiber main, fib; int count; double acc; int round; } ping;

static void ping_entry(void *arg)
{
    ping *p = arg;
    double local = 1.5;                         /* lives across switches */
    for (;;) {
        p->count++;
        local *= 2.0;
        p->acc = local;
        gr_fiber_switch(&p->fib, &p->main);
    }
}

static void test_fiber_ping_pong(void)
{
    gr_stack_pool pool;
    gr_stack_pool_init(&pool, 64 * 1024);
    ping p = {0};
    gr_fiber_init_self(&p.main);
    CHECK(gr_fiber_create(&p.fib, &pool, ping_entry, &p) == 0);
    volatile long keep = 12345;                 /* callee-saved state of the switcher */
    for (int i = 0; i < 10; i++) gr_fiber_switch(&p.main, &p.fib);
    CHECK(p.count == 10 && p.acc == 1.5 * 1024.0 && keep == 12345);
    gr_fiber_destroy(&p.fib, &pool);
    CHECK(gr_fiber_create(&p.fib, &pool, ping_entry, &p) == 0);   /* pooled stack reused */
    CHECK(pool.mapped == 1);
    gr_fiber_destroy(&p.fib, &pool);
    gr_fiber_destroy_self(&p.main);
    gr_stack_pool_destroy(&pool);
}

/* A fiber suspended by one pthread and resumed by another. */
typedef struct migrate {
    gr_fiber fib;
    gr_fiber *back;
    pthread_t seen[2];
    _Atomic(int) step;
    pthread_barrier_t both_alive;               /* so the two pthread ids are distinct */
} migrate;

static void migrate_entry(void *arg)
{
    migrate *m = arg;
    for (;;) {
        gr_fiber *back = m->back;
        m->seen[atomic_load(&m->step) % 2] = pthread_self();
        atomic_fetch_add(&m->step, 1);          /* last touch of m before switching back */
        gr_fiber_switch(&m->fib, back);
    }
}

static void *resume_on_thread(void *arg)
{
    migrate *m = arg;
    gr_fiber self;
    gr_fiber_init_self(&self);
    m->back = &self;
    gr_fiber_switch(&self, &m->fib);
    gr_fiber_destroy_self(&self);
    pthread_barrier_wait(&m->both_alive);
    return NULL;
}

static void test_fiber_migrates(void)
{
    gr_stack_pool pool;
    gr_stack_pool_init(&pool, 64 * 1024);
    migrate m = {0};
    CHECK(gr_fiber_create(&m.fib, &pool, migrate_entry, &m) == 0);
    pthread_barrier_init(&m.both_alive, NULL, 2);
    pthread_t a, b;
    pthread_create(&a, NULL, resume_on_thread, &m);
    while (atomic_load(&m.step) < 1) sched_yield();
    pthread_create(&b, NULL, resume_on_thread, &m);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    pthread_barrier_destroy(&m.both_alive);
    CHECK(m.step == 2 && !pthread_equal(m.seen[0], m.seen[1]));
    gr_fiber_destroy(&m.fib, &pool);
    gr_stack_pool_destroy(&pool);
}

/* The rounding mode is part of a fiber's context: setting it inside does not leak out. */
static void round_entry(void *arg)
{
    ping *p = arg;
    fesetround(FE_UPWARD);
    for (;;) {
        p->round = fegetround();
        gr_fiber_switch(&p->fib, &p->main);
    }
}

static void test_fiber_fp_mode(void)
{
    gr_stack_pool pool;
    gr_stack_pool_init(&pool, 64 * 1024);
    ping p = {0};
    gr_fiber_init_self(&p.main);
    gr_fiber_create(&p.fib, &pool, round_entry, &p);
    gr_fiber_switch(&p.main, &p.fib);
    CHECK(fegetround() == FE_TONEAREST);
    gr_fiber_switch(&p.main, &p.fib);
    CHECK(p.round == FE_UPWARD);
    gr_fiber_destroy(&p.fib, &pool);
    gr_fiber_destroy_self(&p.main);
    gr_stack_pool_destroy(&pool);
}

static int recurse(int n) { volatile char pad[512]; pad[0] = (char)n; return n ? recurse(n - 1) + pad[0] - (char)n + 1 : 0; }

static void deep_entry(void *arg)
{
    ping *p = arg;
    p->count = recurse(200);                    /* ~100 KiB of a 256 KiB stack */
    for (;;) gr_fiber_switch(&p->fib, &p->main);
}

static void test_fiber_deep_stack(void)
{
    gr_stack_pool pool;
    gr_stack_pool_init(&pool, 256 * 1024);
    ping p = {0};
    gr_fiber_init_self(&p.main);
    gr_fiber_create(&p.fib, &pool, deep_entry, &p);
    gr_fiber_switch(&p.main, &p.fib);
    CHECK(p.count == 200);
    gr_fiber_destroy(&p.fib, &pool);
    gr_fiber_destroy_self(&p.main);
    gr_stack_pool_destroy(&pool);
}

/* ---- key map ------------------------------------------------------------------------------ */

typedef struct km_shared { gr_keymap m; _Atomic(int) inits[ITEMS]; _Atomic(int) bad; uint64_t *published; } km_shared;

static void km_init(void *ctx, uint64_t key, uint32_t index)
{
    km_shared *s = ctx;
    atomic_fetch_add(&s->inits[index], 1);
    s->published[index] = key;                  /* must be visible to every other finder */
}

static void *km_worker(void *arg)
{
    km_shared *s = arg;
    for (uint64_t k = 0; k < 10000; k++) {
        uint64_t key = k * 7919 + 3;
        uint32_t i = gr_keymap_get(&s->m, key, km_init, s);
        if (i >= 10000 || s->published[i] != key) atomic_fetch_add(&s->bad, 1);
    }
    return NULL;
}

static void test_keymap(void)
{
    static km_shared s;
    memset(&s, 0, sizeof s);
    s.published = calloc(ITEMS, sizeof *s.published);
    CHECK(gr_keymap_init(&s.m, 10000) == 0);
    pthread_t t[4];
    for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, km_worker, &s);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    CHECK(atomic_load(&s.bad) == 0 && atomic_load(&s.m.count) == 10000);
    int wrong = 0;
    for (int i = 0; i < 10000; i++) wrong += atomic_load(&s.inits[i]) != 1;
    CHECK_MSG(wrong == 0, "%d indices initialised zero or several times", wrong);
    CHECK(gr_keymap_find(&s.m, 3) == gr_keymap_get(&s.m, 3, NULL, NULL));
    CHECK(gr_keymap_find(&s.m, 5) == UINT32_MAX);
    CHECK(gr_keymap_get(&s.m, 5, NULL, NULL) == GR_KEYMAP_FULL);
    CHECK(gr_keymap_get(&s.m, UINT64_MAX, NULL, NULL) == GR_KEYMAP_BADKEY);
    gr_keymap_destroy(&s.m);
    free(s.published);
}

/* ---- buffer manager ---------------------------------------------------------------------- */

static void test_bufpool_local(void)
{
    gr_bufpool p;
    CHECK(gr_buf_init(&p, 100, 2, 8) == 0);
    CHECK(p.packet_bytes == 128);
    void *a = gr_buf_alloc(&p, 0);
    CHECK(((uintptr_t)a & 63) == 0);
    gr_buf_free(&p, 0, a);
    CHECK(gr_buf_alloc(&p, 0) == a);            /* LIFO: the warm packet comes back */
    void *got[64];
    for (int i = 0; i < 64; i++) got[i] = gr_buf_alloc(&p, 0);   /* exhausts, steals, mallocs */
    CHECK(atomic_load(&p.steals) >= 1 && atomic_load(&p.mallocs) >= 1);
    for (int i = 0; i < 64; i++) gr_buf_free(&p, 1, got[i]);
    gr_buf_free(&p, 0, a);
    gr_buf_destroy(&p);
}

typedef struct bp_shared { gr_bufpool p; unsigned id; _Atomic(int) bad; } bp_shared;
typedef struct bp_arg { bp_shared *s; unsigned worker; } bp_arg;

static void *bp_worker(void *arg)
{
    bp_arg *a = arg;
    void *held[16];
    for (int round = 0; round < 2000; round++) {
        for (int i = 0; i < 16; i++) {
            held[i] = gr_buf_alloc(&a->s->p, a->worker);
            memset(held[i], (int)(a->worker * 16 + i), a->s->p.packet_bytes);
        }
        for (int i = 0; i < 16; i++) {
            unsigned char *b = held[i];
            if (b[a->s->p.packet_bytes - 1] != (unsigned char)(a->worker * 16 + i))
                atomic_fetch_add(&a->s->bad, 1);   /* someone else was handed our packet */
            gr_buf_free(&a->s->p, (a->worker + (unsigned)round) % 4, held[i]);
        }
    }
    return NULL;
}

static void test_bufpool_concurrent(void)
{
    static bp_shared s;
    memset(&s, 0, sizeof s);
    gr_buf_init(&s.p, 64, 4, 16);
    pthread_t t[4];
    bp_arg args[4];
    for (unsigned i = 0; i < 4; i++) {
        args[i] = (bp_arg){&s, i};
        pthread_create(&t[i], NULL, bp_worker, &args[i]);
    }
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    CHECK(atomic_load(&s.bad) == 0);
    gr_buf_destroy(&s.p);
}

int main(void)
{
    RUN(test_dq_semantics);
    RUN(test_dq_concurrent);
    RUN(test_fiber_ping_pong);
    RUN(test_fiber_migrates);
    RUN(test_fiber_fp_mode);
    RUN(test_fiber_deep_stack);
    RUN(test_keymap);
    RUN(test_bufpool_local);
    RUN(test_bufpool_concurrent);
    return check_finish();
}
