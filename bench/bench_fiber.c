/* bench/bench_fiber.c — micro-benchmarks of the runtime's leaf modules, one line each of
 * the form "name value unit" (bench/run_bench.sh collects them). Each figure is the
 * best of 3 timed repetitions, single-threaded and uncontended:
 *   fiber_switch_round_trip_ns  switch into a fiber and back (two gr_fiber_switch)
 *   fiber_create_destroy_ns     gr_fiber_create + gr_fiber_destroy on a pooled stack
 *   dq_push_pop_ns              owner push then pop on a work-stealing deque
 *   dq_push_steal_ns            push then steal (the CAS path) on the same deque
 *   keymap_get_hit_ns           gr_keymap_get of a key already present
 *   bufpool_alloc_free_ns       gr_buf_alloc then gr_buf_free on one's own partition */
#include "gramps/bufpool.h"
#include "gramps/dq.h"
#include "gramps/fiber.h"
#include "gramps/keymap.h"

#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define REPS 3

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Best of REPS runs of body(ctx, n), in ns per iteration. */
static double best_ns(void (*body)(void *, long), void *ctx, long n)
{
    double best = 1e300;
    for (int r = 0; r < REPS; r++) {
        double t0 = now_ns();
        body(ctx, n);
        double t = (now_ns() - t0) / (double)n;
        if (t < best) best = t;
    }
    return best;
}

/* ---- fibers ---------------------------------------------------------------------- */

typedef struct pair { gr_fiber main, fib; gr_stack_pool pool; } pair;

static void bounce(void *arg)
{
    pair *p = arg;
    for (;;) gr_fiber_switch(&p->fib, &p->main);
}

static void round_trips(void *ctx, long n)
{
    pair *p = ctx;
    for (long i = 0; i < n; i++) gr_fiber_switch(&p->main, &p->fib);
}

static void create_destroy(void *ctx, long n)
{
    pair *p = ctx;
    gr_fiber f;
    for (long i = 0; i < n; i++) {
        if (gr_fiber_create(&f, &p->pool, bounce, p) != 0) return;
        gr_fiber_destroy(&f, &p->pool);
    }
}

static int bench_fibers(void)
{
    static pair p;
    if (gr_stack_pool_init(&p.pool, 64 * 1024) != 0) return -1;
    gr_fiber_init_self(&p.main);
    if (gr_fiber_create(&p.fib, &p.pool, bounce, &p) != 0) return -1;
    printf("fiber_switch_round_trip_ns %.1f ns\n", best_ns(round_trips, &p, 10000000));
    gr_fiber_destroy(&p.fib, &p.pool);
    printf("fiber_create_destroy_ns %.1f ns\n", best_ns(create_destroy, &p, 1000000));
    gr_fiber_destroy_self(&p.main);
    gr_stack_pool_destroy(&p.pool);
    return 0;
}

/* ---- deque ----------------------------------------------------------------------- */

static void push_pop(void *ctx, long n)
{
    gr_dq *dq = ctx;
    for (long i = 0; i < n; i++) {
        gr_dq_push(dq, dq);
        if (!gr_dq_pop(dq)) return;
    }
}

static void push_steal(void *ctx, long n)
{
    gr_dq *dq = ctx;
    for (long i = 0; i < n; i++) {
        gr_dq_push(dq, dq);
        if (!gr_dq_steal(dq)) return;
    }
}

static int bench_dq(void)
{
    static gr_dq dq;          /* static: gr_dq wants 64-byte alignment */
    gr_dq_init(&dq, 6);
    printf("dq_push_pop_ns %.1f ns\n", best_ns(push_pop, &dq, 10000000));
    printf("dq_push_steal_ns %.1f ns\n", best_ns(push_steal, &dq, 10000000));
    gr_dq_destroy(&dq);
    return 0;
}

/* ---- keymap and buffer pool ------------------------------------------------------ */

#define NKEYS 4096

static void keymap_hits(void *ctx, long n)
{
    gr_keymap *m = ctx;
    uint32_t sum = 0;
    for (long i = 0; i < n; i++)
        sum += gr_keymap_get(m, (uint64_t)(i & (NKEYS - 1)) << 20, NULL, NULL);
    if (sum == 1) puts("");   /* keeps the loop from being optimised away */
}

static void alloc_free(void *ctx, long n)
{
    gr_bufpool *p = ctx;
    for (long i = 0; i < n; i++) {
        void *pkt = gr_buf_alloc(p, 0);
        if (!pkt) return;
        gr_buf_free(p, 0, pkt);
    }
}

static int bench_keymap_bufpool(void)
{
    gr_keymap m;
    if (gr_keymap_init(&m, NKEYS) != 0) return -1;
    for (uint64_t k = 0; k < NKEYS; k++) gr_keymap_get(&m, k << 20, NULL, NULL);
    printf("keymap_get_hit_ns %.1f ns\n", best_ns(keymap_hits, &m, 10000000));
    gr_keymap_destroy(&m);
    gr_bufpool p;
    if (gr_buf_init(&p, 256, 2, 64) != 0) return -1;
    printf("bufpool_alloc_free_ns %.1f ns\n", best_ns(alloc_free, &p, 10000000));
    gr_buf_destroy(&p);
    return 0;
}

int main(void)
{
    if (bench_fibers() != 0 || bench_dq() != 0 || bench_keymap_bufpool() != 0) {
        fprintf(stderr, "bench_fiber: out of memory\n");
        return 1;
    }
    return 0;
}
