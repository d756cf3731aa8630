/* shader_stage.c — Shader stages: running one task (pre-reserve outputs, run the
 * program, commit), the Shader intrinsics, and the per-worker push coalescers.
 *
 * A task is one input packet. Its outputs are reserved before it runs, so it runs to
 * completion without blocking; if a forward output has no room the task is not run
 * (backpressure) and goes back to the deque. In an ordered chain the packets carry the
 * slot reserved at the chain's end; the last Shader fills that slot instead of queueing.
 * A ticket-ordered Shader's task reserves its slot first (tickets.c), then does the same.
 * Pushed elements gather in one partial packet per (worker, queue, subqueue); full ones
 * are queued at once, partial ones when the worker runs out of local work. */
#include "gramps/internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- one task ----------------------------------------------------------------------- */

/* The task's packet is the last Shader's of an ordered chain into q: its space is the
 * slot reserved at the chain's end when the chain's first packet was committed. */
static bool fills_chain_end(const gr_ctx *c, const gr_queue_rt *q)
{
    return c->in->order.sub && q->d.ordered && q->physical;
}

/* Gives back what reserve_output took for output i and the task did not use: a
 * pre-reserved packet, an in-place forward's space, a push binding's first packet. */
static void unreserve_output(gr_worker *w, gr_ctx *c, int i)
{
    gr_queue_rt *q = w->g->queues[c->stage->out[i].queue];
    if (c->push_unit[i]) {
        c->push_unit[i] = false;
        gr_uncharge_later(w, q, 1);
    } else if (c->out[i] == c->in) {
        if (!fills_chain_end(c, q)) gr_uncharge_later(w, q, 1);
    } else if (c->out[i]) {
        if (fills_chain_end(c, q)) gr_pkt_free(w, c->out[i]);
        else gr_release_later(w, c->out[i]);
    }
    c->out[i] = NULL;
}

/* Takes space for one packet in output i's queue; false when it is full. Space in an
 * ordered chain is bounded by its end, and a physical queue set's per subqueue (the
 * subqueue is chosen while the task runs: gr_queue_full held the stage back while any
 * was full); a set a Shader consumes is bounded as a whole (gate.c). */
static bool charge_output(gr_worker *w, gr_ctx *c, int i, gr_queue_rt *q)
{
    bool chained = c->in->order.sub && q->d.ordered;
    if (fills_chain_end(c, q)) return true;
    if (chained || (q->is_set && q->physical)) {
        gr_charge(w, q, 1);
        return true;
    }
    const gr_binding *b = &c->stage->out[i];
    if (w->g->backpressure && b->entry) return gr_try_charge_entry(w, q, 1);
    if (w->g->backpressure && b->back_waits)
        return gr_try_charge(w, q, 1, gr_cycle_jammed(w, c->stage));
    return gr_try_charge(w, q, 1, gr_exempt(w->g, b));
}

/* Reserves output i before the task runs, so that it runs to completion without
 * waiting; false when the queue is full. A forward push binding into a plain queue
 * reserves its first coalesced packet (see push_element). */
static bool reserve_output(gr_worker *w, gr_ctx *c, int i)
{
    gr_stage_rt *s = c->stage;
    gr_queue_rt *q = w->g->queues[s->out[i].queue];
    c->out[i] = NULL;
    c->push_unit[i] = false;
    if (s->out[i].mode == GR_BIND_PUSH) {
        if (gr_exempt(w->g, &s->out[i]) || q->is_set) return true;
        c->push_unit[i] = s->out[i].entry ? gr_try_charge_entry(w, q, 1)
                                          : gr_try_charge(w, q, 1, false);
        return c->push_unit[i];
    }
    if (gr_out_recirculates(s, i)) {      /* stays charged to the input (reduction.c) */
        c->out[i] = c->in;
        return true;
    }
    if (!charge_output(w, c, i, q)) return false;
    if (s->out[i].mode == GR_BIND_INPLACE) {
        c->out[i] = c->in;
        return true;
    }
    gr_pkt *p = gr_pkt_alloc(w, q);
    if (!p) {
        if (!fills_chain_end(c, q)) gr_uncharge_later(w, q, 1);
        return false;
    }
    if (c->in->order.sub && q->d.ordered) p->order = c->in->order;
    p->key = c->in->key;
    p->keyed = c->in->keyed;
    c->out[i] = p;
    return true;
}

