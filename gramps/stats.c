/* stats.c — statistics and diagnosis: footprint sampling, the watchdog thread
 * (deadlock detection), the gr_stats summary, its JSON writer, the journal's Chrome
 * trace writer, and the queue-state dump used in deadlock reports.
 *
 * Per-queue depths are sums over workers (capacity.c), so peaks, averages and the
 * whole-graph footprint are all sampled: every 100 us, plus once at the end, by
 * whichever thread finds a sample due. The first samples come sooner, 1, 2, 4 ... 64 us
 * after launch, so that a run shorter than the period (a small render chunk, a test
 * graph) is sampled while its packets are in flight, not only before and after (where
 * every queue is empty and its peak would read 0). Workers check at every scheduling
 * step (they read the clock there anyway), the watchdog every 10 ms in case every
 * worker is inside a long task. A sampler thread of its own woke 10,000 times a second and,
 * with every core busy, preempted a worker each time: 20% of the per-packet cost of
 * empty Shader tasks at 2 workers on the development VM. Samples are weighted by the
 * time since the previous one, so uneven spacing does not bias the averages. */
#include "gramps/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GR_SAMPLE_NS 100000
#define GR_FIRST_SAMPLE_NS 1000 /* the warm-up's first period; it doubles up to GR_SAMPLE_NS */
#define GR_WATCHDOG_NS 10000000

/* With the journal on, queue depths go to the timeline too (changes only, at most
 * 1M events: the journal is bounded like the workers'). */
static void journal_depth(gr_graph *g, int q, int64_t held, uint64_t now)
{
    if (!g->opts.journal || g->ndepths >= (1u << 20)) return;
    if (g->ndepths == g->cap_depths) {
        size_t n = g->cap_depths ? g->cap_depths * 2 : 4096;
        gr_depth_ev *d = realloc(g->depths, n * sizeof *d);
        if (!d) return;
        g->depths = d;
        g->cap_depths = n;
    }
    g->depths[g->ndepths++] = (gr_depth_ev){now, q, (int32_t)held};
}

/* Packets of q that exist and are held: what it is charged, less the reorder slots at
 * an ordered chain's end that hold no packet (the chain's packet is charged to its
 * earlier queue meanwhile, and counts there). */
static int64_t packets_held(const gr_graph *g, gr_queue_rt *q)
{
    int64_t held = gr_queue_held(g, q) - atomic_load_explicit(&q->empty_slots, memory_order_relaxed);
    return held > 0 ? held : 0;
}

/* One sample, standing for the time since the previous one. Callers hold g->sampling
 * (or are alone: before launch's workers start, after they stopped). */
static void take_sample(gr_graph *g, uint64_t now)
{
    double dt = now > g->last_sample ? (double)(now - g->last_sample) : 0.0;
    uint64_t bytes = 0;
    for (int i = 0; i < g->nqueues; i++) {
        gr_queue_rt *q = g->queues[i];
        int64_t held = packets_held(g, q);
        if (held > q->peak) q->peak = held;
        if ((double)held != q->last_sampled) journal_depth(g, i, held, now);
        q->last_sampled = (double)held;
        q->depth_sum += (double)held * dt;
        bytes += (uint64_t)held * q->packet_bytes;
    }
    if (bytes > g->footprint_peak) g->footprint_peak = bytes;
    g->footprint_sum += (double)bytes * dt;
    g->sampled_ticks += dt;
    if (now > g->last_sample) g->last_sample = now;
}

void gr_sample_start(gr_graph *g, uint64_t now)
{
    g->sample_period = (uint64_t)(GR_FIRST_SAMPLE_NS * gr_ticks_per_ns());
    g->last_sample = now;
    atomic_store_explicit(&g->next_sample, now + g->sample_period, memory_order_relaxed);
}

