/* batch_room.c — how many tasks a Shader batch (gr_stage_desc.batch) may take into the
 * physical queue sets its stage feeds. On the CPU a Shader is held back before each task
 * while any subqueue of such a set is full (gr_stage_blocked): the subqueue is chosen
 * while the task runs, so no reservation bounds it. A batch launches all its tasks
 * before the first runs, so it takes a task only if that task can still start under the
 * same rule after the batch's earlier tasks have pushed; whatever a forecast says, each
 * task is asked again when its turn comes (gr_batch_set_full), so the forecast decides
 * how many tasks are launched again, never how full a subqueue gets.
 *
 * With gr_stage_desc.set_pushes the forecast follows the subqueues the tasks push into:
 * a subqueue's count grows by the packets the worker's push coalescing fills there (a
 * partly filled packet is charged to its subqueue only when it is queued, full or when
 * the worker runs out of local work, which does not happen within a batch). Without it,
 * each earlier task is taken to start, in the fullest subqueue, as many packets as a
 * batched task of the stage has started in one (set_packets_most): an estimate from the
 * tasks seen, far below the room where tasks spread over subqueues. */
#include "gramps/internal.h"

/* The physical queue sets s feeds through forward bindings: the outputs the rule and the
 * forecast look at. */
static bool feeds_set(gr_worker *w, const gr_stage_rt *s, int i)
{
    const gr_queue_rt *q = w->g->queues[s->out[i].queue];
    return q->is_set && q->physical && !s->out[i].backward && !gr_out_recirculates(s, i);
}

bool gr_batch_set_full(gr_worker *w, const gr_stage_rt *s)
{
    if (!w->g->backpressure) return false;
    for (int i = 0; i < s->nout; i++)
        if (feeds_set(w, s, i) && gr_queue_full(w, w->g->queues[s->out[i].queue])) return true;
    return false;
}

/* The estimate without set_pushes: at most max tasks, so that the fullest subqueue,
 * given set_packets_most (at least 1) packets by each earlier task, stays below its
 * capacity until the last one starts. */
static uint32_t fullest_room(gr_worker *w, gr_stage_rt *s, uint32_t max)
{
    uint32_t most = atomic_load_explicit(&s->set_packets_most, memory_order_relaxed);
    if (most == 0) most = 1;
    for (int i = 0; i < s->nout; i++) {
        if (!feeds_set(w, s, i)) continue;
        gr_queue_rt *q = w->g->queues[s->out[i].queue];
        uint32_t held = gr_set_fullest(q), cap = q->d.capacity;
        uint32_t tasks = held < cap ? 1 + (cap - 1 - held) / most : 1;
        if (tasks < max) max = tasks;
    }
    return max;
}

/* Subqueue `key` of q as the forecast starts it: the packets it holds and the elements
 * of the worker's partly filled packet there. False when the key names no subqueue the
 * set can have (the task will fail the run when it pushes). */
static bool start_sub(gr_worker *w, gr_queue_rt *q, uint64_t key, gr_room_sub *r)
{
    uint32_t index = q->d.dynamic_keys ? gr_keymap_find(&q->keys, key)
                                       : key < q->nsubs ? (uint32_t)key : UINT32_MAX - 1;
    if (index == UINT32_MAX - 1) return false;
    *r = (gr_room_sub){q, key, 0, 0};
    if (index == UINT32_MAX) return true;            /* a dynamic key not seen yet: empty */
    gr_subq *s = __atomic_load_n(&q->subs[index], __ATOMIC_ACQUIRE);   /* as gr_set_fullest */
    if (s) {
        gr_spin_lock(&s->lock);
        r->charged = s->charged;
        gr_spin_unlock(&s->lock);
    }
    const gr_partial *pa = index < w->partials_len[q->id] ? &w->partials[q->id][index] : NULL;
    if (pa && pa->pkt) r->fill = gr_count(gr_pkt_data(pa->pkt));
    return true;
}

/* The forecast's entry for subqueue `key` of q, started if new; NULL when it has no room
 * for another or the key names no subqueue. */
static gr_room_sub *sub_of(gr_worker *w, gr_batch_room *r, gr_queue_rt *q, uint64_t key)
{
    for (uint32_t i = 0; i < r->nsubs; i++)
        if (r->subs[i].q == q && r->subs[i].key == key) return &r->subs[i];
    if (r->nsubs == GR_ROOM_SUBS || !start_sub(w, q, key, &r->subs[r->nsubs])) return NULL;
    return &r->subs[r->nsubs++];
}

/* Output i's pushes of c's task added to the forecast; false when they are not known. */
static bool add_output(gr_worker *w, gr_stage_rt *s, gr_ctx *c, int i, gr_batch_room *r)
{
    gr_set_push pushes[GR_SET_PUSHES_MAX];
    if (s->out[i].mode != GR_BIND_PUSH) return false;     /* a packet keyed while it runs */
    uint32_t n = s->d.set_pushes(c, i, pushes);
    if (n > GR_SET_PUSHES_MAX) return false;
    gr_queue_rt *q = w->g->queues[s->out[i].queue];
    for (uint32_t k = 0; k < n; k++) {
        gr_room_sub *sub = sub_of(w, r, q, pushes[k].key);
        if (!sub) return false;
        uint64_t fill = (uint64_t)sub->fill + pushes[k].elements;
        sub->charged += (uint32_t)(fill / q->d.elements);     /* packets filled and queued */
        sub->fill = (uint32_t)(fill % q->d.elements);
    }
    return true;
}

void gr_batch_room_start(gr_worker *w, gr_stage_rt *s, uint32_t max, gr_batch_room *r)
{
    r->nsubs = 0;
    r->last = false;
    r->forecast = w->g->backpressure && s->d.set_pushes;
    r->max = w->g->backpressure && !s->d.set_pushes ? fullest_room(w, s, max) : max;
}

void gr_batch_room_add(gr_worker *w, gr_stage_rt *s, gr_ctx *c, gr_batch_room *r)
{
    if (!r->forecast) return;
    for (int i = 0; i < s->nout && !r->last; i++)
        if (feeds_set(w, s, i) && !add_output(w, s, c, i, r)) r->last = true;
}

bool gr_batch_room_takes(gr_worker *w, const gr_stage_rt *s, const gr_batch_room *r, uint32_t n)
{
    if (n >= r->max || r->last || gr_batch_set_full(w, s)) return false;
    for (uint32_t i = 0; i < r->nsubs; i++)
        if (r->subs[i].charged >= r->subs[i].q->d.capacity) return false;
    return true;
}