static void reset_ctx(gr_ctx *c, gr_stage_rt *s, gr_pkt *in)
{
    c->stage = s;
    c->in = in;
    c->key = in->key;
    c->task++;
    c->set_packets = 0;
    for (int i = 0; i < s->nout; i++) {
        c->out_keyed[i] = false;
        c->discarded[i] = false;
    }
}

static bool output_empty(gr_ctx *c, int i, gr_queue_rt *q)
{
    return c->discarded[i] || (q->d.kind == GR_COLLECTION && gr_count(gr_pkt_data(c->out[i])) == 0);
}

/* A queue set needs the key of a subqueue: given, or carried by the input packet. */
static bool key_known(gr_ctx *c, bool given, const gr_queue_rt *q, const char *how)
{
    if (!q->is_set || given || c->in->keyed) return true;
    gr_fail(c, GR_ERR_INVALID, "stage '%s': %s into queue set '%s' without a key, and the "
            "task's input packet carries none to inherit (use %s_key)", c->stage->name, how,
            q->name, how);
    return false;
}

/* What the program left in output i must be deliverable; if not, the run fails and
 * the output is dropped as if discarded. */
static bool output_valid(gr_ctx *c, int i, const gr_queue_rt *q)
{
    if (c->discarded[i]) return true;
    if (!key_known(c, c->out_keyed[i], q, "gr_output")) return false;
    return q->d.kind != GR_COLLECTION || gr_check_count(c, q, gr_pkt_data(c->out[i]));
}

/* Commits output i after the program ran. Returns true if the input packet was
 * forwarded (in-place) and must not be released. */
static bool commit_output(gr_worker *w, gr_ctx *c, int i)
{
    gr_stage_rt *s = c->stage;
    gr_queue_rt *q = w->g->queues[s->out[i].queue];
    gr_pkt *p = c->out[i];
    if (s->out[i].mode == GR_BIND_PUSH) {
        if (c->push_unit[i]) unreserve_output(w, c, i);
        return false;
    }
    bool inplace = s->out[i].mode == GR_BIND_INPLACE;
    if (!output_valid(c, i, q)) c->discarded[i] = true;
    gr_order_ref ref = p->order;
    if (output_empty(c, i, q)) {
        if (ref.sub && q->d.ordered) gr_deliver_ordered(w, NULL, ref);
        unreserve_output(w, c, i);
        return false;
    }
    if (inplace) {
        /* The packet moves from the input queue to this one, whose space it holds. */
        p->queue = q;
        p->sub = NULL;
    }
    if (c->out_keyed[i]) { p->key = c->out_key[i]; p->keyed = true; }
    if (fills_chain_end(c, q)) { p->queue = q; gr_deliver_ordered(w, p, ref); }
    else gr_enqueue(w, p);
    return inplace;
}

static void finish_task(gr_worker *w, gr_ctx *c)
{
    gr_stage_rt *s = c->stage;
    gr_pkt *in = c->in;
    gr_queue_rt *in_q = in->queue;
    bool forwarded = false, kept = false;
    for (int i = 0; i < s->nout; i++) {
        if (gr_out_recirculates(s, i)) kept = true;
        else if (commit_output(w, c, i)) forwarded = true;
    }
    if (in_q->gates) gr_gate_task_done(w, in_q, c->key);   /* the subqueue's next packet */
    if (kept) gr_reduction_keep(w, c);
    else if (forwarded) gr_uncharge_later(w, in_q, 1);   /* left the input queue, packet lives on */
    else gr_release_later(w, in);
}

/* ---- input coalescing (gr_stage_desc.coalesce_input) ---------------------------------- */

/* Whether task t is a packet of in's queue (and key) whose elements fit beside in's. */
static bool joins(const gr_pkt *in, void *t)
{
    if (gr_task_is_inst(t)) return false;
    gr_pkt *p = t;
    const gr_queue_rt *q = in->queue;
    return !q->gates && p->queue == q && p->keyed == in->keyed && p->key == in->key &&
           gr_count(gr_pkt_data(p)) + gr_count(gr_pkt_data((gr_pkt *)in)) <= q->d.elements;
}

