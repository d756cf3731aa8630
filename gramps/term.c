/* term.c — lock-free termination detection per strongly connected component.
 *
 * Each component's `pending` counter (see internal.h for what it counts) is updated
 * with atomic read-modify-writes only. The thread whose decrement takes it to zero owns
 * the component's next step: the first time, it closes the component's input queues
 * (all outside producers are done, and nothing inside can produce without input), which
 * wakes Thread instances blocked on input with short reservations; when pending reaches
 * zero again with the inputs closed, the component is finished: its output queues lose
 * a live producer and its consumer components lose one pending unit. Counter updates
 * form one modification order per component, so exactly one thread sees each zero.
 * Before closing, consumers waiting for more packets than are queued are first handed
 * what is there (in a cycle, their output may be the rest of the work). */
#include "gramps/internal.h"

static void comp_finish(gr_worker *w, gr_comp *c)
{
    gr_graph *g = w->g;
    gr_reduction_finish(w, c);            /* before the outputs lose their producer */
    atomic_store(&c->finished, true);
    for (int i = 0; i < c->nout_queues; i++) {
        gr_queue_rt *q = g->queues[c->out_queues[i]];
        if (atomic_fetch_sub(&q->open_producers, 1) == 1) gr_close_queue(w, q);
    }
    for (int i = 0; i < c->nconsumers; i++) gr_pending_sub(w, &g->comps[c->consumers[i]], 1);
    if (atomic_fetch_sub(&g->comps_left, 1) == 1) gr_wake_sleepers(g);
}

/* Called by the thread that took c->pending to zero. */
static void comp_quiescent(gr_worker *w, gr_comp *c)
{
    gr_graph *g = w->g;
    bool any_open = false;
    for (int i = 0; i < c->nin_queues; i++)
        if (!atomic_load(&g->queues[c->in_queues[i]]->closed)) any_open = true;
    if (!any_open) {
        comp_finish(w, c);
        return;
    }
    /* Hold a unit while waking so the wake-ups below cannot race us to zero. */
    atomic_fetch_add(&c->pending, 1);
    int granted = 0;
    for (int i = 0; i < c->nin_queues; i++) granted += gr_grant_waiting(w, g->queues[c->in_queues[i]]);
    if (!granted)
        for (int i = 0; i < c->nin_queues; i++) gr_close_queue(w, g->queues[c->in_queues[i]]);
    gr_pending_sub(w, c, 1);
}

/* Per-worker surplus: each worker keeps, per component, a count of units it has added to
 * `pending` beyond the true count (pending = true count + every worker's surplus, all
 * surpluses >= 0, so pending never reaches zero early). A finished Shader task, a
 * coalesced push packet sent on and a Thread instance that blocks on input each add one
 * unit of surplus instead of decrementing; a new task spends one instead of
 * incrementing, and when there is none the worker adds a batch at once. In a steady
 * pipeline a worker's finished tasks pay for its new ones: no contended atomic per
 * packet on the counter. The surplus goes back (gr_pending_flush) after GR_PENDING_BATCH
 * operations, and always before the worker looks for work elsewhere, runs a Thread stage
 * or sleeps, so a finished component is seen within a bounded delay. A component's bit
 * in pending_dirty is set whenever its surplus grows (a nonzero surplus always has its
 * bit), so that a flush visits only those: a graph with a copy of a chain per worker has
 * dozens of components, of which a worker touched a few since its last flush. */
#define GR_PENDING_BATCH 64

static void count_op(gr_worker *w)
{
    if (++w->pending_ops >= GR_PENDING_BATCH) gr_pending_flush(w);
}

static void mark_dirty(gr_worker *w, int comp)
{
    w->pending_dirty[comp / 64] |= 1ull << (comp % 64);
}

void gr_pending_add(gr_worker *w, gr_comp *c, int64_t n)
{
    int64_t *surplus = &w->pending_surplus[c->id];
    if (*surplus >= n) {
        *surplus -= n;
    } else {
        atomic_fetch_add(&c->pending, n + GR_PENDING_BATCH);
        *surplus += GR_PENDING_BATCH;
        mark_dirty(w, c->id);
    }
    count_op(w);
}

void gr_pending_sub(gr_worker *w, gr_comp *c, int64_t n)
{
    if (atomic_fetch_sub(&c->pending, n) == n && !atomic_load(&w->g->abort))
        comp_quiescent(w, c);
}

void gr_pending_sub_later(gr_worker *w, gr_comp *c, int64_t n)
{
    w->pending_surplus[c->id] += n;
    mark_dirty(w, c->id);
    count_op(w);
}

/* Returns the surplus of the components whose bits are set, in component order. A
 * return may finish a component and so add surplus here again (comp_quiescent): a bit
 * set again in the word being visited or a later one goes back in this flush, one in an
 * earlier word at the next flush, which the update's count_op makes due (as the scan
 * over every component did for those before it). */
void gr_pending_flush(gr_worker *w)
{
    if (!w->pending_ops) return;
    w->pending_ops = 0;
    const int nwords = (w->g->ncomps + 63) / 64;
    for (int k = 0; k < nwords; k++) {
        for (uint64_t bits; (bits = w->pending_dirty[k]) != 0;) {
            w->pending_dirty[k] = 0;
            for (; bits; bits &= bits - 1) {
                const int i = k * 64 + __builtin_ctzll(bits);
                int64_t n = w->pending_surplus[i];
                if (!n) continue;
                w->pending_surplus[i] = 0;
                gr_pending_sub(w, &w->g->comps[i], n);
            }
        }
    }
}

/* At launch: each component waits for its outside producer components. Components
 * with nothing to wait for and no instance started are finished at once. */
void gr_term_start(gr_graph *g)
{
    for (int i = 0; i < g->ncomps; i++)
        for (int k = 0; k < g->comps[i].nconsumers; k++)
            atomic_fetch_add(&g->comps[g->comps[i].consumers[k]].pending, 1);
    atomic_store(&g->comps_left, g->ncomps);
}

void gr_term_kick(gr_graph *g)
{
    for (int i = 0; i < g->ncomps; i++)
        if (atomic_load(&g->comps[i].pending) == 0) {
            atomic_fetch_add(&g->comps[i].pending, 1);
            gr_pending_sub(&g->workers[0], &g->comps[i], 1);
        }
}
