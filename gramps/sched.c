/* sched.c — the GRAMPS scheduling policy (Sanchez et al. 2011 §III-A), one loop per
 * worker pthread: pop local work from the highest-priority stage first; when there is
 * none, flush partially coalesced push packets, then steal from the lowest-priority
 * stage first, nearest victims first; when nothing anywhere can run, back off and sleep
 * (tasks.c). One deque per stage per worker, indexed by the stage's rank; a Shader
 * stage whose output queue is full is not run (backpressure). */
#include "gramps/internal.h"

/* The highest-priority local task whose stage is not held back (the Static policy
 * takes its own worker's tasks the same way). */
void *gr_pop_by_priority(gr_worker *w)
{
    gr_graph *g = w->g;
    for (int r = gr_ready_below(w, g->nstages); r >= 0; r = gr_ready_below(w, r)) {
        gr_dq *dq = &w->dq[r];
        if (gr_dq_owner_bound(dq) <= 0) {               /* no read of thieves' line */
            gr_ready_clear(w, r);
            continue;
        }
        gr_stage_rt *s = g->stages[g->by_rank[r]];
        if (gr_stage_blocked(w, s)) continue;
        /* Ordered chains keep FIFO task order so the reorder buffer drains in order. */
        void *t = s->fifo ? gr_dq_steal(dq) : gr_dq_pop(dq);
        if (t) return t;
        if (gr_dq_owner_size(dq) <= 0) gr_ready_clear(w, r);   /* thieves emptied it */
    }
    return NULL;
}

static void *steal(gr_worker *w)
{
    gr_graph *g = w->g;
    for (int r = 0; r < g->nstages; r++) {
        gr_stage_rt *s = g->stages[g->by_rank[r]];
        if (gr_stage_blocked(w, s)) continue;
        for (unsigned v = 0; v + 1 < g->nworkers; v++) {
            gr_worker *victim = &g->workers[w->victims[v]];
            if (gr_dq_size(&victim->dq[r]) <= 0) continue;
            void *t = gr_dq_steal(&victim->dq[r]);
            if (t) return t;
        }
    }
    return NULL;
}

/* One step: find a task and run it. Returns false when nothing could run. */
static bool schedule_once(gr_worker *w)
{
    void *t = gr_pop_by_priority(w);
    if (!t) {
        gr_flush_partials(w);
        t = gr_pop_by_priority(w);
    }
    if (!t) {
        gr_pending_flush(w);              /* out of local work: let termination see it */
        t = steal(w);
        if (t) w->steals++;
    }
    if (!t) return false;
    gr_run_task(w, t);
    return true;
}

static void gramps_loop(gr_worker *w)
{
    unsigned fails = 0;
    while (gr_running(w->g)) {
        if (schedule_once(w)) fails = 0;
        else gr_idle_wait(w, &fails);
    }
}

/* Each stage's tasks in the deque of its priority rank. */
static gr_status gramps_init(gr_graph *g)
{
    for (int i = 0; i < g->nstages; i++) g->stages[i]->deque = g->stages[i]->rank;
    return GR_OK;
}

const gr_scheduler gr_sched_gramps = {
    .name = "gramps",
    .backpressure = true,
    .preempt = GR_PREEMPT_WATERMARK,
    .init = gramps_init,
    .loop = gramps_loop,
};