void gr_append_elements(const gr_queue_rt *q, gr_pkt *dst, gr_pkt *src)
{
    char *d = gr_pkt_data(dst);
    uint32_t have = gr_count(d), n = gr_count(gr_pkt_data(src));
    memcpy(d + q->d.header_bytes + (size_t)have * q->d.element_bytes,
           (char *)gr_pkt_data(src) + q->d.header_bytes, (size_t)n * q->d.element_bytes);
    gr_set_count(d, have + n);
}

/* Appends to `in` the elements of the packets of its stage on top of the worker's own
 * deque while they fit, and consumes those packets (their queue space and pending units
 * go as a finished task's do). Only the owner's end of its own deque is touched: the
 * first task that does not join goes back where it was, so every policy's order holds. */
static void coalesce_input(gr_worker *w, gr_stage_rt *s, gr_pkt *in)
{
    const gr_queue_rt *q = in->queue;
    if (s->d.recirculate) gr_reduction_join_held(w, s, in);
    void *t;
    while (gr_count(gr_pkt_data(in)) < q->d.elements && (t = gr_dq_pop(&w->dq[s->deque]))) {
        if (!joins(in, t)) { gr_push_own(w, s, s->deque, t); return; }
        if (w->g->sim) gr_sim_read(w, t);
        gr_append_elements(q, in, t);
        gr_release_later(w, t);
    }
}

/* Sets c up for task `in` and reserves its outputs; false (nothing reserved) when a
 * queue is full. */
static bool reserve_outputs(gr_worker *w, gr_ctx *c, gr_stage_rt *s, gr_pkt *in)
{
    reset_ctx(c, s, in);
    for (int i = 0; i < s->nout; i++)
        if (!reserve_output(w, c, i)) {
            while (i-- > 0) unreserve_output(w, c, i);
            return false;
        }
    return true;
}

/* Runs the program on c's task, whose outputs are reserved, and commits them. */
static void run_reserved(gr_worker *w, gr_stage_rt *s, gr_ctx *c)
{
    if (w->g->sim) gr_sim_read(w, c->in);
    uint64_t t0 = gr_account(w, GR_T_APP);
    const gr_stage_rt *was = gr_running_set(s);
    s->d.main(c);
    gr_running_set(was);
    uint64_t t1 = gr_account(w, GR_T_SCHED);
    w->stage_ticks[s->id] += t1 - t0;
    w->stage_tasks[s->id]++;
    if (w->g->sim) gr_sim_work(s, 1);
    if (w->journal) gr_journal_add(w, s->id, 0, t0, t1);
    /* Committing the outputs is queue time; 1 task in GR_QUEUE_SAMPLE times it (a clock
     * read costs about as much), and the statistics move the estimate out of scheduling. */
    gr_sim_point(w, &w->sched_fiber);     /* outputs appear at their virtual time */
    bool timed = gr_sampled_start(&w->commits);
    uint64_t t2 = gr_worker_now(w);
    finish_task(w, c);
    if (timed) gr_sampled_add(&w->commits, gr_worker_now(w) - t2);
}

/* ---- batches (gr_stage_desc.batch) ------------------------------------------------------- */

static bool batches(const gr_stage_rt *s, const gr_pkt *in)
{
    return s->d.batch && s->d.batch_max > 1 && !s->fifo && !in->queue->gates;
}

/* Task k of the batch keeps the reservations reserve_outputs made in c until it runs. */
static void hold_outputs(gr_worker *w, const gr_ctx *c, uint32_t k)
{
    gr_held_output *h = w->batch_held + (size_t)k * c->stage->nout;
    for (int i = 0; i < c->stage->nout; i++) h[i] = (gr_held_output){c->out[i], c->push_unit[i]};
}

/* Sets c up for task k of the batch, packet `in`, with the reservations it holds. */
static void resume_outputs(gr_worker *w, gr_ctx *c, gr_stage_rt *s, gr_pkt *in, uint32_t k)
{
    const gr_held_output *h = w->batch_held + (size_t)k * s->nout;
    reset_ctx(c, s, in);
    for (int i = 0; i < s->nout; i++) {
        c->out[i] = h[i].out;
        c->push_unit[i] = h[i].push_unit;
    }
}

