/* State affinity (gramps/inbox.h, sched.c): under the GRAMPS policy a Thread instance that
 * declared private state (gr_state_bytes) and is woken on another worker goes back to
 * the worker it last ran on, instead of running where it was woken. Checked by
 * structure, never by time: a Thread sink fed by three Thread sources, each on a worker
 * of its own, is woken from all of them, and counts the runtime calls it came back from
 * on another worker (as test_sim_remote does); and a Thread source with state, blocked on
 * a full queue, is woken by the Shader consumers that free it on other workers (the
 * raster graph's Bin, woken by Tile-Shade). Under GRAMPS, QES and PSS both must stay
 * put; every policy must still deliver everything (real threads and virtual workers). */
#include "gramps/gramps.h"
#include "tests/check.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#define PACKETS 200                       /* per source */
#define SOURCES 3

typedef struct flow {
    size_t state;                         /* the sink's gr_state_bytes */
    _Atomic(uint64_t) sum, resumed, moved;
} flow;

static void source(gr_ctx *c)
{
    gr_window w;
    for (uint32_t i = 0; i < PACKETS; i++) {
        for (volatile int k = 0; k < 3000; k++) {}
        gr_reserve_out(c, 0, 1, &w);
        *(uint64_t *)w.mem = 3ull * i;
        gr_commit_out(c, 0, 1);
    }
}

/* Counts each runtime call it came back from, and those on another worker. */
static void sink(gr_ctx *c)
{
    flow *f = gr_user(c);
    gr_state_bytes(c, f->state);
    unsigned on = gr_worker_id(c);
    gr_window w;
    for (;;) {
        gr_status st = gr_reserve(c, 0, 1, &w);
        atomic_fetch_add(&f->resumed, 1);
        if (gr_worker_id(c) != on) atomic_fetch_add(&f->moved, 1);
        on = gr_worker_id(c);
        if (st != GR_OK) break;
        atomic_fetch_add(&f->sum, *(const uint64_t *)w.mem);
        gr_commit(c, 0, 1);
    }
}

/* SOURCES Thread sources -> sink (Thread). Each source's instance starts on a worker of
 * its own (launch spreads runnable instances round-robin). */
static gr_graph *graph(flow *f)
{
    gr_graph *g = gr_graph_create();
    int work = gr_queue(g, &(gr_queue_desc){.name = "work", .packet_bytes = sizeof(uint64_t),
                                            .capacity = 32});
    static const char *const names[SOURCES] = {"source-0", "source-1", "source-2"};
    for (int k = 0; k < SOURCES; k++)
        gr_bind(g, gr_stage(g, &(gr_stage_desc){.name = names[k], .kind = GR_THREAD,
                                                .main = source}), GR_BIND_OUTPUT, work);
    int snk = gr_stage(g, &(gr_stage_desc){.name = "sink", .kind = GR_THREAD, .main = sink,
                                           .user = f});
    gr_bind(g, snk, GR_BIND_INPUT, work);
    return g;
}

static bool run_graph(gr_graph *g, const char *sched, unsigned workers, unsigned simulate)
{
    gr_launch_opts o = {.workers = simulate ? 0 : workers, .scheduler = sched,
                        .simulate = simulate, .stack_bytes = 64 * 1024, .deadlock_seconds = 30};
    gr_status st = gr_launch(g, &o, NULL, 0);
    if (st == GR_OK) st = gr_wait(g);
    CHECK_MSG(st == GR_OK, "%s at %u: %s", sched, simulate ? simulate : workers, gr_error(g));
    gr_graph_destroy(g);
    return st == GR_OK;
}

static bool run(flow *f, const char *sched, unsigned workers, unsigned simulate)
{
    return run_graph(graph(f), sched, workers, simulate);
}

#define PRODUCED 1000                     /* the blocked source's packets */

/* A source with state that fills its small queue faster than the consumers drain it, so
 * that it blocks on output again and again; counts its runtime calls as sink does. */
static void stateful_source(gr_ctx *c)
{
    flow *f = gr_user(c);
    gr_state_bytes(c, f->state);
    unsigned on = gr_worker_id(c);
    gr_window w;
    for (uint32_t i = 0; i < PRODUCED; i++) {
        gr_reserve_out(c, 0, 1, &w);
        *(uint64_t *)w.mem = i;
        gr_commit_out(c, 0, 1);
        atomic_fetch_add(&f->resumed, 1);
        if (gr_worker_id(c) != on) atomic_fetch_add(&f->moved, 1);
        on = gr_worker_id(c);
    }
}

static void slow_consumer(gr_ctx *c)
{
    flow *f = gr_user(c);
    for (volatile int k = 0; k < 3000; k++) {}
    atomic_fetch_add(&f->sum, *(const uint64_t *)gr_input(c, NULL));
}

