/* sched_static.c — the Static policy (Sanchez et al. 2011 §IV-C), as stream runtimes
 * schedule: the stage graph is partitioned once, before the run, with METIS (stage
 * loads balanced, communication cut least: partition.c), weighted by a profiled run
 * under the GRAMPS policy (gr_launch_opts.profile; without one every stage and queue
 * weighs the same), and each partition runs on one worker. gr_launch_opts.partition =
 * "ilp" assigns the stages as SGMS does instead, by an integer linear program over the
 * same loads (partition_ilp.c), and falls back to METIS/LPT when it finds nothing
 * better in its time limit. No stealing and no load
 * balancing: a task goes to its stage's worker through that worker's inbox (inbox.h),
 * and a worker out of work waits for more. Within its
 * partition a worker runs the highest-priority ready stage first with backpressure, as
 * GRAMPS does locally: the paper's minimum-latency schedule over bounded buffers,
 * decided at run time only among the stages the partition gave it.
 *
 * Invariant: a stage's tasks sit only in its owner's deques or inbox, and only the
 * owner pushes into its deques (Chase-Lev: one pusher), so the inbox is what other
 * workers write. */
#include "gramps/internal.h"
#include "gramps/partition.h"
#include "gramps/profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct st_state {
    int *owner;                       /* worker per stage id */
} st_state;

static void st_push(gr_worker *w, gr_stage_rt *s, void *task)
{
    st_state *st = w->g->sched_state;
    int owner = st->owner[s->id];
    if ((unsigned)owner == w->id) { gr_push_own(w, s, s->deque, task); return; }
    gr_inbox_put(w, &w->g->workers[owner].inbox, task);
}

static void *st_find(gr_worker *w)
{
    gr_inbox_drain(w);
    void *t = gr_pop_by_priority(w);
    if (!t) {
        gr_flush_partials(w);
        gr_inbox_drain(w);
        t = gr_pop_by_priority(w);
    }
    if (!t) gr_pending_flush(w);          /* out of work: let termination see it */
    return t;
}

static void st_loop(gr_worker *w)
{
    unsigned fails = 0;
    while (gr_running(w->g)) {
        void *t = st_find(w);
        if (!t) { gr_idle_wait(w, &fails); continue; }
        fails = 0;
        gr_run_task(w, t);
    }
}

/* Stage loads and queue traffic: the profile's when it is of this graph, else 1 each. */
static int weigh(gr_graph *g, int64_t *load, gr_part_edge *edges)
{
    const gr_profile *p = g->opts.profile;
    bool prof = gr_profile_matches(p, g);
    for (int i = 0; i < g->nstages; i++) load[i] = prof ? (int64_t)p->stage_us[i] + 1 : 1;
    int n = 0;
    for (int qi = 0; qi < g->nqueues; qi++) {
        gr_queue_rt *q = g->queues[qi];
        int64_t bytes = prof ? (int64_t)(p->queue_bytes[qi] / 64) + 1 : 1;   /* cache lines */
        for (int k = 0; k < q->nproducers; k++)
            edges[n++] = (gr_part_edge){q->producers[k], q->consumer, bytes};
    }
    return n;
}

/* The heaviest worker under round-robin and, after the ILP, under METIS/LPT on the same
 * loads (-1: not computed), so that one run compares the assignments. */
