/* launch.c — starting and joining a run: options, buffer pools, subqueues, workers,
 * initial Thread instances, the watchdog thread, and gr_wait.
 *
 * Knobs from the environment (llvmpipe style): GRAMPS_NUM_THREADS (0 = run on the
 * caller inside gr_wait, the easiest mode to debug), GRAMPS_TORTURE=1 (preempt Thread
 * stages at every reserve/commit), GRAMPS_PIN=1, GRAMPS_SCHEDULER (scheduler.c). */
#include "gramps/internal.h"
#include "gramps/profile.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long env_long(const char *name, long fallback)
{
    const char *v = getenv(name);
    if (!v || !*v) return fallback;
    char *end;
    long x = strtol(v, &end, 10);
    return *end ? fallback : x;
}

static long online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 1 ? n : 1;
}

unsigned gr_worker_count(unsigned requested)
{
    long n = requested ? (long)requested : env_long("GRAMPS_NUM_THREADS", online_cpus());
    if (n < 1) return 1;
    return n < GR_MAX_WORKERS ? (unsigned)n : GR_MAX_WORKERS;
}

static void resolve_options(gr_graph *g, const gr_launch_opts *o)
{
    if (o) g->opts = *o;
    g->synchronous = !g->opts.simulate && !g->opts.workers &&
                     env_long("GRAMPS_NUM_THREADS", 1) == 0;
    g->nworkers = g->opts.simulate ? g->opts.simulate : gr_worker_count(g->opts.workers);
    if (!g->opts.low_watermark) {
        g->opts.low_watermark = 2 * g->nworkers;
        if (g->opts.low_watermark < 32) g->opts.low_watermark = 32;
    }
    for (int i = 0; i < g->nstages; i++) {
        gr_stage_rt *s = g->stages[i];
        /* Shaders follow the thesis' same-stage rule only where asked: at the run's
         * watermark it raised the ray tracer's peak footprint 7-10x (many-cores.md). */
        s->low_watermark = s->d.low_watermark ? s->d.low_watermark
                         : s->d.kind == GR_SHADER ? 1 : g->opts.low_watermark;
    }
    if (!g->opts.stack_bytes) g->opts.stack_bytes = 256 * 1024;
    if (g->opts.deadlock_seconds <= 0) g->opts.deadlock_seconds = 10.0;
    g->torture = env_long("GRAMPS_TORTURE", 0) != 0;
    if (env_long("GRAMPS_PIN", 0)) g->opts.pin = true;
}

/* gr_launch_opts.sim_calibration must be a simulated run's profile of this graph (at
 * another worker count a replicated stage has another number of copies). */
static gr_status check_calibration(gr_graph *g, const gr_profile *p)
{
    if (!p->stage_units) {
        gr_set_error(g, GR_ERR_INVALID, "gr_launch: sim_calibration is a real run's profile; "
                     "it must come from a simulated run (gr_launch_opts.simulate = 1)");
        return GR_ERR_INVALID;
    }
    for (int i = 0; i < g->nstages; i++) {
        bool named = false;
        for (int k = 0; k < p->nstages && !named; k++) {
            gr_profile one = {.nstages = 1, .stage_names = &p->stage_names[k],
                              .stage_us = &p->stage_us[k], .stage_units = (double[]){1}};
            double us;
            named = gr_profile_unit_us(&one, g->stages[i], &us);
        }
        if (!named) {
            gr_set_error(g, GR_ERR_INVALID, "gr_launch: sim_calibration is a profile of another "
                         "graph: it has no stage '%s'", g->stages[i]->name);
            return GR_ERR_INVALID;
        }
    }
    return GR_OK;
}

