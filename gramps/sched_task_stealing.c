/* sched_task_stealing.c — the Task-Stealing policy (Sanchez et al. 2011 §IV-A), after
 * the Cilk 5 scheduler: one LIFO Chase-Lev deque per worker for the tasks of every stage
 * (no per-stage deques, so no priorities and no backpressure: data queues are
 * unbounded), FIFO steals from a random victim, and work-first Thread stages: one is
 * preempted as soon as it commits an output packet.
 *
 * Work-first means the child runs before its parent continues: the preempted instance
 * (the parent) is held aside while the worker pops the newest task (its child, just
 * pushed), then goes into the deque under it, where thieves can take it while the
 * child runs. Pushing it straight back would put it on top and run it again first. */
#include "gramps/internal.h"

static void ts_requeue(gr_worker *w, gr_inst *inst)
{
    if (w->continuation) gr_push_own(w, w->continuation->stage, 0, gr_inst_task(w->continuation));
    w->continuation = inst;
}

/* The held-back parent goes into the deque, under the task about to run. */
static void release_continuation(gr_worker *w)
{
    gr_inst *parent = w->continuation;
    if (!parent) return;
    w->continuation = NULL;
    gr_push_own(w, parent->stage, 0, gr_inst_task(parent));
}

static uint64_t next_random(gr_worker *w)
{
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    return w->rng;
}

/* FIFO steal from the victims in order from a random one. */
static void *ts_steal(gr_worker *w)
{
    gr_graph *g = w->g;
    unsigned n = g->nworkers;
    if (n < 2) return NULL;
    unsigned start = (unsigned)(next_random(w) % (n - 1));
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
    if (!t && w->continuation) {          /* the child ran to completion: parent resumes */
        release_continuation(w);
        t = gr_dq_pop(&w->dq[0]);
    }
    if (!t) {
        gr_flush_partials(w);
        t = gr_dq_pop(&w->dq[0]);
    }
    if (!t) {
        gr_pending_flush(w);              /* out of local work: let termination see it */
        t = ts_steal(w);
        if (t) w->steals++;
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
        release_continuation(w);
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