static void print_partition(gr_graph *g, const int64_t *load, const gr_part_edge *edges,
                            int nedges, const int *owner, bool prof)
{
    int n = g->nstages, w = (int)g->nworkers;
    int *rr = malloc((size_t)n * sizeof *rr), *other = malloc((size_t)n * sizeof *other);
    if (!rr || !other) { free(rr); free(other); return; }
    for (int i = 0; i < n; i++) rr[i] = i % w;
    long long by_metis = -1;
    if (!strcmp(g->partition, "ilp") && gr_partition(n, load, edges, nedges, w, other) == 0)
        by_metis = (long long)gr_partition_max_load(n, load, other, w);
    fprintf(stderr, "static: %d stages over %d workers by %s, weighted by %s; heaviest worker %lld "
            "(round-robin: %lld", n, w, g->partition, prof ? "the profile (us, cache lines)" :
            "1 per stage and queue (no profile)", (long long)gr_partition_max_load(n, load, owner, w),
            (long long)gr_partition_max_load(n, load, rr, w));
    if (by_metis >= 0) fprintf(stderr, ", METIS/LPT: %lld", by_metis);
    fprintf(stderr, ")\n");
    for (int k = 0; k < w; k++) {
        fprintf(stderr, "static:   worker %d:", k);
        for (int i = 0; i < n; i++)
            if (owner[i] == k) fprintf(stderr, " %s(%lld)", g->stages[i]->name, (long long)load[i]);
        fputc('\n', stderr);
    }
    free(rr);
    free(other);
}

/* GRAMPS_STATIC_PARTITION / GRAMPS_STATIC_ILP_MS when the options leave them unset. */
static const char *partition_method(const gr_graph *g)
{
    const char *m = g->opts.partition;
    if (!m || !*m) m = getenv("GRAMPS_STATIC_PARTITION");
    return m && *m ? m : "metis";
}

static int ilp_time_limit_ms(const gr_graph *g)
{
    if (g->opts.ilp_ms) return g->opts.ilp_ms < 0 ? -1 : g->opts.ilp_ms;
    const char *v = getenv("GRAMPS_STATIC_ILP_MS");
    char *end;
    long ms = v && *v ? strtol(v, &end, 10) : 2000;
    return v && *v && (*end || ms < 0 || ms > 3600000) ? -1 : (int)ms;
}

/* The SGMS assignment: gr_partition_ilp's answer (GR_ILP_NO_SOLUTION: the caller falls
 * back, as this says on stderr). */
static int assign_by_ilp(gr_graph *g, const int64_t *load, int *owner)
{
    int ms = ilp_time_limit_ms(g);
    if (g->nstages > GR_PARTITION_ILP_MAX_STAGES) {
        fprintf(stderr, "static: the ILP partition takes at most %d stages (this graph has %d); "
                "falling back to METIS/LPT\n", GR_PARTITION_ILP_MAX_STAGES, g->nstages);
        g->partition_fell_back = true;
        return GR_ILP_NO_SOLUTION;
    }
    int rc = gr_partition_ilp(g->nstages, load, (int)g->nworkers, ms, owner);
    if (rc != GR_ILP_NO_SOLUTION) {
        if (rc != GR_ILP_FAILED) g->partition = "ilp";
        return rc;
    }
    fprintf(stderr, "static: the ILP partition found no solution in %d ms (GRAMPS_STATIC_ILP_MS); "
            "falling back to METIS/LPT\n", ms);
    g->partition_fell_back = true;
    return rc;
}

static gr_status check_partition_options(gr_graph *g)
{
    const char *m = partition_method(g);
    if (strcmp(m, "metis") && strcmp(m, "ilp")) {
        gr_set_error(g, GR_ERR_INVALID, "static scheduler: unknown partition '%s' (%s; known: "
                     "metis, ilp)", m, g->opts.partition && *g->opts.partition ?
                     "gr_launch_opts.partition" : "GRAMPS_STATIC_PARTITION");
        return GR_ERR_INVALID;
    }
    if (!strcmp(m, "ilp") && ilp_time_limit_ms(g) < 0) {
        gr_set_error(g, GR_ERR_INVALID, "static scheduler: the ILP time limit (%s) must be a "
                     "number of milliseconds from 0 to 3600000", g->opts.ilp_ms ?
                     "gr_launch_opts.ilp_ms" : "GRAMPS_STATIC_ILP_MS");
        return GR_ERR_INVALID;
    }
    return GR_OK;
}

