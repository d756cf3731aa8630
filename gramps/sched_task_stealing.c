/* sched_task_stealing.c — the Task-Stealing policy (Sanchez et al. 2011 §IV-A), after
 * the Cilk 5 scheduler: one LIFO Chase-Lev deque per worker for the tasks of every stage
 * (no per-stage deques, so no priorities and no backpressure: data queues are
 * unbounded), FIFO steals from a random victim, and work-first Thread stages: one is
 * preempted as soon as it commits output.
 *
 * Work-first means the children run before their parent continues: the preempted
 * instance (the parent) goes into the deque UNDER every task its commit made (Cilk's
 * continuation under its spawned child), so the worker pops the children first and a
 * thief, stealing from the other end, takes the parent first. A commit can make several
 * tasks at once (the ray tracer's Tiler commits a tile's 16 sample runs): putting the
 * parent on top of them, or under only the newest, let it run again after one child and
 * pile up 15 of every 16 runs (the runs queue peaked at 15,301 of a frame's 16,384 at 1
 * worker). The children are the tasks pushed since the activation began (ts_mark: the
 * deque's bottom then); one that a thief took meanwhile is simply not there. */
#include "gramps/internal.h"

#define TS_MAX_CHILDREN 512               /* beyond: the rest stay under the parent */

static void ts_requeue(gr_worker *w, gr_inst *inst)
{
    void *children[TS_MAX_CHILDREN];
    int k = 0;
    for (int64_t n = gr_dq_owner_pushed(&w->dq[0]) - w->ts_mark; k < n && k < TS_MAX_CHILDREN;) {
        void *t = gr_dq_pop(&w->dq[0]);
        if (!t) break;
        children[k++] = t;
    }
    gr_push_own(w, inst->stage, 0, gr_inst_task(inst));
    while (k > 0) gr_push_own(w, inst->stage, 0, children[--k]);
}

/* FIFO steal from the victims in order from a random one. */
static void *ts_steal(gr_worker *w)
{
    gr_graph *g = w->g;
    unsigned n = g->nworkers;
    if (n < 2) return NULL;
    unsigned start = (unsigned)(gr_next_random(w) % (n - 1));
    for (unsigned k = 0; k + 1 < n; k++) {
        gr_worker *victim = &g->workers[w->victims[(start + k) % (n - 1)]];
        if (gr_dq_size(&victim->dq[0]) <= 0) continue;
        void *t = gr_dq_steal(&victim->dq[0]);
        if (t) return t;
    }
    return NULL;
}

static void *ts_find(gr_worker *w)
{
    void *t = gr_dq_pop(&w->dq[0]);
    if (!t) {
        gr_flush_partials(w);
        t = gr_dq_pop(&w->dq[0]);
    }
    if (!t) {
        gr_pending_flush(w);              /* out of local work: let termination see it */
        t = ts_steal(w);
        if (t) {
            w->steals++;
            gr_sim_steal(w, t);
        }
    }
    return t;
}

static void ts_loop(gr_worker *w)
{
    unsigned fails = 0;
    while (gr_running(w->g)) {
        void *t = ts_find(w);
        if (!t) { gr_idle_wait(w, &fails); continue; }
        fails = 0;
        w->ts_mark = gr_dq_owner_pushed(&w->dq[0]);
        gr_run_task(w, t);
    }
}

/* Every stage's tasks in deque 0: one deque per worker. */
static gr_status ts_init(gr_graph *g)
{
    for (int i = 0; i < g->nstages; i++) g->stages[i]->deque = 0;
    return GR_OK;
}

const gr_scheduler gr_sched_task_stealing = {
    .name = "task-stealing",
    .backpressure = false,
    .preempt = GR_PREEMPT_EACH_OUTPUT,
    .init = ts_init,
    .requeue = ts_requeue,
    .loop = ts_loop,
};
