/* any_subqueue.c — reserving from whichever subqueue of a queue set is ready (thesis
 * appendix A.2, GR_RESERVE_FLAG_ANYSUBQUEUE; gr_reserve_any): the subqueue choice, and
 * the consumer's wait for any subqueue of the set, which a Thread stage that is not
 * instanced does through the queue rather than through one subqueue.
 *
 * The waiter registers on the queue (wait_lock) before it scans the subqueues again; a
 * producer appends under the subqueue's lock and then looks for a waiter under
 * wait_lock. So either the scan sees the packet or the producer sees the waiter, and a
 * subqueue that meets the need (has the packets, is full, or is closed) wakes it. */
#include "gramps/internal.h"

/* The subqueues a set has now (a dynamic set's grow as keys arrive). */
static uint32_t subqueue_count(gr_queue_rt *q)
{
    return q->d.dynamic_keys ? atomic_load(&q->keys.count) : q->nsubs;
}

gr_subq *gr_any_ready(gr_queue_rt *q, uint32_t need, bool grant_short, bool *all_done)
{
    uint32_t n = subqueue_count(q);
    *all_done = atomic_load(&q->closed);
    for (uint32_t i = 0; i < n; i++) {
        /* acquire: a dynamic set's keys.count counts an index before its subqueue is
         * stored (init_dynamic_sub's release store); until then the slot reads NULL */
        gr_subq *s = __atomic_load_n(&q->subs[i], __ATOMIC_ACQUIRE);
        if (!s) continue;
        gr_spin_lock(&s->lock);
        bool ready = gr_subq_avail(s) > 0 && gr_subq_need_met(s, need, grant_short);
        if (gr_subq_avail(s) > 0) *all_done = false;
        gr_spin_unlock(&s->lock);
        if (ready) return s;
    }
    return NULL;
}

/* The most packets one of the set's subqueues holds now. */
uint32_t gr_set_fullest(gr_queue_rt *q)
{
    uint32_t n = subqueue_count(q), most = 0;
    for (uint32_t i = 0; i < n; i++) {
        gr_subq *s = __atomic_load_n(&q->subs[i], __ATOMIC_ACQUIRE);   /* as in gr_any_ready */
        if (!s) continue;
        gr_spin_lock(&s->lock);
        if (s->charged > most) most = s->charged;
        gr_spin_unlock(&s->lock);
    }
    return most;
}

/* The worker side of a blocked any-subqueue reserve (thread_stage.c's park_in): the
 * instance waits on its queue unless a subqueue became ready meanwhile. */
void gr_park_any(gr_worker *w, gr_inst *inst)
{
    /* Read before the instance is published: once it is, a producer may wake it and it
     * may run on another worker and block again, rewriting these. */
    gr_queue_rt *q = inst->block_queue;
    const uint32_t need = inst->block_need;
    const bool grant_short = inst->grant_short;
    atomic_store(&inst->state, GR_INST_BLOCKED_IN);
    gr_spin_lock(&q->wait_lock);
    q->any_need = need;
    atomic_store(&q->any_waiter, inst);
    gr_spin_unlock(&q->wait_lock);
    bool done;
    bool ready = gr_any_ready(q, need, grant_short, &done) || done;
    bool reclaimed = false;
    if (ready) {
        gr_spin_lock(&q->wait_lock);
        reclaimed = atomic_load(&q->any_waiter) == inst;
        if (reclaimed) atomic_store(&q->any_waiter, NULL);
        gr_spin_unlock(&q->wait_lock);
    }
    if (reclaimed) {
        atomic_store(&inst->state, GR_INST_RUNNABLE);
        gr_push_task(w, inst->stage, gr_inst_task(inst));
    } else {
        gr_pending_sub_later(w, &w->g->comps[inst->stage->comp], 1);   /* woken: counted again */
    }
}

/* The consumer waiting on q, taken off it: always (close, grant), or when s meets its
 * need (a packet appended to s). */
static gr_inst *take_any_waiter(gr_queue_rt *q, gr_subq *s)
{
    gr_spin_lock(&q->wait_lock);
    gr_inst *wt = atomic_load(&q->any_waiter);
    if (wt && s) {
        gr_spin_lock(&s->lock);
        if (!gr_subq_need_met(s, q->any_need, false)) wt = NULL;
        gr_spin_unlock(&s->lock);
    }
    if (wt) atomic_store(&q->any_waiter, NULL);
    gr_spin_unlock(&q->wait_lock);
    return wt;
}

void gr_wake_any(gr_worker *w, gr_queue_rt *q, gr_subq *s)
{
    if (!atomic_load(&q->any_waiter)) return;
    gr_inst *wt = take_any_waiter(q, s);
    if (wt) gr_make_runnable(w, wt);
}

bool gr_grant_any(gr_worker *w, gr_queue_rt *q)
{
    if (!atomic_load(&q->any_waiter)) return false;
    bool done;
    if (!gr_any_ready(q, 1, true, &done)) return false;
    gr_inst *wt = take_any_waiter(q, NULL);
    if (!wt) return false;
    wt->grant_short = true;
    gr_make_runnable(w, wt);
    return true;
}
