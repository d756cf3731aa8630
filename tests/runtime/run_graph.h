/* run_graph.h — for the runtime tests that build a small chain of stages and run it under
 * every scheduling policy, at several worker counts and in the virtual-time simulator:
 * the policy names, the worker counts, the chain and a launch that waits for the run.
 * Include once per test program, after gramps/gramps.h. */
#ifndef TESTS_RUNTIME_RUN_GRAPH_H
#define TESTS_RUNTIME_RUN_GRAPH_H

#include "gramps/gramps.h"

static const char *const every_policy[] = {"gramps", "task-stealing", "breadth-first",
                                           "static", "qes", "pss"};
#define POLICIES ((int)(sizeof every_policy / sizeof *every_policy))

/* One worker (no stealing), two, an odd count, and more workers than this machine's cores. */
static const unsigned worker_counts[] = {1, 2, 3, 8};
#define WORKER_COUNTS ((int)(sizeof worker_counts / sizeof *worker_counts))

/* Runs g under the policy `sched` with `workers` threads, or on `simulate` virtual
 * workers (0: a real run), and waits for it. A run that makes no progress for 20 s fails
 * with the queue states, so a hang fails the test instead of stalling the suite. */
static inline gr_status launch_and_wait(gr_graph *g, const char *sched, unsigned workers,
                                        unsigned simulate)
{
    gr_launch_opts o = {.workers = workers, .scheduler = sched, .simulate = simulate,
                        .deadlock_seconds = 20};
    gr_status st = gr_launch(g, &o, NULL, 0);
    return st == GR_OK ? gr_wait(g) : st;
}

/* source -> a -> middle -> b -> sink: the middle stage writes b through `mode`
 * (GR_BIND_OUTPUT or GR_BIND_INPLACE). */
static inline gr_graph *chain_graph(const gr_queue_desc *a, const gr_queue_desc *b,
                                    const gr_stage_desc *source, const gr_stage_desc *middle,
                                    gr_bind_mode mode, const gr_stage_desc *sink)
{
    gr_graph *g = gr_graph_create();
    int qa = gr_queue(g, a), qb = gr_queue(g, b);
    int src = gr_stage(g, source), mid = gr_stage(g, middle), snk = gr_stage(g, sink);
    gr_bind(g, src, GR_BIND_OUTPUT, qa);
    gr_bind(g, mid, GR_BIND_INPUT, qa);
    gr_bind(g, mid, mode, qb);
    gr_bind(g, snk, GR_BIND_INPUT, qb);
    return g;
}

#endif
