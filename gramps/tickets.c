/* tickets.c — DANBI's ticket-ordered output (Miller et al., DANBI §II), for a Shader stage
 * flagged ticket_order: the consumer of its ordered output sees the results in the order
 * the input packets were committed, however its tasks run.
 *
 * A ticket is a slot position in the output subqueue of the packet's key: the input
 * packet takes the next one when its producer (one Thread stage) commits it. The task
 * reserves its slot, with any earlier tickets' slots not yet reserved, when a worker takes
 * it to run; from then on it is an ordered chain's last packet (shader_stage.c fills the
 * slot, or skips it). Reserving at run time, never when a result is ready, is what keeps
 * this free of deadlock: a queue full of later tickets' finished results would leave no
 * room for the earliest one. Here every reserved slot belongs to a ticket that has been
 * taken to run or comes before one that has, and Shader tasks run to completion, so the
 * slots at the head always fill and the earliest waiting ticket finds room once the
 * consumer drains them. */
#include "gramps/internal.h"

/* p, committed to a ticket-ordered Shader's input q, takes its ticket (called in commit
 * order). False when the output subqueue cannot be made (the run fails). */
bool gr_ticket_issue(gr_worker *w, gr_queue_rt *q, gr_pkt *p)
{
    gr_queue_rt *out = w->g->queues[q->ticket_end];
    gr_subq *s = gr_subq_get(w, out, p->key, true);
    if (!s) return false;
    gr_spin_lock(&s->lock);
    p->order = (gr_order_ref){s, s->next_ticket++};
    gr_spin_unlock(&s->lock);
    p->ticketed = true;
    return true;
}

/* Reserves the slots up to ticket p's, charged to the output queue q. False (nothing
 * reserved) when they do not fit its capacity: the task is then parked on the subqueue
 * until the consumer frees slots (gr_wake_out_waiters pushes it back as a task), where
 * retrying at once would keep a worker spinning on it. Parking and the fit test share
 * the subqueue's lock, and every drop of its count wakes it, so no wake-up is lost. */
bool gr_ticket_reserve(gr_worker *w, gr_pkt *p, gr_queue_rt *q)
{
    gr_subq *s = p->order.sub;
    gr_spin_lock(&s->lock);
    uint64_t missing = p->order.slot >= s->tail ? p->order.slot + 1 - s->tail : 0;
    bool fits = q->backward || !w->g->backpressure || s->charged + missing <= q->d.capacity;
    if (!fits) {
        p->next = s->ticket_waiters;
        s->ticket_waiters = p;
        gr_spin_unlock(&s->lock);
        return false;
    }
    uint64_t made = 0;
    while (made < missing && gr_subq_reserve_slot(s) != GR_NO_SLOT) made++;
    if (made) gr_charge(w, q, (int64_t)made);        /* with the slots, so the pool matches */
    gr_spin_unlock(&s->lock);
    if (made < missing) {
        gr_queue_out_of_memory(w->g, q);
        return false;
    }
    p->ticketed = false;
    return true;
}
