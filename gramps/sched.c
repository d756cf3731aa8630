/* sched.c — the GRAMPS scheduling policy (Sanchez et al. 2011 §III-A), one loop per
 * worker pthread: pop local work from the highest-priority stage first (after a Shader
 * task, more of the same stage first, up to its low watermark: thesis §5.4.1); when
 * there is none, flush partially coalesced push packets, then steal from the lowest-priority
 * stage first, nearest victims first; when nothing anywhere can run, back off and sleep
 * (tasks.c). One deque per stage per worker, indexed by the stage's rank; a Shader
 * stage whose output queue is full is not run (backpressure).
 *
 * State affinity: a Thread instance that keeps private state (gr_state_bytes) runs where
 * its state is. Woken on another worker, it goes back to its last worker's inbox
 * (inbox.h), which each step begins by moving into the deques; and a thief takes such an
 * instance (from a deque or an inbox) only once it has searched in vain for a whole spin
 * phase (GR_IDLE_SPINS): the owner, busy with a task, is likely to come to it sooner
 * than the state (a Bin instance's: 217 KiB) would take to move. The owner always runs
 * its own deques and inbox, so nothing waits on a thief. */
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

static void *steal_rank(gr_worker *w, int r, int bit, unsigned nvictims)
{
    for (unsigned v = 0; v < nvictims; v++) {
        if (!(w->victim_ready[v] >> bit & 1)) continue;
        gr_dq *dq = &w->g->workers[w->victims[v]].dq[r];
        if (gr_dq_size(dq) <= 0) continue;
        void *t = gr_dq_steal(dq);
        if (t) return t;
    }
    return NULL;
}

/* From the lowest rank up, nearest victim first within a rank (as a scan of every
 * victim's every deque would take them), probing only the deques the victims' ready bits
 * flag: one line per victim per 64 stages instead of one per victim per stage. */
static void *steal(gr_worker *w, bool patient)
{
    gr_graph *g = w->g;
    const unsigned nvictims = g->nworkers - 1;
    for (int word = 0; word * 64 < g->nstages; word++) {
        uint64_t any = 0;
        for (unsigned v = 0; v < nvictims; v++)
            any |= w->victim_ready[v] = gr_ready_word(&g->workers[w->victims[v]], word);
        for (; any; any &= any - 1) {
            const int bit = __builtin_ctzll(any), r = word * 64 + bit;
            const gr_stage_rt *s = g->stages[g->by_rank[r]];
            if (gr_stage_blocked(w, s) || gr_leave_home(s, patient)) continue;
            void *t = steal_rank(w, r, bit, nvictims);
            if (t) return t;
        }
    }
    return NULL;
}

/* The thesis' Shader rule (§5.4.1): a worker that ran a task of a Shader stage takes its
 * next local task of the same stage before looking at any other, while fewer than the
 * stage's low watermark ran in a row and the stage is not held back, so that a Shader
 * producer and its consumers do not ping-pong task by task. */
static void *pop_same_stage(gr_worker *w)
{
    const int r = w->streak_rank;
    if (r < 0) return NULL;
    gr_stage_rt *s = w->g->stages[w->g->by_rank[r]];
    gr_dq *dq = &w->dq[r];
    if (w->streak >= s->low_watermark || gr_dq_owner_bound(dq) <= 0 || gr_stage_blocked(w, s))
        return NULL;
    return s->fifo ? gr_dq_steal(dq) : gr_dq_pop(dq);
}

/* After a task ran (ran: false when it went back to its deque): the streak the rule
 * above counts. A Thread activation or a task that did not run ends it. */
static void count_streak(gr_worker *w, const gr_stage_rt *s, bool shader, bool ran)
{
    if (!shader || !ran) w->streak_rank = -1;
    else if (s->rank == w->streak_rank) w->streak++;
    else {
        w->streak_rank = s->rank;
        w->streak = 1;
    }
}

/* One step: find a task and run it (fails: the searches in vain before this one).
 * Returns false when nothing could run. */
static bool schedule_once(gr_worker *w, unsigned fails)
{
    gr_inbox_drain(w);
    void *t = pop_same_stage(w);
    if (!t) t = gr_pop_by_priority(w);
    if (!t) {
        gr_flush_partials(w);
        t = gr_pop_by_priority(w);
    }
    if (!t) {
        gr_pending_flush(w);              /* out of local work: let termination see it */
        const bool patient = fails < GR_IDLE_SPINS;
        t = steal(w, patient);
        if (!t && !patient) t = gr_inbox_steal(w);
        if (t) {
            w->steals++;
            gr_sim_steal(w, t);
        }
    }
    if (!t) return false;
    const gr_stage_rt *s = gr_task_stage(w->g, t);   /* before the run frees the packet */
    const bool shader = !gr_task_is_inst(t);
    const uint64_t tasks = w->tasks;
    gr_run_task(w, t);
    count_streak(w, s, shader, w->tasks != tasks);
    return true;
}

static void gramps_loop(gr_worker *w)
{
    unsigned fails = 0;
    while (gr_running(w->g)) {
        if (schedule_once(w, fails)) fails = 0;
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
    .state_affinity = true,
    .init = gramps_init,
    .loop = gramps_loop,
};