/* c's task (its outputs reserved) and the packets of its queue on top of the worker's
 * own deque, up to batch_max. Each is taken with its outputs reserved, held until it
 * runs, and only while the queue sets the stage feeds leave it room to start after the
 * earlier tasks' pushes (batch_room.c), so that every task launched can run; the first
 * that is not one of the queue's packets or finds no room goes back where it was, as in
 * coalesce_input. c is left set up for the first task. */
static uint32_t take_batch(gr_worker *w, gr_stage_rt *s, gr_ctx *c, gr_pkt *pk[GR_BATCH_MAX])
{
    uint32_t n = 0;
    gr_batch_room room;
    gr_batch_room_start(w, s, s->d.batch_max < GR_BATCH_MAX ? s->d.batch_max : GR_BATCH_MAX, &room);
    void *t;
    hold_outputs(w, c, n);
    pk[n++] = c->in;
    gr_batch_room_add(w, s, c, &room);
    while (gr_batch_room_takes(w, s, &room, n) && (t = gr_dq_pop(&w->dq[s->deque]))) {
        if (gr_task_is_inst(t) || ((gr_pkt *)t)->queue != pk[0]->queue ||
            !reserve_outputs(w, c, s, t)) {
            gr_push_own(w, s, s->deque, t);
            break;
        }
        hold_outputs(w, c, n);
        pk[n++] = t;
        gr_batch_room_add(w, s, c, &room);
    }
    resume_outputs(w, c, s, pk[0], 0);
    return n;
}

/* Task k (k > 0) runs unless a queue set it feeds filled with its batch's earlier
 * tasks' pushes: then, as on the CPU, it is held back, its reservations given back, and
 * it goes back to its deque (to be launched again). */
static void run_held(gr_worker *w, gr_stage_rt *s, gr_ctx *c, gr_pkt *in, uint32_t k)
{
    resume_outputs(w, c, s, in, k);
    if (gr_batch_set_full(w, s)) {
        for (int i = 0; i < s->nout; i++) unreserve_output(w, c, i);
        gr_push_task(w, s, in);
        return;
    }
    w->tasks++;
    run_reserved(w, s, c);
}

/* The batch hook over every packet taken, then each task in order. */
static void run_batch(gr_worker *w, gr_stage_rt *s, gr_ctx *c)
{
    gr_pkt *pk[GR_BATCH_MAX];
    void *data[GR_BATCH_MAX];
    uint32_t n = take_batch(w, s, c, pk);
    for (uint32_t k = 0; k < n; k++) data[k] = gr_pkt_data(pk[k]);
    uint64_t t0 = gr_account(w, GR_T_APP);
    const gr_stage_rt *was = gr_running_set(s);
    s->d.batch(c, data, n);
    gr_running_set(was);
    w->stage_ticks[s->id] += gr_account(w, GR_T_SCHED) - t0;
    for (uint32_t k = 0; k < n; k++) {
        w->batch_pos = k + 1;
        if (k == 0) run_reserved(w, s, c);
        else run_held(w, s, c, pk[k], k);
        if (c->set_packets > atomic_load_explicit(&s->set_packets_most, memory_order_relaxed))
            atomic_store_explicit(&s->set_packets_most, c->set_packets, memory_order_relaxed);
    }
    w->batch_pos = 0;
}

bool gr_shader_try_run(gr_worker *w, gr_stage_rt *s, gr_pkt *in)
{
    gr_ctx *c = &w->shader_ctx;
    /* A ticket's slot first: the task is then an ordered chain's last. Without room it
     * is parked on the slot's subqueue (tickets.c), not run and not retried. */
    if (in->ticketed && !gr_ticket_reserve(w, in, w->g->queues[in->queue->ticket_end])) {
        w->tasks--;
        return true;
    }
    if (!reserve_outputs(w, c, s, in)) return false;
    if (s->d.coalesce_input) coalesce_input(w, s, in);
    if (batches(s, in) && !w->batch_pos) run_batch(w, s, c);
    else run_reserved(w, s, c);
    return true;
}

/* ---- Shader intrinsics ---------------------------------------------------------------- */

