/* Tests of gr_relaunch (a finished graph run again, as a renderer's next frame): every
 * run of one graph, relaunched 20 times under each scheduling policy at 1, 2 and 3
 * workers, gives what a fresh graph gives (results, packets per queue, tasks and
 * instances per stage) with its capacities held on every run; the stages' user pointers
 * change between runs; a simulated graph relaunches too; a relaunch reuses the workers'
 * memory and the static subqueues of the run before; a run that failed refuses the
 * relaunch, naming the failure; misuse is refused with a message. */
#include "gramps/gramps.h"
#include "gramps/internal.h"
#include "tests/check.h"

#include <stdio.h>
#include <string.h>

#define N 300
#define BINS 4
#define RUNS (CHECK_SANITIZED ? 5 : 20)

/* What one run computes: the sum of the squares in commit order (checked in order), and
 * per bin the sum of the numbers pushed into it. */
typedef struct app {
    uint32_t n;
    uint32_t fail_at;                 /* sink fails at this number (0: never) */
    uint64_t sum;
    uint32_t next;                    /* the square the sink expects next, as its root */
    bool in_order;
    uint64_t bins[BINS];
} app;

/* Thread: n numbers, 1..n, one packet each, on an ordered queue. */
static void src(gr_ctx *c)
{
    app *a = gr_user(c);
    for (uint32_t i = 1; i <= a->n; i++) {
        gr_window w;
        gr_reserve_out(c, 0, 1, &w);
        *(uint32_t *)w.mem = i;
        gr_commit_out(c, 0, 1);
    }
}

/* Shader: the square on the ordered chain, the number into its bin. */
static void square(gr_ctx *c)
{
    uint32_t x = *(uint32_t *)gr_input(c, NULL);
    *(uint64_t *)gr_output(c, 0) = (uint64_t)x * x;
    gr_push_key(c, 1, x % BINS, &x);
}

/* Thread: the squares in order. */
static void sink(gr_ctx *c)
{
    app *a = gr_user(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) != GR_NOMORE) {
        uint64_t v = *(uint64_t *)w.mem;
        a->next++;
        if (v != (uint64_t)a->next * a->next) a->in_order = false;
        if (a->fail_at && a->next == a->fail_at)
            gr_fail(c, GR_ERR_INVALID, "stage 'sink': told to fail at %u", a->fail_at);
        a->sum += v;
        gr_commit(c, 0, 1);
    }
}

/* Thread, one instance per bin: adds up its bin's numbers. */
static void bin(gr_ctx *c)
{
    app *a = gr_user(c);
    gr_window w;
    gr_status st;
    while ((st = gr_reserve(c, 0, 1, &w)) != GR_NOMORE) {
        uint32_t k = gr_count(w.mem);
        const uint32_t *x = (const uint32_t *)((const char *)w.mem + 4);
        for (uint32_t i = 0; i < k; i++) a->bins[gr_key(c)] += x[i];
        gr_commit(c, 0, 1);
    }
}

enum { S_SRC, S_SQUARE, S_SINK, S_BIN };

static gr_graph *build(app *a)
{
    gr_graph *g = gr_graph_create();
    int q0 = gr_queue(g, &(gr_queue_desc){.name = "numbers", .packet_bytes = 4, .capacity = 4,
                                          .ordered = true});
    int q1 = gr_queue(g, &(gr_queue_desc){.name = "squares", .packet_bytes = 8, .capacity = 4,
                                          .ordered = true});
    int q2 = gr_queue(g, &(gr_queue_desc){.name = "bins", .kind = GR_COLLECTION, .header_bytes = 4,
                                          .element_bytes = 4, .elements = 8, .capacity = 4,
                                          .subqueues = BINS});
    gr_stage(g, &(gr_stage_desc){.name = "src", .kind = GR_THREAD, .main = src, .user = a});
    gr_stage(g, &(gr_stage_desc){.name = "square", .kind = GR_SHADER, .main = square});
    gr_stage(g, &(gr_stage_desc){.name = "sink", .kind = GR_THREAD, .main = sink, .user = a});
    gr_stage(g, &(gr_stage_desc){.name = "bin", .kind = GR_THREAD, .main = bin, .user = a,
                                 .instanced = true});
    gr_bind(g, S_SRC, GR_BIND_OUTPUT, q0);
    gr_bind(g, S_SQUARE, GR_BIND_INPUT, q0);
    gr_bind(g, S_SQUARE, GR_BIND_OUTPUT, q1);
    gr_bind(g, S_SQUARE, GR_BIND_PUSH, q2);
    gr_bind(g, S_SINK, GR_BIND_INPUT, q1);
    gr_bind(g, S_BIN, GR_BIND_INPUT, q2);
    return g;
}

static const int start[] = {S_SRC, S_SINK};

static void app_reset(app *a)
{
    *a = (app){.n = N, .in_order = true};
}