void gr_sample_due(gr_graph *g, uint64_t now)
{
    /* acquire/release: the previous taker's writes happen before this one's */
    if (atomic_exchange_explicit(&g->sampling, true, memory_order_acquire)) return;
    if (now >= atomic_load_explicit(&g->next_sample, memory_order_relaxed)) {
        take_sample(g, now);
        uint64_t steady = (uint64_t)(GR_SAMPLE_NS * gr_ticks_per_ns());
        g->sample_period = g->sample_period * 2 < steady ? g->sample_period * 2 : steady;
        atomic_store_explicit(&g->next_sample, now + g->sample_period, memory_order_relaxed);
    }
    atomic_store_explicit(&g->sampling, false, memory_order_release);
}

void gr_sample_final(gr_graph *g) { take_sample(g, g->t_end); }

static bool all_idle(gr_graph *g, uint64_t *progress)
{
    uint64_t sum = 0;
    bool idle = true;
    for (unsigned i = 0; i < g->nworkers; i++) {
        sum += atomic_load_explicit(&g->workers[i].progress, memory_order_relaxed);
        if (!atomic_load_explicit(&g->workers[i].idle, memory_order_relaxed)) idle = false;
    }
    *progress = sum;
    return idle;
}

static void report_deadlock(gr_graph *g)
{
    char state[GR_ERROR_MAX - 256];
    gr_describe_state(g, state, sizeof state);
    gr_set_error(g, GR_ERR_DEADLOCK, "deadlock: no stage made progress for %.1f s and every "
                 "worker is idle. State:\n%s", g->opts.deadlock_seconds, state);
    atomic_store(&g->abort, true);
    gr_wake_sleepers(g);
}

static bool watching(gr_graph *g)
{
    return !atomic_load(&g->watchdog_stop) && atomic_load(&g->comps_left) > 0 &&
           !atomic_load(&g->abort);
}

/* Sleeps for period_ns, or less: the end of the run (the last component finishing,
 * an abort, gr_wait) broadcasts sleep_cond, so gr_wait does not wait out a period to
 * join this thread. The check under sleep_lock cannot miss that broadcast. */
static void wait_period(gr_graph *g, double period_ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)period_ns;
    ts.tv_sec += (time_t)(ns / 1000000000u);
    ts.tv_nsec = (long)(ns % 1000000000u);
    pthread_mutex_lock(&g->sleep_lock);
    if (watching(g)) pthread_cond_timedwait(&g->sleep_cond, &g->sleep_lock, &ts);
    pthread_mutex_unlock(&g->sleep_lock);
}

/* Deadlock detection: no stage made progress for deadlock_seconds while every worker
 * was idle. Also samples the footprint when every worker is inside a long task. */
/* A worker busy in one task with no sign of life (no new task, no runtime call) for
 * deadlock_seconds: a stage stuck in its own code. The run cannot end until it returns,
 * so it is said at once on stderr as well as in the run's error, and the other workers
 * stop. Reported once per run. */
typedef struct stuck_watch {
    uint64_t *last, *since;
    bool reported;
} stuck_watch;

static void watch_stuck(gr_graph *g, stuck_watch *sw, uint64_t now)
{
    if (!sw->last || !sw->since || sw->reported) return;
    for (unsigned i = 0; i < g->nworkers; i++) {
        gr_worker *w = &g->workers[i];
        uint64_t p = atomic_load_explicit(&w->progress, memory_order_relaxed);
        /* A simulation runs one worker at a time: the others wait their turn, not stuck. */
        bool waiting = g->sim && gr_sim_running(g) != (int)i;
        if (waiting || atomic_load_explicit(&w->idle, memory_order_relaxed) || p != sw->last[i]) {
            sw->last[i] = p;
            sw->since[i] = now;
            continue;
        }
        double secs = (double)(now - sw->since[i]) * 1e-9;
        const bool device = atomic_load_explicit(&w->device_wait, memory_order_relaxed);
        if (secs <= g->opts.deadlock_seconds * (device ? GR_DEVICE_WAIT_FACTOR : 1)) continue;
        int s = atomic_load_explicit(&w->running, memory_order_relaxed);
        const char *name = s >= 0 && s < g->nstages ? g->stages[s]->name : "?";
        const char *doing = device ? "has waited on its accelerator" : "has run its own code";
        gr_set_error(g, GR_ERR_DEADLOCK, "stage '%s' on worker %u %s for %.1f s without "
                     "returning or calling the runtime; the run ends when it returns", name, i,
                     doing, secs);
        fprintf(stderr, "gramps: stage '%s' on worker %u %s for %.1f s without returning or "
                "calling the runtime; the run ends when it returns\n", name, i, doing, secs);
        atomic_store(&g->abort, true);
        gr_wake_sleepers(g);
        sw->reported = true;
        return;
    }
}

