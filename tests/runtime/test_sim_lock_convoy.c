/* The simulator's lock convoy (gramps/simulate.c's gr_sim_lock): Breadth-First's workers
 * all take the turn barrier's lock when the broadcast wakes them, at the same virtual
 * time, so each waits for those before it and pays a contended hand-off. Checked by
 * structure, never by host time: the hand-off is set to 1 ms (GRAMPS_SIM_COST), far
 * above anything measured in a critical section here, so the waits are multiples of it.
 * With one virtual worker nobody waits; with more the charged wait grows with the
 * worker count, and so does the mean wait per hand-off (the k-th waiter waits for k - 1
 * hand-offs, not one); a real run and the other policies charge none. */
#include "gramps/gramps.h"
#include "tests/check.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#define PACKETS 200

typedef struct flow {
    _Atomic(uint64_t) sum;
} flow;

static void source(gr_ctx *c)
{
    gr_window w;
    for (uint64_t i = 0; i < PACKETS; i++) {
        gr_reserve_out(c, 0, 1, &w);
        *(uint64_t *)w.mem = i;
        gr_commit_out(c, 0, 1);
    }
}

static void square(gr_ctx *c)
{
    uint64_t v = *(const uint64_t *)gr_input(c, NULL);
    *(uint64_t *)gr_output(c, 0) = v * v;
}

static void add(gr_ctx *c)
{
    flow *f = gr_user(c);
    atomic_fetch_add(&f->sum, *(const uint64_t *)gr_input(c, NULL));
}

/* source (Thread) -> square (Shader) -> add (Shader): three Breadth-First turns. */
static gr_graph *graph(flow *f)
{
    gr_graph *g = gr_graph_create();
    int work = gr_queue(g, &(gr_queue_desc){.name = "work", .packet_bytes = 8, .capacity = 64});
    int squares = gr_queue(g, &(gr_queue_desc){.name = "squares", .packet_bytes = 8,
                                               .capacity = 64});
    int src = gr_stage(g, &(gr_stage_desc){.name = "source", .kind = GR_THREAD, .main = source});
    int sq = gr_stage(g, &(gr_stage_desc){.name = "square", .kind = GR_SHADER, .main = square});
    int sum = gr_stage(g, &(gr_stage_desc){.name = "add", .kind = GR_SHADER, .main = add,
                                           .user = f});
    gr_bind(g, src, GR_BIND_OUTPUT, work);
    gr_bind(g, sq, GR_BIND_INPUT, work);
    gr_bind(g, sq, GR_BIND_OUTPUT, squares);
    gr_bind(g, sum, GR_BIND_INPUT, squares);
    return g;
}

typedef struct convoy {
    uint64_t handoffs;
    double wait_ms;
} convoy;

/* Runs the graph under `sched` at p virtual workers (0: a real run on 2 threads); the
 * workers' lock hand-offs and waits summed. */
static convoy run(const char *sched, unsigned p)
{
    convoy c = {0};
    flow f = {0};
    gr_graph *g = graph(&f);
    gr_launch_opts o = {.scheduler = sched, .workers = p ? 0 : 2, .simulate = p,
                        .stack_bytes = 64 * 1024, .deadlock_seconds = 30};
    gr_status st = gr_launch(g, &o, NULL, 0);
    if (st == GR_OK) st = gr_wait(g);
    CHECK_MSG(st == GR_OK, "%s at %u: %s", sched, p, gr_error(g));
    if (st == GR_OK) {
        uint64_t expect = 0;
        for (uint64_t i = 0; i < PACKETS; i++) expect += i * i;
        CHECK_MSG(atomic_load(&f.sum) == expect, "%s at %u: wrong sum", sched, p);
        const gr_stats *s = gr_get_stats(g);
        for (unsigned w = 0; w < s->workers; w++) {
            c.handoffs += s->per_worker[w].lock_handoffs;
            c.wait_ms += s->per_worker[w].lock_wait_ms;
        }
    }
    gr_graph_destroy(g);
    return c;
}

static void test_one_worker_never_waits(void)
{
    convoy c = run("breadth-first", 1);
    CHECK_MSG(c.handoffs == 0 && c.wait_ms == 0, "%llu hand-offs, %.3f ms",
              (unsigned long long)c.handoffs, c.wait_ms);
}

/* Each turn's broadcast wakes every worker at once: at 4 workers up to 3 wait, the last
 * for 3 hand-offs; at 16 up to 15, the last for 15. */
static void test_wait_grows_with_workers(void)
{
    convoy c4 = run("breadth-first", 4), c16 = run("breadth-first", 16);
    CHECK_MSG(c4.handoffs > 0, "no contended hand-off at 4 workers");
    CHECK_MSG(c16.handoffs > c4.handoffs, "hand-offs: %llu at 16 workers, %llu at 4",
              (unsigned long long)c16.handoffs, (unsigned long long)c4.handoffs);
    CHECK_MSG(c4.wait_ms >= (double)c4.handoffs, "4 workers: %.3f ms for %llu 1 ms hand-offs",
              c4.wait_ms, (unsigned long long)c4.handoffs);
    double mean4 = c4.handoffs ? c4.wait_ms / (double)c4.handoffs : 0;
    double mean16 = c16.handoffs ? c16.wait_ms / (double)c16.handoffs : 0;
    CHECK_MSG(mean16 > 2 * mean4, "mean wait per hand-off %.3f ms at 16 workers, %.3f at 4: "
              "no convoy", mean16, mean4);
}

/* Only Breadth-First's turn lock is modelled, and only in a simulated run. */
static void test_no_charge_elsewhere(void)
{
    CHECK(run("breadth-first", 0).handoffs == 0);
    CHECK(run("gramps", 16).handoffs == 0);
}

int main(void)
{
    setenv("GRAMPS_SIM_COST", "handoff=1000000", 1);
    RUN(test_one_worker_never_waits);
    RUN(test_wait_grows_with_workers);
    RUN(test_no_charge_elsewhere);
    return check_finish();
}