static void check_results(const app *a, const char *what)
{
    uint64_t squares = 0, numbers = 0, bins = 0;
    for (uint64_t i = 1; i <= N; i++) squares += i * i, numbers += i;
    for (int k = 0; k < BINS; k++) bins += a->bins[k];
    CHECK_MSG(a->sum == squares && a->in_order && a->next == N && bins == numbers,
              "%s: sum %llu (want %llu), in order %d, bins %llu (want %llu)", what,
              (unsigned long long)a->sum, (unsigned long long)squares, a->in_order,
              (unsigned long long)bins, (unsigned long long)numbers);
}

/* The counts of a run that do not depend on timing: equal to a fresh graph's. */
static void check_same_counts(const gr_stats *run, const gr_stats *fresh, bool bounded,
                              unsigned workers, const char *what)
{
    CHECK_MSG(run && fresh, "%s: no statistics", what);
    if (!run || !fresh) return;
    for (int i = 0; i < run->nqueues; i++) {
        const gr_queue_stats *q = &run->queues[i], *f = &fresh->queues[i];
        /* how many packets pushes fill depends on when workers flush: not for "bins" */
        bool pushed = !strcmp(q->name, "bins");
        CHECK_MSG((pushed || q->packets == f->packets) && q->subqueues == f->subqueues,
                  "%s: queue %s: %llu packets in %u subqueues, a fresh graph's %llu in %u", what,
                  q->name, (unsigned long long)q->packets, q->subqueues,
                  (unsigned long long)f->packets, f->subqueues);
        /* docs/runtime-api.md's bound: a Shader pushing into a queue set may hold capacity
         * - 1 + W x (M + 1) packets in a subqueue (M = 1 here), each worker's partial
         * packet included; other outputs hold their capacity */
        uint32_t most = pushed ? q->capacity - 1 + 2 * workers : q->capacity;
        CHECK_MSG(!bounded || q->peak_subqueue_packets <= most,
                  "%s: queue %s held %u packets in a subqueue, at most %u allowed", what, q->name,
                  q->peak_subqueue_packets, most);
        CHECK_MSG(!bounded || q->reserved_peak_packets <= (uint64_t)q->capacity * q->subqueues,
                  "%s: queue %s reserved %llu, capacity %u x %u", what, q->name,
                  (unsigned long long)q->reserved_peak_packets, q->capacity, q->subqueues);
    }
    for (int i = 0; i < run->nstages; i++) {
        const gr_stage_stats *s = &run->stages[i], *f = &fresh->stages[i];
        CHECK_MSG(s->instances == f->instances && (s->kind != GR_SHADER || s->tasks == f->tasks),
                  "%s: stage %s: %llu instances, %llu tasks; a fresh graph's %llu, %llu", what,
                  s->name, (unsigned long long)s->instances, (unsigned long long)s->tasks,
                  (unsigned long long)f->instances, (unsigned long long)f->tasks);
    }
}

static const char *const schedulers[] = {"gramps", "task-stealing", "breadth-first", "static",
                                         "qes", "pss"};

static bool has_backpressure(const char *sched)
{
    return strcmp(sched, "task-stealing") && strcmp(sched, "breadth-first");
}

static void relaunch_matches_fresh(const char *sched, unsigned workers)
{
    char what[96];
    app fa, a;
    app_reset(&fa);
    gr_graph *fresh = build(&fa);
    gr_launch_opts o = {.workers = workers, .scheduler = sched};
    gr_status st = gr_launch(fresh, &o, start, 2);
    if (st == GR_OK) st = gr_wait(fresh);
    CHECK_MSG(st == GR_OK, "%s, %u workers, fresh: %s", sched, workers, gr_error(fresh));
    app_reset(&a);
    gr_graph *g = build(&a);
    st = gr_launch(g, &o, start, 2);
    for (int run = 0; run < RUNS && st == GR_OK; run++) {
        if (run) {
            app_reset(&a);
            st = gr_relaunch(g);
        }
        if (st == GR_OK) st = gr_wait(g);
        snprintf(what, sizeof what, "%s, %u workers, run %d", sched, workers, run);
        CHECK_MSG(st == GR_OK, "%s: %s", what, gr_error(g));
        if (st != GR_OK) break;
        check_results(&a, what);
        check_same_counts(gr_get_stats(g), gr_get_stats(fresh), has_backpressure(sched), workers,
                          what);
    }
    gr_graph_destroy(g);
    gr_graph_destroy(fresh);
}

static void every_scheduler_and_worker_count(void)
{
    for (size_t k = 0; k < sizeof schedulers / sizeof *schedulers; k++)
        for (unsigned workers = 1; workers <= 3; workers++)
            relaunch_matches_fresh(schedulers[k], workers);
}