void *gr_watchdog_main(void *arg)
{
    gr_graph *g = arg;
    uint64_t last_progress = UINT64_MAX, stalled_since = 0;
    stuck_watch sw = {calloc(g->nworkers, sizeof *sw.last), calloc(g->nworkers, sizeof *sw.since),
                      false};
    for (unsigned i = 0; sw.last && sw.since && i < g->nworkers; i++) {
        sw.last[i] = atomic_load_explicit(&g->workers[i].progress, memory_order_relaxed);
        sw.since[i] = gr_now_ns();
    }
    double period_ns = g->opts.deadlock_seconds * 1e9 / 20;
    if (period_ns > GR_WATCHDOG_NS) period_ns = GR_WATCHDOG_NS;
    if (period_ns < GR_SAMPLE_NS) period_ns = GR_SAMPLE_NS;
    while (watching(g)) {
        if (!g->sim) gr_maybe_sample(g, gr_ticks());   /* a simulation's clocks are virtual */
        uint64_t progress, now = gr_now_ns();
        bool idle = all_idle(g, &progress);
        if (!idle || progress != last_progress) {
            last_progress = progress;
            stalled_since = now;
        } else if (now - stalled_since > (uint64_t)(g->opts.deadlock_seconds * 1e9)) {
            report_deadlock(g);
        }
        watch_stuck(g, &sw, now);
        wait_period(g, period_ns);
    }
    free(sw.last);
    free(sw.since);
    return NULL;
}

/* ---- queue-state dump ----------------------------------------------------------------- */

static const char *inst_state_name(int st)
{
    static const char *names[] = {"runnable", "running", "blocked on input",
                                  "blocked on full output", "done"};
    return st >= 0 && st <= GR_INST_DONE ? names[st] : "?";
}

void gr_describe_state(gr_graph *g, char *buf, size_t len)
{
    size_t at = 0;
#define OUT(...) do { if (at < len) at += (size_t)snprintf(buf + at, len - at, __VA_ARGS__); } while (0)
    for (int i = 0; i < g->nqueues; i++) {
        gr_queue_rt *q = g->queues[i];
        OUT("  queue '%s' -> '%s': %lld/%u packets%s%s\n", q->name, g->stages[q->consumer]->name,
            (long long)gr_queue_held(g, q), q->d.capacity,
            atomic_load(&q->closed) ? ", closed" : "", q->backward ? ", backward edge" : "");
    }
    for (int i = 0; i < g->nstages; i++) {
        gr_stage_rt *s = g->stages[i];
        for (gr_inst *in = s->instances; in; in = in->next_all) {
            int st = atomic_load(&in->state);
            if (st == GR_INST_DONE) continue;
            OUT("  stage '%s' instance %u: %s", s->name, in->number, inst_state_name(st));
            if (st == GR_INST_BLOCKED_IN && in->block_sub)
                OUT(" '%s' (needs %u)", in->block_sub->queue->name, in->block_need);
            if (st == GR_INST_BLOCKED_OUT)
                OUT(" '%s'", in->block_sub ? in->block_sub->queue->name : in->block_queue->name);
            OUT("\n");
        }
    }
#undef OUT
}

