/* sched_danbi.c — DANBI's dynamic policies (Min et al., "DANBI: dynamic scheduling of
 * irregular stream programs for many-core systems", §III-A) on the GRAMPS runtime's
 * per-stage deques, with GRAMPS' backpressure and preemption watermark:
 *
 * qes  Queue Event-Based Scheduling. A worker keeps running the stage it ran last (its
 *      current kernel) while that stage has local tasks (data parallelism). On a queue
 *      event it turns along the graph: when an output of the stage is full it runs the
 *      consumer of that queue; when the stage has no task (its input is empty) it runs
 *      the producer of its input. DANBI picks "the emptiest input queue and the fullest
 *      output queue"; so does this.
 * pss  QES plus Probabilistic Speculative Scheduling: after every task of stage K, with
 *      F_in the fill ratio of K's emptiest input and F_out of its fullest output, the
 *      worker picks a direction at random and moves to the consumer with probability
 *      max(2 F_out - 1, 0), or to the producer with max(1 - 2 F_in, 0) (DANBI's balanced
 *      transition probabilities P^b), so queues tend to half full: double buffering,
 *      pipeline parallelism before a queue is completely full or empty.
 *
 * When the chosen stage has no task on this worker, the worker steals one of that stage;
 * when there is none anywhere, it falls back to GRAMPS' order (local by priority, then
 * steal from the lowest priority). DANBI's PRS (random switches after long waits for a
 * ticket) has no counterpart: a ticket-ordered Shader (tickets.c) whose slot does not fit
 * goes back to its deque instead of making the worker wait.
 *
 * State affinity as GRAMPS' (sched.c, inbox.h): a woken Thread instance that keeps state
 * goes back to the inbox of the worker it last ran on, which each step drains first,
 * and a thief takes one (from a deque or a busy worker's inbox) only after a whole spin
 * phase in vain. Bin's cross-core resumptions fall 2-3x (docs/many-cores.md).
 *
 * Fill ratios read a queue's free space without the workers' cached credits (a credit
 * is space some worker took ahead), so a ratio is a little high at times: a heuristic's
 * input, never a bound. Queues with no capacity bound (ordered, backward) count as half
 * full, which neither pulls nor pushes. */
#include "gramps/internal.h"

#include <stdlib.h>

typedef struct dn_state {
    int *current;                     /* per worker: the stage it ran last, -1 at first */
    bool speculative;                 /* pss */
} dn_state;

static double fill_ratio(const gr_queue_rt *q)
{
    if (q->d.ordered || q->backward || q->space <= 0) return 0.5;
    double f = 1.0 - (double)atomic_load_explicit(&q->free, memory_order_relaxed) / (double)q->space;
    return f < 0 ? 0 : f > 1 ? 1 : f;
}

/* The producer stage of s's emptiest input (-1: s has no input); its fill in *fill. */
static int upstream(const gr_graph *g, const gr_stage_rt *s, double *fill)
{
    int best = -1;
    *fill = 0.5;
    for (int i = 0; i < s->nin; i++) {
        const gr_queue_rt *q = g->queues[s->in[i].queue];
        double f = fill_ratio(q);
        if (q->nproducers > 0 && (best < 0 || f < *fill)) { best = q->producers[0]; *fill = f; }
    }
    return best;
}

/* The consumer stage of s's fullest forward output (-1: none); its fill in *fill. */
static int downstream(const gr_graph *g, const gr_stage_rt *s, double *fill)
{
    int best = -1;
    *fill = 0.5;
    for (int i = 0; i < s->nout; i++) {
        if (s->out[i].backward) continue;
        const gr_queue_rt *q = g->queues[s->out[i].queue];
        double f = fill_ratio(q);
        if (q->consumer >= 0 && (best < 0 || f > *fill)) { best = q->consumer; *fill = f; }
    }
    return best;
}

/* A task of stage s: this worker's newest (oldest for FIFO stages), else a victim's
 * unless a patient thief leaves it home (state affinity, inbox.h). */
static void *take_from(gr_worker *w, gr_stage_rt *s, bool patient)
{
    if (gr_stage_blocked(w, s)) return NULL;
    gr_dq *dq = &w->dq[s->deque];
    void *t = gr_dq_owner_bound(dq) > 0 ? (s->fifo ? gr_dq_steal(dq) : gr_dq_pop(dq)) : NULL;
    if (t || gr_leave_home(s, patient)) return t;
    for (unsigned v = 0; !t && v + 1 < w->g->nworkers; v++) {
        gr_dq *vq = &w->g->workers[w->victims[v]].dq[s->deque];
        if (gr_dq_size(vq) > 0 && (t = gr_dq_steal(vq))) {
            w->steals++;
            gr_sim_steal(w, t);
        }
    }
    return t;
}