/* Each run's stages see the user pointers set before it. */
static void user_pointers_change_between_runs(void)
{
    app runs[3];
    app_reset(&runs[0]);
    gr_graph *g = build(&runs[0]);
    gr_status st = gr_launch(g, &(gr_launch_opts){.workers = 2}, start, 2);
    if (st == GR_OK) st = gr_wait(g);
    for (int r = 1; r < 3 && st == GR_OK; r++) {
        app_reset(&runs[r]);
        runs[r].n = N;
        for (int s = 0; s < 4; s++)
            if (s != S_SQUARE) CHECK(gr_stage_set_user(g, s, &runs[r]) == GR_OK);
        st = gr_relaunch(g);
        if (st == GR_OK) st = gr_wait(g);
    }
    CHECK_MSG(st == GR_OK, "%s", gr_error(g));
    for (int r = 0; r < 3; r++) check_results(&runs[r], "user pointer set between runs");
    CHECK(gr_stage_set_user(g, 9, NULL) == GR_ERR_INVALID && gr_stage_set_user(g, -1, NULL) == GR_ERR_INVALID);
    CHECK(gr_relaunch(g) == GR_OK && gr_wait(g) == GR_OK);   /* the refusals left no error */
    gr_graph_destroy(g);
}

static void simulated_relaunch(void)
{
    app a;
    app_reset(&a);
    gr_graph *g = build(&a);
    gr_status st = gr_launch(g, &(gr_launch_opts){.simulate = 4}, start, 2);
    for (int run = 0; run < 3 && st == GR_OK; run++) {
        if (run) {
            app_reset(&a);
            st = gr_relaunch(g);
        }
        if (st == GR_OK) st = gr_wait(g);
        CHECK_MSG(st == GR_OK, "simulated run %d: %s", run, gr_error(g));
        if (st != GR_OK) break;
        check_results(&a, "simulated");
        const gr_stats *s = gr_get_stats(g);
        CHECK(s && s->simulated_workers == 4 && s->workers == 4);
    }
    gr_graph_destroy(g);
}

/* What a run leaves for the next: the workers' blocks and the queues' subqueues are the
 * same memory on every run (reset in place, not freed and made again each frame). */
static void relaunch_keeps_memory(void)
{
    app a;
    app_reset(&a);
    gr_graph *g = build(&a);
    gr_status st = gr_launch(g, &(gr_launch_opts){.workers = 2}, start, 2);
    if (st == GR_OK) st = gr_wait(g);
    CHECK_MSG(st == GR_OK, "%s", gr_error(g));
    gr_worker *workers = g->workers;
    void *arrays[2] = {workers ? workers[0].arrays : NULL, workers ? workers[1].arrays : NULL};
    gr_subq *bin0 = g->queues[2]->subs ? g->queues[2]->subs[0] : NULL;
    CHECK(workers && arrays[0] && arrays[1] && bin0);
    for (int run = 1; run < 4 && st == GR_OK; run++) {
        app_reset(&a);
        st = gr_relaunch(g);
        if (st == GR_OK) st = gr_wait(g);
        CHECK_MSG(st == GR_OK, "run %d: %s", run, gr_error(g));
        check_results(&a, "relaunched in kept memory");
        CHECK(g->workers == workers && workers[0].arrays == arrays[0] &&
              workers[1].arrays == arrays[1] && g->queues[2]->subs[0] == bin0);
    }
    gr_graph_destroy(g);
}

/* A stage fails on run 3: that run reports it and the graph cannot run again. */
static void failed_run_refuses_relaunch(void)
{
    app a;
    app_reset(&a);
    gr_graph *g = build(&a);
    gr_status st = gr_launch(g, &(gr_launch_opts){.workers = 2}, start, 2);
    int run = 0;
    for (; st == GR_OK && run < 5; run++) {
        if (run) {
            app_reset(&a);
            a.fail_at = run == 3 ? N / 2 : 0;
            st = gr_relaunch(g);
        }
        if (st == GR_OK) st = gr_wait(g);
    }
    CHECK_MSG(run == 4 && st == GR_ERR_INVALID && strstr(gr_error(g), "told to fail at 150"),
              "run %d, status %d: %s", run, st, gr_error(g));
    st = gr_relaunch(g);
    CHECK_MSG(st == GR_ERR_INVALID && strstr(gr_error(g), "gr_relaunch: the graph's last run failed") &&
              strstr(gr_error(g), "told to fail at 150"), "%d: %s", st, gr_error(g));
    gr_graph_destroy(g);
}

static void misuse_is_refused(void)
{
    app a;
    app_reset(&a);
    gr_graph *g = build(&a);
    CHECK(gr_relaunch(g) == GR_ERR_INVALID && strstr(gr_error(g), "no finished run"));
    gr_graph_destroy(g);
    g = build(&a);
    CHECK(gr_launch(g, &(gr_launch_opts){.workers = 1}, start, 2) == GR_OK);
    CHECK(gr_wait(g) == GR_OK);
    CHECK(gr_launch(g, &(gr_launch_opts){.workers = 1}, start, 2) == GR_ERR_INVALID &&
          strstr(gr_error(g), "gr_relaunch"));
    gr_graph_destroy(g);
    CHECK(gr_relaunch(NULL) == GR_ERR_INVALID);
}

int main(void)
{
    RUN(every_scheduler_and_worker_count);
    RUN(user_pointers_change_between_runs);
    RUN(simulated_relaunch);
    RUN(relaunch_keeps_memory);
    RUN(failed_run_refuses_relaunch);
    RUN(misuse_is_refused);
    return check_finish();
}