/* ---- summary -------------------------------------------------------------------------- */

static void collect_queues(gr_graph *g, gr_stats *st)
{
    for (int i = 0; i < g->nqueues; i++) {
        gr_queue_rt *q = g->queues[i];
        gr_queue_stats *qs = &st->queues[i];
        qs->name = q->name;
        qs->capacity = q->d.capacity;
        qs->packet_bytes = q->packet_bytes;
        qs->packets = 0;
        for (unsigned k = 0; k < g->nworkers; k++) qs->packets += g->workers[k].queue_packets[i];
        qs->peak_packets = (uint64_t)q->peak;
        qs->reserved_peak_packets = (uint64_t)atomic_load(&q->reserved_peak);
        qs->backward = q->backward;
        qs->avg_packets = g->sampled_ticks > 0 ? q->depth_sum / g->sampled_ticks : 0;
        qs->peak_bytes = qs->peak_packets * q->packet_bytes;
        qs->avg_bytes = qs->avg_packets * (double)q->packet_bytes;
        uint32_t n = q->d.dynamic_keys ? atomic_load(&q->keys.count) : q->nsubs;
        qs->subqueues = q->is_set ? n : 1;
        for (uint32_t k = 0; q->subs && k < n; k++)
            if (q->subs[k] && q->subs[k]->peak > qs->peak_subqueue_packets)
                qs->peak_subqueue_packets = q->subs[k]->peak;
        if (!q->physical) qs->peak_subqueue_packets = (uint32_t)qs->peak_packets;
    }
}

static void collect_workers(gr_graph *g, gr_stats *st)
{
    double app = 0;
    for (unsigned i = 0; i < g->nworkers; i++) {
        gr_worker *w = &g->workers[i];
        gr_worker_stats *ws = &st->per_worker[i];
        /* Thread-stage intrinsics run inside the fiber's application time, Shader output
         * commits inside scheduling time; their shares are estimated from the timed 1 in
         * GR_QUEUE_SAMPLE calls and moved to queue time. */
        double q_est = gr_sampled_total(&w->intrinsics, w->t[GR_T_APP]);
        double f_est = gr_sampled_total(&w->commits, w->t[GR_T_SCHED]);
        ws->app_ms = gr_ticks_to_ms((uint64_t)((double)w->t[GR_T_APP] - q_est));
        ws->queue_ms = gr_ticks_to_ms(w->t[GR_T_QUEUE] + (uint64_t)q_est + (uint64_t)f_est);
        ws->sched_ms = gr_ticks_to_ms((uint64_t)((double)w->t[GR_T_SCHED] - f_est));
        ws->idle_ms = gr_ticks_to_ms(w->t[GR_T_IDLE]);
        ws->tasks = w->tasks;
        ws->steals = w->steals;
        ws->flushes = w->flushes;
        ws->remote_packets = w->sim_remote_packets;
        ws->remote_lines = w->sim_remote_lines;
        ws->line_takes = w->sim_line_takes;
        ws->line_wait_ms = gr_ticks_to_ms(w->sim_line_wait_ticks);
        ws->state_moves = w->sim_state_moves;
        ws->lock_handoffs = w->sim_lock_handoffs;
        ws->lock_wait_ms = gr_ticks_to_ms(w->sim_lock_wait_ticks);
        app += ws->app_ms;
        for (int s = 0; s < g->nstages; s++) {
            st->stages[s].busy_ms += gr_ticks_to_ms(w->stage_ticks[s]);
            st->stages[s].tasks += w->stage_tasks[s];
        }
    }
    st->occupancy = st->wall_ms > 0 ? app / (st->wall_ms * g->nworkers) : 0;
}

