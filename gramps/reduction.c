/* reduction.c — recirculating in-place reductions (thesis §3.5.3; gr_stage_desc.
 * recirculate): a coalescing Shader combines its input packet into at most half a
 * packet of elements, and its result goes back to the stage's input instead of
 * downstream, until one packet remains; that one goes to the in-place output queue when
 * the stage's component finishes.
 *
 * Each stage holds at most one result that waits for another (gr_stage_rt.held), or
 * with reduce_per_key one per key. A finished task's result becomes the held one (of
 * its key) when there is none; otherwise the two join in one packet, which is queued
 * again as a task of the stage. A task about to run also takes the held result into its
 * input when it fits. So a reduction of n packets ends with one held result (per key)
 * whatever the worker count and policy, and every policy runs the recirculated tasks
 * as it runs any other. Coalescing joins only packets of one key already (shader_stage.c),
 * so per key, no packet ever meets another key's.
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

/* Where the held result that `in` may join is linked (held_lock held): the stage's one,
 * or per key the list entry of in's key (the end of the list when it has none). The
 * list is searched in full: reductions per key hold a few keys (bins, words), not
 * thousands. */
static gr_pkt **held_slot(gr_stage_rt *s, const gr_pkt *in)
{
    gr_pkt **at = &s->held;
    if (!s->d.reduce_per_key) return at;
    while (*at && (*at)->key != in->key) at = &(*at)->next;
    return at;
}

/* Unlinks *at, which is held (held_lock held). */
static gr_pkt *take_held(gr_pkt **at)
{
    gr_pkt *h = *at;
    *at = h->next;
    h->next = NULL;
    return h;
}

/* Before a task runs: the held result joins its input packet if both fit in one. */
void gr_reduction_join_held(gr_worker *w, gr_stage_rt *s, gr_pkt *in)
{
    const gr_queue_rt *q = in->queue;
    gr_spin_lock(&s->held_lock);
    gr_pkt **at = held_slot(s, in), *h = NULL;
    if (*at && gr_count(gr_pkt_data(*at)) + gr_count(gr_pkt_data(in)) <= q->d.elements)
        h = take_held(at);
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
    gr_pkt **at = held_slot(s, in), *h = *at ? take_held(at) : NULL;
    if (!h) {
        in->next = NULL;
        *at = in;
    }
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

/* The held results, sorted by key, so that they leave in the same order in every run. */
static gr_pkt *sorted_by_key(gr_pkt *list)
{
    gr_pkt *sorted = NULL;
    while (list) {
        gr_pkt *p = list, **at = &sorted;
        list = list->next;
        while (*at && (*at)->key < p->key) at = &(*at)->next;
        p->next = *at;
        *at = p;
    }
    return sorted;
}

/* A held result leaves the input queue's space for the output queue's. */
static void forward_result(gr_worker *w, gr_pkt *h, gr_queue_rt *out)
{
    gr_queue_rt *in_q = h->queue;
    if (gr_capacity_release(w, in_q, 1)) gr_wake_out_waiters(w, in_q, NULL);
    h->next = NULL;
    h->queue = out;
    h->sub = NULL;
    gr_charge(w, out, 1);
    gr_enqueue(w, h);
}

/* The component finishes (nothing queued or running, its inputs closed): each of its
 * recirculating stages' held results, the reduction's (one per key with reduce_per_key,
 * in key order), go downstream, before the output queues lose this producer. */
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
        gr_queue_rt *out = result_queue(g, s);
        for (h = sorted_by_key(h); h;) {
            gr_pkt *next = h->next;
            forward_result(w, h, out);
            h = next;
        }
    }
}
