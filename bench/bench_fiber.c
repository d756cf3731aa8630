/* Fiber and deque micro-benchmarks: "name value unit" lines.
 *  fiber_switch_round_trip_ns: switch into a fiber and back (two gr_fiber_switch calls).
 *  dq_push_pop_ns: an owner push followed by a pop on an uncontended deque. */
#include "gramps/dq.h"
#include "gramps/fiber.h"

#include <stdio.h>
#include <time.h>

#define ROUNDS 5000000

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

typedef struct pair { gr_fiber main, fib; } pair;

static void bounce(void *arg)
{
    pair *p = arg;
    for (;;) gr_fiber_switch(&p->fib, &p->main);
}

int main(void)
{
    gr_stack_pool pool;
    gr_stack_pool_init(&pool, 64 * 1024);
    pair p;
    gr_fiber_init_self(&p.main);
    gr_fiber_create(&p.fib, &pool, bounce, &p);
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = now_ns();
        for (int i = 0; i < ROUNDS; i++) gr_fiber_switch(&p.main, &p.fib);
        double t = (now_ns() - t0) / ROUNDS;
        if (t < best) best = t;
    }
    printf("fiber_switch_round_trip_ns %.1f ns\n", best);
    gr_fiber_destroy(&p.fib, &pool);
    gr_fiber_destroy_self(&p.main);
    gr_stack_pool_destroy(&pool);

    gr_dq dq;
    gr_dq_init(&dq, 6);
    best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = now_ns();
        for (int i = 0; i < ROUNDS; i++) {
            gr_dq_push(&dq, &dq);
            gr_dq_pop(&dq);
        }
        double t = (now_ns() - t0) / ROUNDS;
        if (t < best) best = t;
    }
    printf("dq_push_pop_ns %.1f ns\n", best);
    gr_dq_destroy(&dq);
    return 0;
}