static void collect_journal(gr_graph *g)
{
    if (!g->opts.journal) return;
    size_t n = 0;
    for (unsigned i = 0; i < g->nworkers; i++) n += g->workers[i].journal_len;
    g->journal_events = malloc((n ? n : 1) * sizeof *g->journal_events);
    if (!g->journal_events) return;
    for (unsigned i = 0; i < g->nworkers; i++) {
        memcpy(g->journal_events + g->njournal, g->workers[i].journal,
               g->workers[i].journal_len * sizeof *g->journal_events);
        g->njournal += g->workers[i].journal_len;
    }
}

/* Singletons' share of all stage work. A singleton cannot use a second worker, so its
 * busy time is the part of the run no worker count shortens (Amdahl's serial part).
 * The copies of a replicated stage are not: more workers bring more groups, and the
 * stage's work divides among its copies. */
static void collect_serial_share(gr_stats *st)
{
    double all = 0, serial = 0;
    for (int i = 0; i < st->nstages; i++) {
        gr_stage_stats *s = &st->stages[i];
        s->singleton = s->kind != GR_SHADER && s->instances == 1 && !s->replicated;
        all += s->busy_ms;
        if (s->singleton) serial += s->busy_ms;
    }
    st->serial_share = all > 0 ? serial / all : 0;
}

double gr_amdahl_bound(double serial_share, unsigned workers)
{
    double s = serial_share < 0 ? 0 : serial_share > 1 ? 1 : serial_share;
    return workers ? 1.0 / (s + (1.0 - s) / workers) : 0;
}

void gr_stats_collect(gr_graph *g)
{
    gr_stats *st = &g->stats;
    st->scheduler = g->sched->name;
    st->workers = g->nworkers;
    st->nqueues = g->nqueues;
    st->nstages = g->nstages;
    st->queues = calloc((size_t)g->nqueues + 1, sizeof *st->queues);
    st->stages = calloc((size_t)g->nstages + 1, sizeof *st->stages);
    st->per_worker = calloc(g->nworkers, sizeof *st->per_worker);
    if (!st->queues || !st->stages || !st->per_worker) return;
    st->wall_ms = gr_ticks_to_ms(g->t_end - g->t_start);
    st->host_ms = gr_ticks_to_ms(g->host_ticks);
    st->simulated_workers = g->opts.simulate;
    st->partition = g->partition;
    st->partition_fell_back = g->partition_fell_back;
    st->partition_max_load = g->partition_max_load;
    st->peak_footprint_bytes = g->footprint_peak;
    st->avg_footprint_bytes = g->sampled_ticks > 0 ? g->footprint_sum / g->sampled_ticks : 0;
    for (int i = 0; i < g->npools; i++) st->buffer_mallocs += atomic_load(&g->pools[i].mallocs);
    for (int i = 0; i < g->nstages; i++) {
        gr_stage_rt *s = g->stages[i];
        st->stages[i].name = s->name;
        st->stages[i].kind = s->d.kind;
        st->stages[i].replicated = s->d.replicated;
        st->stages[i].priority = s->priority;
        st->stages[i].instances = atomic_load(&s->ninstances);
        st->stages[i].preemptions = atomic_load(&s->preemptions);
        st->stages[i].device = s->device;
        st->stages[i].placement = s->placement[0] ? s->placement : NULL;
        st->stages[i].kernel_launches = atomic_load(&s->dev_launches);
        st->stages[i].kernel_ms = (double)atomic_load(&s->dev_kernel_ns) / 1e6;
        st->stages[i].bytes_to_device = atomic_load(&s->dev_bytes_to);
        st->stages[i].bytes_from_device = atomic_load(&s->dev_bytes_from);
        st->stages[i].device_queue_peak = atomic_load(&s->dev_queue_peak);
        st->stages[i].device_queue_capacity = atomic_load(&s->dev_queue_capacity);
        st->stages[i].relaunches_from_slot = atomic_load(&s->dev_slot_relaunches);
    }
    collect_queues(g, st);
    collect_workers(g, st);
    collect_serial_share(st);
    collect_journal(g);
    g->stats_ready = true;
}