static bool shader_only(gr_ctx *c, const char *what)
{
    if (c->inst) {
        gr_fail(c, GR_ERR_INVALID, "stage '%s' (Thread) called %s, which is for Shader stages",
                c->stage->name, what);
        return false;
    }
    return true;
}

static bool out_slot(gr_ctx *c, int slot, gr_bind_mode want, const char *what)
{
    if (!shader_only(c, what)) return false;
    if (slot < 0 || slot >= c->stage->nout) {
        gr_fail(c, GR_ERR_INVALID, "stage '%s': %s on output %d, but it has %d outputs",
                c->stage->name, what, slot, c->stage->nout);
        return false;
    }
    gr_bind_mode m = c->stage->out[slot].mode;
    bool ok = want == GR_BIND_PUSH ? m == GR_BIND_PUSH : m != GR_BIND_PUSH;
    if (!ok)
        gr_fail(c, GR_ERR_INVALID, "stage '%s': %s on output %d ('%s'), which is %s a push "
                "binding", c->stage->name, what, slot,
                c->g->queues[c->stage->out[slot].queue]->name,
                want == GR_BIND_PUSH ? "not" : "");
    return ok;
}

void *gr_input(gr_ctx *c, size_t *bytes)
{
    if (!c->in) {
        if (bytes) *bytes = 0;
        gr_fail(c, GR_ERR_INVALID, "stage '%s' (Thread) called gr_input; Thread stages use "
                "gr_reserve", c->stage->name);
        return NULL;
    }
    if (bytes) *bytes = c->in->queue->packet_bytes;
    return gr_pkt_data(c->in);
}

/* A bad call gets a scratch packet so the Shader can finish before the run aborts. */
static void *scratch(gr_ctx *c)
{
    return c->w->scratch;
}

void *gr_output(gr_ctx *c, int output)
{
    if (!out_slot(c, output, GR_BIND_OUTPUT, "gr_output")) return scratch(c);
    return gr_pkt_data(c->out[output]);
}

void gr_output_key(gr_ctx *c, int output, uint64_t key)
{
    if (!out_slot(c, output, GR_BIND_OUTPUT, "gr_output_key")) return;
    c->out_keyed[output] = true;
    c->out_key[output] = key;
}

void gr_discard(gr_ctx *c, int output)
{
    if (!out_slot(c, output, GR_BIND_OUTPUT, "gr_discard")) return;
    c->discarded[output] = true;
}

/* ---- push coalescing ---------------------------------------------------------------- */

static gr_partial *partial_for(gr_worker *w, gr_queue_rt *q, uint32_t sub)
{
    if (sub >= w->partials_len[q->id]) {
        uint32_t n = w->partials_len[q->id] ? w->partials_len[q->id] : 4;
        while (n <= sub) n *= 2;
        gr_partial *a = realloc(w->partials[q->id], n * sizeof *a);
        if (!a) return NULL;
        /* Active entries are linked by pointer: relink them after the move. */
        memset(a + w->partials_len[q->id], 0, (n - w->partials_len[q->id]) * sizeof *a);
        w->partials[q->id] = a;
        w->partials_len[q->id] = n;
        w->active_partials = NULL;
        for (int qi = 0; qi < w->g->nqueues; qi++)
            for (uint32_t k = 0; k < w->partials_len[qi]; k++)
                if (w->partials[qi][k].active) {
                    w->partials[qi][k].next_active = w->active_partials;
                    w->active_partials = &w->partials[qi][k];
                }
    }
    return &w->partials[q->id][sub];
}

/* Queues a coalesced packet; its producer may now finish. */
static void send_partial(gr_worker *w, gr_partial *pa)
{
    gr_pkt *p = pa->pkt;
    gr_comp *producer = pa->producer;
    pa->pkt = NULL;
    gr_enqueue(w, p);
    gr_pending_sub_later(w, producer, 1);
}

/* A packet started in a subqueue of a physical queue set: the task's most there. */
static void count_set_packet(gr_ctx *c, gr_partial *pa)
{
    if (pa->task != c->task) {
        pa->task = c->task;
        pa->started = 0;
    }
    if (++pa->started > c->set_packets) c->set_packets = pa->started;
}

/* The worker's partial packet for (q, sub), started if there is none; NULL after a
 * failure (the run fails). */