/* stateful_source -> (capacity 2) -> slow_consumer (Shader): the consumers' tasks spread
 * over the workers, each freeing the space the source waits for. */
static gr_graph *blocked_graph(flow *f)
{
    gr_graph *g = gr_graph_create();
    int q = gr_queue(g, &(gr_queue_desc){.name = "work", .packet_bytes = sizeof(uint64_t),
                                         .capacity = 2});
    gr_bind(g, gr_stage(g, &(gr_stage_desc){.name = "source", .kind = GR_THREAD,
                                            .main = stateful_source, .user = f}),
            GR_BIND_OUTPUT, q);
    gr_bind(g, gr_stage(g, &(gr_stage_desc){.name = "consume", .kind = GR_SHADER,
                                            .main = slow_consumer, .user = f}),
            GR_BIND_INPUT, q);
    return g;
}

static const uint64_t expected_sum = SOURCES * 3ull * PACKETS * (PACKETS - 1) / 2;

/* At 8 virtual workers, twice per policy that keeps state home (GRAMPS, QES, PSS): the
 * sink is woken by sources on three workers (about 1,200 resumptions). Without the
 * affinity it ran where it was woken, moving 78-146 times under GRAMPS and 3-84 under
 * QES and PSS (their workers stay with a source while it has work, so how often an idle
 * one takes the sink varies more; in 10 runs of this test before they had it, at least
 * one of the two failed each time); with it, it moves only when a thief idle for
 * a whole spin phase takes it from a busy worker (0-2 times). The bound, 2% of
 * resumptions, leaves room for the measured task costs of a sanitizer build without
 * admitting the old behaviour. */
static void test_state_stays_home(void)
{
    static const char *const scheds[] = {"gramps", "qes", "pss"};
    for (int p = 0; p < 3; p++) {
        uint64_t resumed = 0, moved = 0;
        for (int k = 0; k < 2; k++) {
            flow f = {.state = 4096};
            if (!run(&f, scheds[p], 0, 8)) return;
            CHECK(atomic_load(&f.sum) == expected_sum);
            resumed += atomic_load(&f.resumed);
            moved += atomic_load(&f.moved);
        }
        CHECK_MSG(moved * 50 <= resumed, "%s: a sink with state came back on another worker "
                  "%llu of %llu times", scheds[p], (unsigned long long)moved,
                  (unsigned long long)resumed);
    }
}

/* The source blocks on its full queue about once a packet and is woken by whichever
 * worker's consumer freed a slot. It must come back where its state is: before such
 * wake-ups went home it moved on most of them (502-574 of 1,000 resumptions: the
 * consumer's worker ran it next). Going home, it still moves when an idle thief takes
 * it: 0-22 of 1,000 seen (22 under PSS in a CI run at load), so the bound is 10%, far
 * below the old behaviour. */
/* GRAMPS_TORTURE=1 preempts every Thread stage at each reserve and commit and lets any
 * worker resume it: where an instance runs is then the torture's choice, not the
 * policy's, so the placement checks below do not apply (delivery still does). */
static bool torture(void)
{
    const char *t = getenv("GRAMPS_TORTURE");
    return t && atoi(t) != 0;
}

static void test_blocked_producer_stays_home(void)
{
    if (torture()) SKIP("GRAMPS_TORTURE moves preempted instances by design");
    static const char *const scheds[] = {"gramps", "qes", "pss"};
    for (int p = 0; p < 3; p++) {
        flow f = {.state = 4096};
        if (!run_graph(blocked_graph(&f), scheds[p], 0, 8)) return;
        CHECK(atomic_load(&f.sum) == (uint64_t)PRODUCED * (PRODUCED - 1) / 2);
        uint64_t resumed = atomic_load(&f.resumed), moved = atomic_load(&f.moved);
        CHECK_MSG(moved * 10 <= resumed, "%s: a blocked source with state came back on "
                  "another worker %llu of %llu times", scheds[p], (unsigned long long)moved,
                  (unsigned long long)resumed);
    }
}

#define HOLDERS 8                         /* stateful sinks, two per virtual worker */
#define HOLDER_PACKETS 64

typedef struct holder_slot {
    unsigned on[4];                       /* its resumptions per (virtual) worker */
    uint64_t sum;
} holder_slot;

static void feeder(gr_ctx *c)
{
    gr_window w;
    for (uint32_t i = 0; i < HOLDER_PACKETS; i++)
        for (int k = 0; k < HOLDERS; k++) {
            gr_reserve_out(c, k, 1, &w);
            *(uint64_t *)w.mem = i;
            gr_commit_out(c, k, 1);
        }
}

/* Declares state only once its first packet came, as the raster graph's Bin does (its
 * staging starts with the first triangle): until then it runs wherever it is woken. */