void gr_stats_free(gr_graph *g)
{
    free(g->stats.queues);
    free(g->stats.stages);
    free(g->stats.per_worker);
    free(g->journal_events);
    free(g->depths);
}

const gr_stats *gr_get_stats(const gr_graph *g)
{
    return g && g->stats_ready ? &g->stats : NULL;
}

/* ---- JSON ------------------------------------------------------------------------------ */

static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(out, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(out, "\\u%04x", *s);
        else fputc(*s, out);
    }
    fputc('"', out);
}

static void json_queues(const gr_stats *st, FILE *out)
{
    fprintf(out, "  \"queues\": [\n");
    for (int i = 0; i < st->nqueues; i++) {
        const gr_queue_stats *q = &st->queues[i];
        fprintf(out, "    {\"name\": ");
        json_string(out, q->name);
        fprintf(out, ", \"capacity\": %u, \"subqueues\": %u, \"packet_bytes\": %zu, "
                "\"packets\": %llu, \"peak_packets\": %llu, \"reserved_peak_packets\": %llu, "
                "\"avg_packets\": %.3f, "
                "\"peak_bytes\": %llu, \"avg_bytes\": %.1f, \"peak_subqueue_packets\": %u, "
                "\"backward\": %s}%s\n",
                q->capacity, q->subqueues, q->packet_bytes, (unsigned long long)q->packets,
                (unsigned long long)q->peak_packets, (unsigned long long)q->reserved_peak_packets,
                q->avg_packets,
                (unsigned long long)q->peak_bytes, q->avg_bytes, q->peak_subqueue_packets,
                q->backward ? "true" : "false",
                i + 1 < st->nqueues ? "," : "");
    }
    fprintf(out, "  ],\n");
}

static void json_stages(const gr_stats *st, FILE *out)
{
    static const char *kinds[] = {"thread", "shader", "fixed"};
    fprintf(out, "  \"stages\": [\n");
    for (int i = 0; i < st->nstages; i++) {
        const gr_stage_stats *s = &st->stages[i];
        fprintf(out, "    {\"name\": ");
        json_string(out, s->name);
        fprintf(out, ", \"kind\": \"%s\", \"priority\": %d, \"tasks\": %llu, \"instances\": %llu, "
                "\"busy_ms\": %.3f, \"preemptions\": %llu, \"replicated\": %s, \"singleton\": %s, "
                "\"device\": ",
                kinds[s->kind], s->priority, (unsigned long long)s->tasks,
                (unsigned long long)s->instances, s->busy_ms, (unsigned long long)s->preemptions,
                s->replicated ? "true" : "false", s->singleton ? "true" : "false");
        json_string(out, s->device ? s->device : "cpu");
        fprintf(out, ", \"kernel_launches\": %llu, \"kernel_ms\": %.3f, \"bytes_to_device\": %llu, "
                "\"bytes_from_device\": %llu", (unsigned long long)s->kernel_launches,
                s->kernel_ms, (unsigned long long)s->bytes_to_device,
                (unsigned long long)s->bytes_from_device);
        if (s->placement) {
            fprintf(out, ", \"placement\": ");
            json_string(out, s->placement);
        }
        if (s->device_queue_capacity)
            fprintf(out, ", \"device_queue_peak\": %u, \"device_queue_capacity\": %u",
                    s->device_queue_peak, s->device_queue_capacity);
        if (s->device_queue_capacity || s->relaunches_from_slot)
            fprintf(out, ", \"relaunches_from_slot\": %llu",
                    (unsigned long long)s->relaunches_from_slot);
        fprintf(out, "}%s\n", i + 1 < st->nstages ? "," : "");
    }
    fprintf(out, "  ],\n");
}

