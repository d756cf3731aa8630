/* reduction.c — recirculating in-place reductions (thesis §3.5.3; gr_stage_desc.
 * recirculate): a coalescing Shader combines its input packet into at most half a
 * packet of elements, and its result goes back to the stage's input instead of
 * downstream, until one packet remains; that one goes to the in-place output queue when
 * the stage's component finishes.
 *
 * Each stage holds at most one result that waits for another (gr_stage_rt.held). A
 * finished task's result becomes the held one when there is none; otherwise the two
 * join in one packet, which is queued again as a task of the stage. A task about to run
 * also takes the held result into its input when it fits. So a reduction of n packets
 * ends with one held result whatever the worker count and policy, and every policy
 * runs the recirculated tasks as it runs any other.
 *
 * Accounting: the held packet stays charged to the input queue's space (the footprint
 * counts it) but not to the component's pending work, so the component can reach zero
 * pending and finish while it waits; every store into `held` happens before the pending
 * decrement of the task that made it, so the finishing thread sees the last one. */
#include "gramps/internal.h"

/* The held packet leaves its queue's space and returns to the pool (not pending). */
static void drop_held(gr_worker *w, gr_pkt *h)
{
    gr_queue_rt *q = h->queue;
    gr_pkt_free(w, h);
    if (gr_capacity_release(w, q, 1)) gr_wake_out_waiters(w, q, NULL);
}

/* Before a task runs: the held result joins its input packet if both fit in one. */
void gr_reduction_join_held(gr_worker *w, gr_stage_rt *s, gr_pkt *in)
{
    const gr_queue_rt *q = in->queue;
    gr_spin_lock(&s->held_lock);
    gr_pkt *h = s->held;
    if (h && gr_count(gr_pkt_data(h)) + gr_count(gr_pkt_data(in)) <= q->d.elements) s->held = NULL;
    else h = NULL;
    gr_spin_unlock(&s->held_lock);
    if (!h) return;
    gr_append_elements(q, in, h);
    drop_held(w, h);
}

/* After a task ran: its input packet, now its result, is held or joins the held one
 * and recirculates. The task's charge (space and pending unit) passes to the
 * recirculated task; a held result gives up the pending unit. */
void gr_reduction_keep(gr_worker *w, gr_ctx *c)
{
    gr_stage_rt *s = c->stage;
    gr_pkt *in = c->in;
    gr_queue_rt *q = in->queue;
    uint32_t n = gr_count(gr_pkt_data(in));
    if (n == 0) { gr_release_later(w, in); return; }
    if ((uint64_t)n * 2 > q->d.elements) {
        gr_fail(c, GR_ERR_INVALID, "stage '%s' recirculates its reduction, but a task left "
                "%u elements in its packet of queue '%s', more than half of the %u it holds: "
                "each task must combine its packet into at most %u elements", s->name, n,
                q->name, q->d.elements, q->d.elements / 2);
        gr_release_later(w, in);
        return;
    }
    gr_spin_lock(&s->held_lock);
    gr_pkt *h = s->held;
    s->held = h ? NULL : in;
    gr_spin_unlock(&s->held_lock);
    if (!h) {
        gr_pending_sub_later(w, q->cons_comp, 1);
        return;
    }
    gr_append_elements(q, in, h);
    drop_held(w, h);
    w->queue_packets[q->id]++;
    gr_push_task(w, s, in);
}

/* The stage's in-place output queue (validate.c: a recirculating stage has one). */
static gr_queue_rt *result_queue(gr_graph *g, const gr_stage_rt *s)
{
    for (int i = 0; i < s->nout; i++)
        if (s->out[i].mode == GR_BIND_INPLACE) return g->queues[s->out[i].queue];
    return NULL;
}

/* The component finishes (nothing queued or running, its inputs closed): each of its
 * recirculating stages' held result, the reduction's, goes downstream, before the
 * output queues lose this producer. */
void gr_reduction_finish(gr_worker *w, gr_comp *c)
{
    gr_graph *g = w->g;
    for (int i = 0; i < c->nstages; i++) {
        gr_stage_rt *s = g->stages[c->stages[i]];
        if (!s->d.recirculate) continue;
        gr_spin_lock(&s->held_lock);      /* ordered after the last task's store already; */
        gr_pkt *h = s->held;              /* the lock says so to the sanitizers too */
        s->held = NULL;
        gr_spin_unlock(&s->held_lock);
        if (!h) continue;
        gr_queue_rt *in_q = h->queue, *out = result_queue(g, s);
        if (gr_capacity_release(w, in_q, 1)) gr_wake_out_waiters(w, in_q, NULL);
        h->queue = out;
        h->sub = NULL;
        gr_charge(w, out, 1);
        gr_enqueue(w, h);
    }
}