static gr_partial *open_partial(gr_ctx *c, int slot, gr_queue_rt *q, uint32_t sub, uint64_t key,
                                bool keyed)
{
    gr_worker *w = c->w;
    gr_partial *pa = partial_for(w, q, sub);
    if (!pa) { gr_fail(c, GR_ERR_NOMEM, "out of memory in push coalescer"); return NULL; }
    if (!pa->pkt) {
        if (c->push_unit[slot]) c->push_unit[slot] = false;   /* reserved before the task */
        else gr_charge(w, q, 1);
        if (q->is_set && q->physical) count_set_packet(c, pa);
        pa->producer = &w->g->comps[c->stage->comp];
        gr_pending_add(w, pa->producer, 1);
        pa->pkt = gr_pkt_alloc(w, q);
        pa->pkt->key = keyed ? key : c->key;
        pa->pkt->keyed = q->is_set;       /* elements of other keys share a plain queue's */
        memset(gr_pkt_data(pa->pkt), 0, q->d.header_bytes);
        if (!pa->active) { pa->active = true; pa->next_active = w->active_partials; w->active_partials = pa; }
    }
    return pa;
}

/* Appends n elements to the worker's partial packets of one subqueue, queueing each
 * packet as it fills. */
static void push_elements(gr_ctx *c, int slot, uint64_t key, bool keyed, const void *elems,
                          uint32_t n)
{
    if (!out_slot(c, slot, GR_BIND_PUSH, "gr_push")) return;
    gr_worker *w = c->w;
    gr_queue_rt *q = w->g->queues[c->stage->out[slot].queue];
    uint32_t sub = 0;
    if (!key_known(c, keyed, q, "gr_push")) return;
    if (q->is_set && q->physical) {
        gr_subq *s = gr_subq_get(w, q, keyed ? key : c->key, true);
        if (!s) { gr_fail(c, GR_ERR_INVALID, "stage '%s': %s", c->stage->name, w->g->error); return; }
        sub = s->index;
    } else if (q->is_set) {                   /* a Shader's set: partials per subqueue */
        sub = gr_gate_index(w, q, keyed ? key : c->key);
        if (sub == UINT32_MAX) return;
    }
    const char *src = elems;
    while (n) {
        gr_partial *pa = open_partial(c, slot, q, sub, key, keyed);
        if (!pa) return;
        char *data = gr_pkt_data(pa->pkt);
        uint32_t have = gr_count(data), take = q->d.elements - have < n ? q->d.elements - have : n;
        memcpy(data + q->d.header_bytes + (size_t)have * q->d.element_bytes, src,
               (size_t)take * q->d.element_bytes);
        gr_set_count(data, have + take);
        if (have + take == q->d.elements) send_partial(w, pa);
        src += (size_t)take * q->d.element_bytes;
        n -= take;
    }
}

void gr_push(gr_ctx *c, int output, const void *element)
{
    push_elements(c, output, 0, false, element, 1);
}

void gr_push_n(gr_ctx *c, int output, const void *elements, uint32_t n)
{
    push_elements(c, output, 0, false, elements, n);
}

void gr_push_key(gr_ctx *c, int output, uint64_t key, const void *element)
{
    push_elements(c, output, key, true, element, 1);
}

void gr_push_key_n(gr_ctx *c, int output, uint64_t key, const void *elements, uint32_t n)
{
    push_elements(c, output, key, true, elements, n);
}

void gr_push_flush(gr_ctx *c, int output)
{
    if (!out_slot(c, output, GR_BIND_PUSH, "gr_push_flush")) return;
    gr_worker *w = c->w;
    const gr_queue_rt *q = w->g->queues[c->stage->out[output].queue];
    gr_partial *partials = w->partials[q->id];
    for (uint32_t sub = 0; sub < w->partials_len[q->id]; sub++)
        if (partials[sub].pkt) send_partial(w, &partials[sub]);
}

void gr_flush_partials(gr_worker *w)
{
    gr_partial *pa = w->active_partials;
    w->active_partials = NULL;
    while (pa) {
        gr_partial *next = pa->next_active;
        pa->active = false;
        pa->next_active = NULL;
        if (pa->pkt) {
            w->flushes++;
            send_partial(w, pa);
        }
        pa = next;
    }
}