static void json_workers(const gr_stats *st, FILE *out)
{
    fprintf(out, "  \"workers_time\": [\n");
    for (unsigned i = 0; i < st->workers; i++) {
        const gr_worker_stats *w = &st->per_worker[i];
        fprintf(out, "    {\"application_ms\": %.3f, \"queue_ms\": %.3f, \"scheduling_ms\": %.3f, "
                "\"no_work_ms\": %.3f, \"tasks\": %llu, \"steals\": %llu, \"flushes\": %llu",
                w->app_ms, w->queue_ms, w->sched_ms, w->idle_ms, (unsigned long long)w->tasks,
                (unsigned long long)w->steals, (unsigned long long)w->flushes);
        if (st->simulated_workers)
            fprintf(out, ", \"remote_packets\": %llu, \"remote_lines\": %llu, \"line_takes\": "
                    "%llu, \"line_wait_ms\": %.3f, \"state_moves\": %llu, \"lock_handoffs\": "
                    "%llu, \"lock_wait_ms\": %.3f",
                    (unsigned long long)w->remote_packets, (unsigned long long)w->remote_lines,
                    (unsigned long long)w->line_takes, w->line_wait_ms,
                    (unsigned long long)w->state_moves, (unsigned long long)w->lock_handoffs,
                    w->lock_wait_ms);
        fprintf(out, "}%s\n", i + 1 < st->workers ? "," : "");
    }
    fprintf(out, "  ]\n");
}

void gr_stats_write_json(const gr_graph *g, FILE *out)
{
    const gr_stats *st = gr_get_stats(g);
    if (!st) { fprintf(out, "null\n"); return; }
    fprintf(out, "{\n  \"scheduler\": ");
    json_string(out, st->scheduler);
    fprintf(out, ",\n  \"workers\": %u,\n  \"wall_ms\": %.3f,\n  \"occupancy\": %.4f,\n"
            "  \"peak_footprint_bytes\": %llu,\n  \"avg_footprint_bytes\": %.1f,\n"
            "  \"buffer_mallocs\": %llu,\n", st->workers, st->wall_ms, st->occupancy,
            (unsigned long long)st->peak_footprint_bytes, st->avg_footprint_bytes,
            (unsigned long long)st->buffer_mallocs);
    if (st->simulated_workers)
        fprintf(out, "  \"simulated_workers\": %u,\n  \"host_ms\": %.3f,\n",
                st->simulated_workers, st->host_ms);
    if (st->partition) {
        fprintf(out, "  \"partition\": ");
        json_string(out, st->partition);
        fprintf(out, ",\n  \"partition_fell_back\": %s,\n  \"partition_max_load\": %lld,\n",
                st->partition_fell_back ? "true" : "false", (long long)st->partition_max_load);
    }
    fprintf(out, "  \"serial_share\": %.4f,\n  \"amdahl_bound_16\": %.2f,\n"
            "  \"amdahl_bound_64\": %.2f,\n", st->serial_share,
            gr_amdahl_bound(st->serial_share, 16), gr_amdahl_bound(st->serial_share, 64));
    json_queues(st, out);
    json_stages(st, out);
    json_workers(st, out);
    fprintf(out, "}\n");
}

/* ---- journal ---------------------------------------------------------------------------- */

void gr_journal_add(gr_worker *w, int stage, uint32_t instance, uint64_t t0, uint64_t t1)
{
    if (w->journal_len == w->journal_cap) return;   /* full: later events are dropped */
    w->journal[w->journal_len++] = (gr_journal_ev){t0, t1, stage, instance, w->id};
}

/* Microseconds since the launch, the trace's time unit. */
static double trace_us(const gr_graph *g, uint64_t t)
{
    return t > g->t_start ? (double)(t - g->t_start) / gr_ticks_per_ns() / 1e3 : 0;
}