/* One packet-stealing pool per packet size. */
static bool create_pools(gr_graph *g)
{
    g->pools = calloc((size_t)g->nqueues, sizeof *g->pools);
    if (!g->pools) return false;
    for (int i = 0; i < g->nqueues; i++) {
        gr_queue_rt *q = g->queues[i];
        size_t bytes = (GR_PKT_HDR + q->packet_bytes + 63) & ~(size_t)63;
        int k = 0;
        while (k < g->npools && g->pools[k].packet_bytes != bytes) k++;
        if (k == g->npools) {
            size_t prealloc = 0;
            for (int j = i; j < g->nqueues; j++) {
                gr_queue_rt *o = g->queues[j];
                if (((GR_PKT_HDR + o->packet_bytes + 63) & ~(size_t)63) == bytes)
                    prealloc += o->d.capacity * (o->d.subqueues ? o->d.subqueues : 1);
            }
            size_t cap = (16u << 20) / bytes;     /* preallocate at most 16 MiB per size */
            if (prealloc > cap) prealloc = cap;
            if (gr_buf_init(&g->pools[k], bytes, g->nworkers, prealloc + 4 * g->nworkers) != 0)
                return false;
            g->npools++;
        }
        q->pool = &g->pools[k];
    }
    return true;
}

static bool create_subqueues(gr_graph *g)
{
    for (int i = 0; i < g->nqueues; i++) {
        gr_queue_rt *q = g->queues[i];
        q->cons_comp = &g->comps[g->stages[q->consumer]->comp];
        if (!q->physical && q->is_set && !gr_gates_create(q)) return false;
        if (!q->physical || q->subs) continue;       /* kept from the run before */
        if (q->d.dynamic_keys) {
            q->subs = calloc(q->d.max_keys, sizeof *q->subs);
            if (!q->subs || gr_keymap_init(&q->keys, q->d.max_keys) != 0) return false;
            continue;
        }
        q->nsubs = q->d.subqueues ? q->d.subqueues : 1;
        q->subs = calloc(q->nsubs, sizeof *q->subs);
        if (!q->subs) return false;
        for (uint32_t k = 0; k < q->nsubs; k++)
            if (!(q->subs[k] = gr_subq_new(q, k, k))) return false;
    }
    return true;
}

/* The most tasks a batch of any Shader stage takes (0: none batches). */
static size_t max_batch(const gr_graph *g)
{
    uint32_t m = 0;
    for (int i = 0; i < g->nstages; i++) {
        const gr_stage_desc *d = &g->stages[i]->d;
        uint32_t n = d->batch_max < GR_BATCH_MAX ? d->batch_max : GR_BATCH_MAX;
        if (d->kind == GR_SHADER && d->batch && n > m) m = n;
    }
    return m;
}

static size_t max_packet_bytes(gr_graph *g)
{
    size_t m = 64;
    for (int i = 0; i < g->nqueues; i++)
        if (g->queues[i]->packet_bytes > m) m = g->queues[i]->packet_bytes;
    return m;
}

/* The most output bindings of any Shader stage: the size of a worker's task arrays. */
static int max_shader_outputs(const gr_graph *g)
{
    int m = 0;
    for (int i = 0; i < g->nstages; i++)
        if (g->stages[i]->d.kind == GR_SHADER && g->stages[i]->nout > m) m = g->stages[i]->nout;
    return m;
}

/* Victims nearest first: w+1, w-1, w+2, w-2, ... */
static void order_victims(gr_worker *w, unsigned n)
{
    unsigned k = 0;
    for (unsigned d = 1; k + 1 < n; d++) {
        w->victims[k++] = (int)((w->id + d) % n);
        if (k + 1 < n && (w->id + n - d) % n != (w->id + d) % n)
            w->victims[k++] = (int)((w->id + n - d) % n);
    }
}

/* n elements of `size` at *at in a worker's block (NULL while sizing it), rounded up to
 * whole lines so that no two arrays share one. */
static void *carve(char *block, size_t *at, size_t n, size_t size)
{
    void *p = block ? block + *at : NULL;
    *at += (n * size + 63) / 64 * 64;
    return p;
}

/* A worker's fixed-size arrays, all in one zeroed block (`block` NULL: only sizes it);
 * returns its size and sets *per_run to the offset where the arrays a run starts at zero
 * begin (reset_worker zeroes from there; those before it are kept across runs: the
 * deques, victims, coalescing arrays and scratch). One allocation instead of a dozen per
 * worker. Each array starts a line: the deques and ready bits, which thieves read, share
 * none with what only the owner writes, and the Shader task arrays (see gr_ctx) are
 * written by every task. */