/* An ILP cut short by its time limit may return a solution heavier than METIS/LPT's:
 * then METIS/LPT's runs, and that is a fallback too (said on stderr). */
static int keep_lighter(gr_graph *g, const int64_t *load, const gr_part_edge *edges,
                        int nedges, int *owner)
{
    int n = g->nstages, w = (int)g->nworkers;
    int *other = malloc((size_t)n * sizeof *other);
    const char *how = NULL;
    if (!other || gr_partition_by(n, load, edges, nedges, w, other, &how)) { free(other); return -1; }
    int64_t ilp = gr_partition_max_load(n, load, owner, w), alt = gr_partition_max_load(n, load, other, w);
    if (alt < ilp) {
        fprintf(stderr, "static: the ILP's best assignment in %d ms (heaviest worker %lld) is heavier "
                "than METIS/LPT's (%lld); falling back to METIS/LPT\n", ilp_time_limit_ms(g),
                (long long)ilp, (long long)alt);
        memcpy(owner, other, (size_t)n * sizeof *owner);
        g->partition = how;
        g->partition_fell_back = true;
    }
    free(other);
    return 0;
}

static int assign(gr_graph *g, const int64_t *load, const gr_part_edge *edges, int nedges,
                  int *owner)
{
    if (!strcmp(partition_method(g), "ilp")) {
        int rc = assign_by_ilp(g, load, owner);
        if (rc == GR_ILP_FEASIBLE) return keep_lighter(g, load, edges, nedges, owner);
        if (rc == GR_ILP_OPTIMAL || rc == GR_ILP_FAILED) return rc;
    }
    return gr_partition_by(g->nstages, load, edges, nedges, (int)g->nworkers, owner,
                           &g->partition);
}

static gr_status partition(gr_graph *g, st_state *st)
{
    gr_status bad = check_partition_options(g);
    if (bad != GR_OK) return bad;
    int nedges = 0;
    for (int qi = 0; qi < g->nqueues; qi++) nedges += g->queues[qi]->nproducers;
    int64_t *load = malloc((size_t)g->nstages * sizeof *load);
    gr_part_edge *edges = malloc(((size_t)nedges + 1) * sizeof *edges);
    int rc = -1;
    if (load && edges) {
        nedges = weigh(g, load, edges);
        rc = assign(g, load, edges, nedges, st->owner);
        if (rc == 0)
            g->partition_max_load = gr_partition_max_load(g->nstages, load, st->owner, (int)g->nworkers);
        if (rc == 0 && g->opts.verbose)
            print_partition(g, load, edges, nedges, st->owner, gr_profile_matches(g->opts.profile, g));
    }
    free(load);
    free(edges);
    if (rc == 0) return GR_OK;
    gr_set_error(g, GR_ERR_NOMEM, "static scheduler: could not partition the %d stages "
                 "over %u workers (out of memory)", g->nstages, g->nworkers);
    return GR_ERR_NOMEM;
}

static void st_teardown(gr_graph *g)
{
    st_state *st = g->sched_state;
    if (!st) return;
    free(st->owner);
    free(st);
    g->sched_state = NULL;
}

static gr_status st_init(gr_graph *g)
{
    st_state *st = calloc(1, sizeof *st);
    g->sched_state = st;
    if (st) st->owner = calloc((size_t)g->nstages, sizeof *st->owner);
    if (!st || !st->owner) {
        st_teardown(g);
        gr_set_error(g, GR_ERR_NOMEM, "static scheduler: out of memory");
        return GR_ERR_NOMEM;
    }
    for (int i = 0; i < g->nstages; i++) g->stages[i]->deque = g->stages[i]->rank;
    return partition(g, st);
}

const gr_scheduler gr_sched_static = {
    .name = "static",
    .backpressure = true,
    .preempt = GR_PREEMPT_WATERMARK,
    .init = st_init,
    .push = st_push,
    .loop = st_loop,
    .teardown = st_teardown,
};