static void holder(gr_ctx *c)
{
    holder_slot *h = gr_user(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        gr_state_bytes(c, 4096);
        for (volatile int k = 0; k < 2000; k++) {}
        h->sum += *(const uint64_t *)w.mem;
        gr_commit(c, 0, 1);
        if (gr_worker_id(c) < 4) h->on[gr_worker_id(c)]++;
    }
}

/* The worker most of its resumptions ran on: where its state stayed. */
static int holder_home(const holder_slot *h)
{
    int best = 0;
    for (int i = 1; i < 4; i++)
        if (h->on[i] > h->on[best]) best = i;
    return best;
}

/* feeder (Thread) -> HOLDERS queues -> one holder (Thread) each, copies of one stage as a
 * graph file's `replicate` makes them. */
static gr_graph *holders_graph(holder_slot *h)
{
    static const char *const qn[HOLDERS] = {"q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7"};
    static const char *const hn[HOLDERS] = {"holder-0", "holder-1", "holder-2", "holder-3",
                                            "holder-4", "holder-5", "holder-6", "holder-7"};
    gr_graph *g = gr_graph_create();
    int src = gr_stage(g, &(gr_stage_desc){.name = "feeder", .kind = GR_THREAD, .main = feeder});
    for (int k = 0; k < HOLDERS; k++) {
        int q = gr_queue(g, &(gr_queue_desc){.name = qn[k], .packet_bytes = sizeof(uint64_t),
                                             .capacity = 4});
        gr_bind(g, src, GR_BIND_OUTPUT, q);
        gr_bind(g, gr_stage(g, &(gr_stage_desc){.name = hn[k], .kind = GR_THREAD,
                                                .main = holder, .user = &h[k],
                                                .replicated = true}),
                GR_BIND_INPUT, q);
    }
    return g;
}

/* The most holders one of the 4 virtual workers was home to in one run, or -1. */
static int most_homed(const char *sched)
{
    holder_slot h[HOLDERS] = {{{0}, 0}};
    if (!run_graph(holders_graph(h), sched, 0, 4)) return -1;
    int per[4] = {0}, most = 0;
    for (int k = 0; k < HOLDERS; k++) {
        CHECK(h[k].sum == (uint64_t)HOLDER_PACKETS * (HOLDER_PACKETS - 1) / 2);
        const int home = holder_home(&h[k]);
        if (++per[home] > most) most = per[home];
    }
    return most;
}

/* Stateful instances get homes spread over the workers (inbox.h gr_choose_home): at 4
 * virtual workers each is home to 2 of the 8 holders. Before, each kept the worker it
 * first declared state on, wherever its first packet's wake-up put it, and some worker
 * was home to 3 or more in every run (24 of 24 runs, all three policies); the raster
 * graph's 16 Bin instances shared workers two by two while others had none. A thief
 * idle for a whole spin phase may still take a holder, and its state with it: 1 run in
 * 30 ended with a worker home to 3 in the plain build, about 1 in 7 in the ASan build
 * under load (its tasks run slower against the same spin phase), so the check allows
 * half of HOMES_RUNS runs per policy, which the old behaviour never came near. */
#define HOMES_RUNS 12
static void test_homes_spread(void)
{
    if (torture()) SKIP("GRAMPS_TORTURE moves preempted instances by design");
    static const char *const scheds[] = {"gramps", "qes", "pss"};
    for (int p = 0; p < 3; p++) {
        int crowded = 0;
        for (int k = 0; k < HOMES_RUNS; k++) {
            const int most = most_homed(scheds[p]);
            if (most < 0) return;
            crowded += most > 2;
        }
        CHECK_MSG(crowded <= HOMES_RUNS / 2, "%s: in %d of %d runs a worker was home to 3 or more "
                  "of the %d stateful instances", scheds[p], crowded, HOMES_RUNS, HOLDERS);
    }
}

/* Every policy delivers every packet once with the sink keeping state, on real threads
 * and on virtual workers. */
static void test_every_policy_delivers(void)
{
    static const char *const scheds[] = {"gramps", "task-stealing", "breadth-first", "static",
                                         "qes", "pss"};
    for (int k = 0; k < 6; k++)
        for (unsigned simulate = 0; simulate <= 4; simulate += 4) {
            flow f = {.state = 4096};
            if (run(&f, scheds[k], 4, simulate))
                CHECK_MSG(atomic_load(&f.sum) == expected_sum, "%s%s: sum %llu", scheds[k],
                          simulate ? " simulated" : "", (unsigned long long)atomic_load(&f.sum));
        }
}

int main(void)
{
    RUN(test_state_stays_home);
    RUN(test_blocked_producer_stays_home);
    RUN(test_homes_spread);
    RUN(test_every_policy_delivers);
    return check_finish();
}