/* A full output is a queue event. An ordered queue's reorder slots are not counted by
 * gr_queue_full (a chain's are reserved by its Thread stage, which blocks), but a
 * ticket-ordered Shader reserves its own and cannot run while its subqueue is full: only
 * the consumer can drain it. */
static bool output_full(gr_worker *w, const gr_queue_rt *q)
{
    if (q->d.ordered && q->physical)
        return atomic_load_explicit(&q->full_subqueues, memory_order_relaxed) > 0;
    return gr_queue_full(w, q);
}

/* QES: the stage to run next after `cur` — itself while it has tasks here and room
 * downstream, the consumer of a full output, the producer of an empty input. */
static int queue_event(gr_worker *w, const gr_stage_rt *cur)
{
    gr_graph *g = w->g;
    double fill;
    for (int i = 0; i < cur->nout; i++)
        if (!cur->out[i].backward && output_full(w, g->queues[cur->out[i].queue]))
            return g->queues[cur->out[i].queue]->consumer;
    if (gr_dq_owner_bound(&w->dq[cur->deque]) > 0) return cur->id;
    return upstream(g, cur, &fill);
}

/* PSS: after a task of s, perhaps move along the graph before a queue runs full or dry. */
static int speculate(gr_worker *w, const gr_stage_rt *s)
{
    gr_graph *g = w->g;
    double fill, p = (double)(gr_next_random(w) >> 11) / 9007199254740992.0;
    bool down = gr_next_random(w) & 1;
    int next = down ? downstream(g, s, &fill) : upstream(g, s, &fill);
    double take = down ? 2 * fill - 1 : 1 - 2 * fill;
    return next >= 0 && p < take ? next : s->id;
}

/* Any task, in GRAMPS' order; an instance waiting in a busy worker's inbox last, once
 * the thief is no longer patient. */
static void *any_task(gr_worker *w, bool patient)
{
    gr_graph *g = w->g;
    void *t = gr_pop_by_priority(w);
    if (!t) {
        gr_flush_partials(w);
        t = gr_pop_by_priority(w);
    }
    if (t) return t;
    gr_pending_flush(w);                  /* out of local work: let termination see it */
    for (int r = 0; !t && r < g->nstages; r++) t = take_from(w, g->stages[g->by_rank[r]], patient);
    if (!t && !patient && (t = gr_inbox_steal(w))) {
        w->steals++;
        gr_sim_steal(w, t);
    }
    return t;
}

static void danbi_loop(gr_worker *w)
{
    dn_state *ds = w->g->sched_state;
    int *cur = &ds->current[w->id];
    unsigned fails = 0;
    while (gr_running(w->g)) {
        gr_inbox_drain(w);
        const bool patient = fails < GR_IDLE_SPINS;
        int next = *cur >= 0 ? queue_event(w, w->g->stages[*cur]) : -1;
        void *t = next >= 0 ? take_from(w, w->g->stages[next], patient) : NULL;
        if (!t) t = any_task(w, patient);
        if (!t) { gr_idle_wait(w, &fails); continue; }
        fails = 0;
        gr_stage_rt *s = gr_task_stage(w->g, t);
        gr_run_task(w, t);
        *cur = ds->speculative ? speculate(w, s) : s->id;
    }
}

static gr_status danbi_init(gr_graph *g, bool speculative)
{
    dn_state *ds = calloc(1, sizeof *ds);
    if (ds) ds->current = malloc(g->nworkers * sizeof *ds->current);
    if (!ds || !ds->current) {
        free(ds);
        gr_set_error(g, GR_ERR_NOMEM, "out of memory for the %s scheduler's state",
                     speculative ? "pss" : "qes");
        return GR_ERR_NOMEM;
    }
    for (unsigned i = 0; i < g->nworkers; i++) ds->current[i] = -1;
    ds->speculative = speculative;
    g->sched_state = ds;
    for (int i = 0; i < g->nstages; i++) g->stages[i]->deque = g->stages[i]->rank;
    return GR_OK;
}

static gr_status qes_init(gr_graph *g) { return danbi_init(g, false); }
static gr_status pss_init(gr_graph *g) { return danbi_init(g, true); }

static void danbi_teardown(gr_graph *g)
{
    dn_state *ds = g->sched_state;
    if (ds) free(ds->current);
    free(ds);
    g->sched_state = NULL;
}

const gr_scheduler gr_sched_qes = {
    .name = "qes",
    .backpressure = true,
    .preempt = GR_PREEMPT_WATERMARK,
    .state_affinity = true,
    .init = qes_init,
    .loop = danbi_loop,
    .teardown = danbi_teardown,
};

const gr_scheduler gr_sched_pss = {
    .name = "pss",
    .backpressure = true,
    .preempt = GR_PREEMPT_WATERMARK,
    .state_affinity = true,
    .init = pss_init,
    .loop = danbi_loop,
    .teardown = danbi_teardown,
};
