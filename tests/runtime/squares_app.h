/* squares_app.h — the smallest application with every kind of step, for the scheduler
 * tests (test_schedulers.c, test_partition_ilp.c): a Thread source commits packets
 * 1..n one at a time into "numbers", a Shader squares each into "squares" (both hold 4
 * packets), a Thread sink adds them up. Stage ids: source 0, square 1, sink 2 (the
 * Thread stages a launch starts). Include once, after tests/runtime/run_graph.h. */
#ifndef TESTS_RUNTIME_SQUARES_APP_H
#define TESTS_RUNTIME_SQUARES_APP_H

#include <stdint.h>

typedef struct squares_app { uint64_t sum; uint32_t n; } squares_app;

/* The sum of i^2 for i in 1..n (a constant expression for a constant n). */
#define SQUARES_SUM(n) ((uint64_t)(n) * ((n) + 1) * (2 * (n) + 1) / 6)

/* Thread: packets 1..n, one reserve/commit each. */
static inline void squares_source(gr_ctx *c)
{
    squares_app *a = gr_user(c);
    for (uint32_t i = 1; i <= a->n; i++) {
        gr_window w;
        gr_reserve_out(c, 0, 1, &w);
        *(uint32_t *)w.mem = i;
        gr_commit_out(c, 0, 1);
    }
}

/* Shader: squares its packet. */
static inline void squares_square(gr_ctx *c)
{
    uint32_t x = *(uint32_t *)gr_input(c, NULL);
    *(uint64_t *)gr_output(c, 0) = (uint64_t)x * x;
}

/* Thread: adds everything up. */
static inline void squares_sink(gr_ctx *c)
{
    squares_app *a = gr_user(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) != GR_NOMORE) {
        a->sum += *(uint64_t *)w.mem;
        gr_commit(c, 0, 1);
    }
}

static inline gr_graph *squares_graph(squares_app *a)
{
    return chain_graph(
        &(gr_queue_desc){.name = "numbers", .packet_bytes = 4, .capacity = 4},
        &(gr_queue_desc){.name = "squares", .packet_bytes = 8, .capacity = 4},
        &(gr_stage_desc){.name = "src", .kind = GR_THREAD, .main = squares_source, .user = a},
        &(gr_stage_desc){.name = "square", .kind = GR_SHADER, .main = squares_square},
        GR_BIND_OUTPUT,
        &(gr_stage_desc){.name = "sink", .kind = GR_THREAD, .main = squares_sink, .user = a});
}

#endif