static size_t carve_arrays(gr_graph *g, gr_worker *w, char *block, size_t *per_run)
{
    size_t at = 0, nq = (size_t)g->nqueues, ns = (size_t)g->nstages;
    size_t outs = (size_t)max_shader_outputs(g);
    gr_ctx *c = &w->shader_ctx;
    w->dq = carve(block, &at, ns, sizeof *w->dq);
    w->victims = carve(block, &at, g->nworkers, sizeof *w->victims);
    w->partials = carve(block, &at, nq, sizeof *w->partials);
    w->partials_len = carve(block, &at, nq, sizeof *w->partials_len);
    w->scratch = carve(block, &at, 1, max_packet_bytes(g));
    *per_run = at;
    w->ready_ranks = carve(block, &at, (ns + 63) / 64, sizeof *w->ready_ranks);
    w->victim_ready = carve(block, &at, g->nworkers, sizeof *w->victim_ready);
    w->stage_ticks = carve(block, &at, ns, sizeof *w->stage_ticks);
    w->stage_tasks = carve(block, &at, ns, sizeof *w->stage_tasks);
    w->queue_packets = carve(block, &at, nq, sizeof *w->queue_packets);
    w->pending_surplus = carve(block, &at, (size_t)g->ncomps, sizeof *w->pending_surplus);
    w->pending_dirty = carve(block, &at, ((size_t)g->ncomps + 63) / 64, sizeof *w->pending_dirty);
    w->credit = carve(block, &at, nq, sizeof *w->credit);
    c->out = carve(block, &at, outs, sizeof *c->out);
    c->out_key = carve(block, &at, outs, sizeof *c->out_key);
    c->out_keyed = carve(block, &at, outs, sizeof *c->out_keyed);
    c->discarded = carve(block, &at, outs, sizeof *c->discarded);
    c->push_unit = carve(block, &at, outs, sizeof *c->push_unit);
    w->batch_held = carve(block, &at, max_batch(g) * outs, sizeof *w->batch_held);
    return at;
}

/* What every run sets in a zeroed worker besides its memory. */
static void set_identity(gr_graph *g, gr_worker *w, unsigned id)
{
    w->id = id;
    w->g = g;
    w->rng = 0x9e3779b97f4a7c15ull * (id + 1);
    w->streak_rank = -1;
    gr_inbox_init(&w->inbox);
    w->shader_ctx.g = g;
    w->shader_ctx.w = w;
}

static bool init_worker(gr_graph *g, gr_worker *w, unsigned id)
{
    size_t per_run;
    set_identity(g, w, id);
    w->arrays = gr_calloc_lines(1, carve_arrays(g, w, NULL, &per_run));
    if (!w->arrays) return false;
    carve_arrays(g, w, w->arrays, &per_run);
    for (int r = 0; r < g->nstages; r++) gr_dq_init(&w->dq[r], 6);
    order_victims(w, g->nworkers);
    if (g->opts.journal) {
        w->journal_cap = 1 << 16;
        w->journal = malloc(w->journal_cap * sizeof *w->journal);
        if (!w->journal) return false;
    }
    return true;
}

/* A worker of a finished run (it succeeded: every deque, inbox and coalescing slot is
 * empty) in the state init_worker gives a new one, in its own memory: the per-run arrays
 * zeroed, the deques, inbox and coalescing arrays emptied keeping their storage, the
 * journal's buffer kept (the options, so its use and size, are the run's before). */
static void reset_worker(gr_graph *g, gr_worker *w)
{
    gr_worker kept = *w;
    size_t per_run, size;
    memset(w, 0, sizeof *w);
    set_identity(g, w, kept.id);
    w->inbox.tasks = kept.inbox.tasks;
    w->inbox.cap = kept.inbox.cap;
    w->journal = kept.journal;
    w->journal_cap = kept.journal_cap;
    w->arrays = kept.arrays;
    size = carve_arrays(g, w, w->arrays, &per_run);
    memset((char *)w->arrays + per_run, 0, size - per_run);
    for (int r = 0; r < g->nstages; r++) gr_dq_reset(&w->dq[r]);
    for (int q = 0; q < g->nqueues; q++)      /* a queue without partials has none (NULL) */
        if (w->partials_len[q]) memset(w->partials[q], 0, w->partials_len[q] * sizeof *w->partials[q]);
}