/* Perfetto names the process and each worker's thread track from metadata events. */
static void trace_names(const gr_graph *g, FILE *out)
{
    const char *virt = g->opts.simulate ? " (virtual time)" : "";
    fprintf(out, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"args\": "
            "{\"name\": \"gramps (%s scheduler)%s\"}}", g->sched->name,
            g->opts.simulate ? ", simulated: virtual time" : "");
    for (unsigned w = 0; w < g->nworkers; w++)
        fprintf(out, ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": %u, "
                "\"args\": {\"name\": \"%sworker %u%s\"}}", w, g->opts.simulate ? "virtual " : "", w, virt);
}

/* One slice per task: a Shader task or a Thread activation, on its worker's track. */
static void trace_slices(const gr_graph *g, FILE *out)
{
    for (size_t i = 0; i < g->njournal; i++) {
        const gr_journal_ev *e = &g->journal_events[i];
        fprintf(out, ",\n{\"name\": ");
        json_string(out, g->stages[e->stage]->name);
        fprintf(out, ", \"ph\": \"X\", \"pid\": 1, \"tid\": %u, \"ts\": %.3f, \"dur\": %.3f, "
                "\"args\": {\"instance\": %u}}", e->worker, trace_us(g, e->t0),
                (double)(e->t1 - e->t0) / gr_ticks_per_ns() / 1e3, e->instance);
    }
}

static void trace_counter(FILE *out, const char *name, double ts, uint64_t bytes)
{
    fprintf(out, ",\n{\"name\": ");
    json_string(out, name);
    fprintf(out, ", \"ph\": \"C\", \"pid\": 1, \"ts\": %.3f, \"args\": {\"bytes\": %llu}}",
            ts, (unsigned long long)bytes);
}

/* One counter track per queue in bytes, and the total footprint: the samples journal
 * only the queues that changed, all at the sample's time, so the total is the running
 * sum of the latest values, written once per sample. Its peak is the stats' peak
 * footprint, each queue's the stats' peak_bytes (the same samples). */
static int trace_counters(const gr_graph *g, FILE *out)
{
    uint64_t *cur = calloc((size_t)g->nqueues + 1, sizeof *cur), total = 0;
    if (!cur) return -1;
    for (size_t i = 0; i < g->ndepths; i++) {
        const gr_depth_ev *d = &g->depths[i];
        uint64_t bytes = (uint64_t)d->packets * g->queues[d->queue]->packet_bytes;
        total = total - cur[d->queue] + bytes;
        cur[d->queue] = bytes;
        trace_counter(out, g->queues[d->queue]->name, trace_us(g, d->t), bytes);
        if (i + 1 == g->ndepths || g->depths[i + 1].t != d->t)
            trace_counter(out, "total footprint", trace_us(g, d->t), total);
    }
    free(cur);
    return 0;
}

size_t gr_journal_depths(const gr_graph *g, gr_depth_sample *out, size_t max)
{
    for (size_t i = 0; i < g->ndepths && i < max; i++)
        out[i] = (gr_depth_sample){trace_us(g, g->depths[i].t) / 1e3, g->depths[i].queue,
                                   (uint64_t)g->depths[i].packets};
    return g->ndepths;
}

int gr_journal_write(const gr_graph *g, FILE *out)
{
    if (!g->journal_events) return -1;
    fprintf(out, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
    trace_names(g, out);
    trace_slices(g, out);
    int rc = trace_counters(g, out);
    fprintf(out, "\n]}\n");
    return rc;
}

/* Ticks since the launch in ms (0 for an event stamped before it). */
static double since_launch_ms(const gr_graph *g, uint64_t t)
{
    return t > g->t_start ? gr_ticks_to_ms(t - g->t_start) : 0;
}

size_t gr_journal_slices(const gr_graph *g, gr_slice *out, size_t max)
{
    if (!g->journal_events) return 0;
    for (size_t i = 0; i < g->njournal && i < max; i++) {
        const gr_journal_ev *e = &g->journal_events[i];
        out[i] = (gr_slice){e->stage, e->worker, since_launch_ms(g, e->t0), since_launch_ms(g, e->t1)};
    }
    return g->njournal;
}