static void free_worker(gr_graph *g, gr_worker *w)
{
    if (!w->arrays) return;
    for (int r = 0; r < g->nstages; r++) gr_dq_destroy(&w->dq[r]);
    for (int q = 0; q < g->nqueues; q++) free(w->partials[q]);
    free(w->arrays);
    free(w->journal);
    gr_inbox_free(&w->inbox);
}

void gr_workers_free(gr_graph *g)
{
    for (unsigned i = 0; g->workers && i < g->nworkers; i++) free_worker(g, &g->workers[i]);
    free(g->workers);
    g->workers = NULL;
}

/* Runnable Thread stages get their instance, spread over the workers' deques (no worker
 * runs yet, so pushing into another worker's deque is safe here), in rank order:
 * consumers after their producers, so that a policy with one LIFO deque (Task-Stealing)
 * starts each consumer first, which waits on its input and is woken by it. Pushed the
 * other way, the hybrid's Z-Raster lay under the IA's continuation until the last
 * primitive was made (its queue peaked at all 1,085 packets, 15 MB).
 *
 * Each family of stages that run the same code (a replicated stage's copies: one per
 * worker group) is spread round-robin from worker 0 on a count of its own, in rank
 * order, so that group g's copies start together on one worker (its consumer above its
 * producer, as above) and the groups go to different workers; stages that are a family
 * of one are spread round-robin on a count they share, as all were before. One count
 * over all of them put, at 2 workers, both IA copies on one worker and both Bins on the
 * other: under Task-Stealing the IA at the bottom of a busy worker's deque was never
 * popped nor stolen, and one IA took every batch (test_simulate). */
typedef struct family {
    gr_stage_fn main;                     /* the code its stages run */
    unsigned members, next;               /* its runnable stages; the next one's worker */
} family;

static family *family_of(const gr_stage_rt *s, family *fams, int *nfams)
{
    int f = 0;
    while (f < *nfams && fams[f].main != s->d.main) f++;
    if (f == *nfams) fams[(*nfams)++].main = s->d.main;
    return &fams[f];
}

static bool start_instances(gr_graph *g)
{
    family *fams = calloc((size_t)g->nstages + 1, sizeof *fams);
    unsigned single = 0;
    int nfams = 0;
    bool ok = fams != NULL;
    for (int r = 0; ok && r < g->nstages; r++)
        if (g->stages[g->by_rank[r]]->runnable_at_launch)
            family_of(g->stages[g->by_rank[r]], fams, &nfams)->members++;
    for (int r = 0; ok && r < g->nstages; r++) {
        gr_stage_rt *s = g->stages[g->by_rank[r]];
        if (!s->runnable_at_launch) continue;
        family *f = family_of(s, fams, &nfams);
        gr_worker *w = &g->workers[(f->members > 1 ? f->next++ : single++) % g->nworkers];
        gr_inst *inst = gr_inst_create(w, s, NULL);
        if (!inst) ok = false;
        else gr_make_runnable(w, inst);
    }
    free(fams);
    return ok;
}

static bool start_threads(gr_graph *g)
{
    if (!(g->watchdog = gr_thread_start(gr_watchdog_main, g, -1))) return false;
    if (g->synchronous) return true;
    if (g->sim) return (g->sim_thread = gr_thread_start(gr_sim_main, g, -1)) != NULL;
    for (unsigned i = 0; i < g->nworkers; i++) {
        int cpu = g->opts.pin ? (int)i : -1;
        if (!(g->workers[i].thread = gr_thread_start(gr_worker_main, &g->workers[i], cpu)))
            return false;
    }
    return true;
}

gr_status gr_launch(gr_graph *g, const gr_launch_opts *o, const int *runnable, int nrunnable)
{
    if (!g) return GR_ERR_INVALID;
    if (g->launched) {
        gr_set_error(g, GR_ERR_INVALID, "gr_launch: the graph was already launched (gr_relaunch "
                     "runs a finished graph again)");
        return GR_ERR_INVALID;
    }
    if (o && !(o->deadlock_seconds <= GR_DEADLOCK_SECONDS_MAX) ) {
        /* NaN would disable the watchdog (every comparison false) and a huge value
         * overflows its conversion to nanoseconds. */
        gr_set_error(g, GR_ERR_INVALID, "gr_launch: deadlock_seconds %g is not a number of "
                     "seconds up to %g (0: the default, 10 s)", o->deadlock_seconds,
                     GR_DEADLOCK_SECONDS_MAX);
        return GR_ERR_INVALID;
    }
    if (o && o->simulate > GR_MAX_WORKERS) {
        gr_set_error(g, GR_ERR_INVALID, "gr_launch: simulate %u is more virtual workers than "
                     "%d (GR_MAX_WORKERS)", o->simulate, GR_MAX_WORKERS);
        return GR_ERR_INVALID;
    }
    if (o && o->simulate && o->sim_calibration && check_calibration(g, o->sim_calibration) != GR_OK)
        return GR_ERR_INVALID;
    resolve_options(g, o);
    if (gr_scheduler_choose(g) != GR_OK) return g->status;
    if (gr_validate(g, runnable, nrunnable) != GR_OK) return g->status;
    if (!gr_buffers_protect(g, true)) {
        gr_buffers_protect(g, false);     /* those already protected, for host access */
        return g->status;
    }
    g->launched = true;
    gr_stack_pool_init(&g->stacks, g->opts.stack_bytes);
    return gr_launch_run(g);
}

/* The part of a launch every run does, the first (gr_launch) and each later one
 * (gr_relaunch), once the options are resolved, the graph validated and its read-only
 * buffers protected. The packet pools, the workers and the static subqueues are made on
 * the first run and kept (gr_relaunch runs only after a run that succeeded, so it finds
 * every worker built; a relaunch has the first run's worker count and options). */
gr_status gr_launch_run(gr_graph *g)
{
    bool kept = g->workers != NULL;   /* a relaunch: the run before succeeded */
    if (!kept) g->workers = gr_calloc_lines(g->nworkers, sizeof *g->workers);
    bool ok = g->workers && (g->pools || create_pools(g)) && create_subqueues(g);
    for (unsigned i = 0; ok && i < g->nworkers; i++) {
        if (kept) reset_worker(g, &g->workers[i]);
        else ok = init_worker(g, &g->workers[i], i);
    }
    if (ok && g->opts.simulate) ok = gr_sim_create(g);
    if (ok) ok = g->sched->init(g) == GR_OK;
    if (ok) {
        gr_capacity_init(g);
        gr_term_start(g);
        ok = start_instances(g);
    }
    if (ok) {
        g->started = true;
        gr_term_kick(g);
        g->t_start = gr_ticks();
        gr_sample_start(g, g->t_start);
        ok = start_threads(g);
    }
    if (!ok) {
        /* Anything already started is stopped and joined by gr_wait. A policy's init
         * records its own error (gr_set_error keeps the first). */
        gr_set_error(g, GR_ERR_NOMEM, "gr_launch: out of memory or threads");
        atomic_store(&g->abort, true);
        return g->status;
    }
    /* Workers may already be recording run-time errors: those are gr_wait's to report. */
    return GR_OK;
}

gr_status gr_wait(gr_graph *g)
{
    if (!g || !g->launched) return GR_ERR_INVALID;
    if (g->waited) return g->status;
    g->waited = true;
    if (g->synchronous && g->watchdog) gr_worker_main(&g->workers[0]);
    for (unsigned i = 0; g->workers && i < g->nworkers; i++)
        if (g->workers[i].thread) gr_thread_join(g->workers[i].thread);
    g->t_end = gr_ticks();
    g->host_ticks = g->t_end - g->t_start;
    if (g->sim_thread) {
        gr_thread_join(g->sim_thread);
        g->host_ticks = gr_ticks() - g->t_start;
        g->t_end = gr_sim_end(g);
    }
    atomic_store(&g->watchdog_stop, true);
    gr_wake_sleepers(g);
    if (g->watchdog) gr_thread_join(g->watchdog);
    /* A launch that failed before every worker was built has no credits or counters
     * to read: its statistics stay empty. */
    if (g->started) gr_sample_final(g);
    gr_buffers_protect(g, false);         /* host access again; a failure sets the error */
    if (g->started) gr_stats_collect(g);
    if (g->sched->teardown) g->sched->teardown(g);
    gr_sim_free(g);
    /* The workers' memory stays for a relaunch (reset_worker); gr_graph_destroy frees it. */
    return g->status;
}
