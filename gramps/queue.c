/* queue.c — packets and queues: allocation, charging, subqueue rings, delivery.
 *
 * A packet is charged to its queue from the moment it is reserved (pre-reserved Shader
 * output, Thread output reserve, ordered-chain slot, partial push packet) until its
 * consumer releases it; charging counts it in the queue's depth (capacity.c) and in the
 * consumer component's pending work (term.c). Queues feeding Shaders hold no packets: a
 * charged packet becomes a task. Queues feeding Thread stages are rings per subqueue. */
#include "gramps/internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- packets ------------------------------------------------------------------------ */

gr_pkt *gr_pkt_alloc(gr_worker *w, gr_queue_rt *q)
{
    gr_pkt *p = gr_buf_alloc(q->pool, w->id);
    if (!p) return NULL;
    memset(p, 0, sizeof *p);
    p->queue = q;
    p->pool = q->pool;
    return p;
}

void gr_pkt_free(gr_worker *w, gr_pkt *p) { gr_buf_free(p->pool, w->id, p); }

/* n packets leave q: frees their space (waking blocked producers) and lowers the
 * consumer component's pending count, now or (later) in the worker's next batch. */
static void uncharge(gr_worker *w, gr_queue_rt *q, int64_t n, bool later)
{
    if (gr_capacity_release(w, q, n)) gr_wake_out_waiters(w, q, NULL);
    if (q->physical) return;
    gr_comp *c = gr_comp_of_queue(w->g, q);
    if (later) gr_pending_sub_later(w, c, n);
    else gr_pending_sub(w, c, n);
}

void gr_uncharge(gr_worker *w, gr_queue_rt *q, int64_t n) { uncharge(w, q, n, false); }

/* The consumer is done with p: it leaves the queue and returns to the pool. */
void gr_release(gr_worker *w, gr_pkt *p)
{
    gr_queue_rt *q = p->queue;
    gr_pkt_free(w, p);
    uncharge(w, q, 1, false);
}

/* As gr_uncharge / gr_release, for a finished Shader task on its worker's scheduler:
 * the component's pending count drops later (gr_pending_sub_later). */
void gr_uncharge_later(gr_worker *w, gr_queue_rt *q, int64_t n) { uncharge(w, q, n, true); }

void gr_release_later(gr_worker *w, gr_pkt *p)
{
    gr_queue_rt *q = p->queue;
    gr_pkt_free(w, p);
    uncharge(w, q, 1, true);
}

/* ---- subqueues ---------------------------------------------------------------------- */

gr_subq *gr_subq_new(gr_queue_rt *q, uint32_t index, uint64_t key)
{
    gr_subq *s = calloc(1, sizeof *s);
    uint64_t size = 8;
    while (size < q->d.capacity) size *= 2;
    if (!s) return NULL;
    s->ring = malloc(size * sizeof *s->ring);
    s->state = malloc(size);
    if (!s->ring || !s->state) { gr_subq_free(s); return NULL; }
    gr_spin_init(&s->lock);
    s->queue = q;
    s->index = index;
    s->key = key;
    s->ring_size = size;
    return s;
}

/* s as gr_subq_new made it, keeping its ring (grown, for a backward edge, to what the
 * run before needed): empty, positions from 0, no waiters, no consumer. */
void gr_subq_reset(gr_subq *s)
{
    gr_subq kept = *s;
    memset(s, 0, sizeof *s);
    gr_spin_init(&s->lock);
    s->queue = kept.queue;
    s->index = kept.index;
    s->key = kept.key;
    s->ring = kept.ring;
    s->state = kept.state;
    s->ring_size = kept.ring_size;
}

void gr_subq_free(gr_subq *s)
{
    if (!s) return;
    free(s->ring);
    free(s->state);
    free(s);
}

/* Backward edges are not bounded, so their rings grow (under the subqueue lock). */
static bool subq_grow(gr_subq *s)
{
    uint64_t nsize = s->ring_size * 2;
    gr_pkt **ring = malloc(nsize * sizeof *ring);
    uint8_t *state = malloc(nsize);
    if (!ring || !state) { free(ring); free(state); return false; }
    for (uint64_t i = s->head; i < s->tail; i++) {
        ring[i & (nsize - 1)] = s->ring[i & (s->ring_size - 1)];
        state[i & (nsize - 1)] = s->state[i & (s->ring_size - 1)];
    }
    free(s->ring);
    free(s->state);
    s->ring = ring;
    s->state = state;
    s->ring_size = nsize;
    return true;
}

/* Appends a slot at the tail (lock held): its position, or GR_NO_SLOT when the ring had
 * to grow and there was no memory (nothing appended). */
static uint64_t subq_append(gr_subq *s, gr_pkt *p, uint8_t state)
{
    if (s->tail - s->head == s->ring_size && !subq_grow(s)) return GR_NO_SLOT;
    uint64_t pos = s->tail++;
    s->ring[pos & (s->ring_size - 1)] = p;
    s->state[pos & (s->ring_size - 1)] = state;
    return pos;
}

typedef struct key_init_ctx { gr_worker *w; gr_queue_rt *q; } key_init_ctx;

static void init_dynamic_sub(void *ctx, uint64_t key, uint32_t index)
{
    key_init_ctx *k = ctx;
    /* release: gr_any_ready scans the slots up to keys.count without the keymap */
    __atomic_store_n(&k->q->subs[index], gr_subq_new(k->q, index, key), __ATOMIC_RELEASE);
}

/* The instanced consumer of a subqueue starts with its subqueue's first packet. */
static void ensure_consumer(gr_worker *w, gr_queue_rt *q, gr_subq *s)
{
    gr_stage_rt *c = w->g->stages[q->consumer];
    if (!c->d.instanced || atomic_load_explicit(&s->consumer, memory_order_acquire)) return;
    gr_spin_lock(&s->lock);
    gr_inst *inst = NULL;
    if (!atomic_load_explicit(&s->consumer, memory_order_relaxed)) {
        inst = gr_inst_create(w, c, s);
        atomic_store_explicit(&s->consumer, inst, memory_order_release);
    }
    gr_spin_unlock(&s->lock);
    if (inst) gr_make_runnable(w, inst);
}

/* Finds (creating for dynamic sets) the subqueue for key. by_key: dynamic sets map
 * the key; static sets use it as the index. NULL with an error for a bad index/key. */
gr_subq *gr_subq_get(gr_worker *w, gr_queue_rt *q, uint64_t key, bool by_key)
{
    gr_subq *s = NULL;
    if (!q->is_set) {
        s = q->subs[0];
    } else if (!q->d.dynamic_keys || !by_key) {
        if (key < q->nsubs) s = q->subs[key];
        else gr_set_error(w->g, GR_ERR_INVALID, "queue set '%s': subqueue %llu does not "
                          "exist (%u subqueues)", q->name, (unsigned long long)key, q->nsubs);
    } else {
        key_init_ctx k = {w, q};
        uint32_t i = gr_keymap_get(&q->keys, key, init_dynamic_sub, &k);
        if (i < GR_KEYMAP_BADKEY) s = q->subs[i];
        else gr_set_error(w->g, GR_ERR_INVALID, "queue set '%s': %s (key %llu)", q->name,
                          i == GR_KEYMAP_FULL ? "more keys than max_keys" : "reserved key",
                          (unsigned long long)key);
    }
    if (s) ensure_consumer(w, q, s);
    return s;
}

/* Changes what s holds by n packets (lock held): its peak, and the queue's count of
 * full subqueues, which holds Shader producers of a queue set back (gr_queue_full).
 * Where a subqueue's count bounds the queue (Thread outputs, reorder slots), callers
 * change the capacity pool inside the same critical section, so the pool never counts
 * more than the subqueues hold and reserved_peak_packets stays exact. */
void gr_subq_charge(gr_subq *s, int64_t n)
{
    uint32_t cap = s->queue->d.capacity;
    bool was_full = s->charged >= cap;
    s->charged = (uint32_t)((int64_t)s->charged + n);
    if (s->charged > s->peak) s->peak = s->charged;
    bool full = s->charged >= cap;
    if (full != was_full) atomic_fetch_add(&s->queue->full_subqueues, full ? 1 : -1);
}

/* ---- delivery ------------------------------------------------------------------------ */

static void advance_ready(gr_subq *s);
static uint32_t drop_head_skips(gr_subq *s);

/* Wakes the consumer blocked on s if its need is now met (lock held); returns it. */
static gr_inst *take_in_waiter(gr_subq *s);

/* Packets that nothing will read (lock held): all that are there once the consumer
 * returned, else none. The queue's flag is read seq_cst after the append: a consumer
 * sets it before it counts the subqueues (thread_stage.c), so either it counts this
 * packet or this thread sees the flag. */
static uint64_t lost_packets(const gr_subq *s)
{
    if (!s->consumer_done && !atomic_load(&s->queue->consumer_done)) return 0;
    return gr_subq_avail(s);
}

/* w takes s's lock, whose line every producer and the consumer write in turn: a
 * simulated run charges its transfer and any wait for it (gr_sim_take). */
void gr_subq_lock(gr_worker *w, gr_subq *s)
{
    if (w->g->sim) gr_sim_take(w, &s->sim_lock);
    gr_spin_lock(&s->lock);
}

static void push_physical(gr_worker *w, gr_subq *s, gr_pkt *p, bool precharged)
{
    gr_subq_lock(w, s);
    if (!precharged) gr_subq_charge(s, 1);
    if (subq_append(s, p, GR_SLOT_READY) == GR_NO_SLOT) {
        gr_spin_unlock(&s->lock);
        gr_queue_out_of_memory(w->g, s->queue);
        gr_pkt_free(w, p);
        return;
    }
    advance_ready(s);
    gr_inst *waiter = take_in_waiter(s);
    uint64_t lost = lost_packets(s);
    gr_spin_unlock(&s->lock);
    if (waiter) gr_make_runnable(w, waiter);
    if (lost) gr_report_left(w->g, s, lost, true);
    if (s->queue->is_set) gr_wake_any(w, s->queue, s);
}

/* The consumer of s returned (lock taken here). Its reservations are all committed
 * (thread_stage.c checks first), so the READY packets left are lost. */
uint64_t gr_subq_consumer_done(gr_subq *s)
{
    gr_spin_lock(&s->lock);
    s->consumer_done = true;
    uint64_t left = gr_subq_avail(s);
    gr_spin_unlock(&s->lock);
    return left;
}

/* Fails the run: n packets sit in s and its consumer will never read them. `late`:
 * the last of them arrived after it returned. */
void gr_report_left(gr_graph *g, const gr_subq *s, uint64_t n, bool late)
{
    const gr_queue_rt *q = s->queue;
    char sub[48] = "";
    if (q->is_set) snprintf(sub, sizeof sub, " (subqueue %llu)", (unsigned long long)s->key);
    gr_set_error(g, GR_ERR_INVALID, "stage '%s' finished with %llu packets left in its input "
                 "queue '%s'%s%s", g->stages[q->consumer]->name, (unsigned long long)n,
                 q->name, sub, late ? " (committed after it returned)" : "");
    atomic_store(&g->abort, true);
    gr_wake_sleepers(g);
}

/* Makes a charged packet available to its consumer. */
void gr_enqueue(gr_worker *w, gr_pkt *p)
{
    gr_queue_rt *q = p->queue;
    if (atomic_load_explicit(&q->closed, memory_order_relaxed)) {
        gr_set_error(w->g, GR_ERR_INVALID, "a packet was committed to queue '%s' after it "
                     "was closed (in a cycle, a Thread stage must commit its output before "
                     "it waits for input)", q->name);
        atomic_store(&w->g->abort, true);
        gr_wake_sleepers(w->g);
        return;
    }
    w->queue_packets[q->id]++;        /* per worker: a shared counter costs a miss */
    p->writer = (int32_t)w->id;
    if (!q->physical) {
        if (q->ticket_end >= 0 && !gr_ticket_issue(w, q, p)) {
            gr_release(w, p);
            atomic_store(&w->g->abort, true);
            return;
        }
        if (q->gates) gr_gate_enqueue(w, q, p);
        else gr_push_task(w, w->g->stages[q->consumer], p);
        return;
    }
    bool precharged = p->sub != NULL;
    if (!p->sub) p->sub = gr_subq_get(w, q, p->key, true);
    if (!p->sub) { gr_release(w, p); atomic_store(&w->g->abort, true); return; }
    push_physical(w, p->sub, p, precharged);
}

/* Removes n from the count of q's slots without a packet (subqueue lock held). */
static void fewer_empty_slots(gr_queue_rt *q, int64_t n)
{
    if (n) atomic_fetch_sub_explicit(&q->empty_slots, n, memory_order_relaxed);
}

/* The last Shader of an ordered chain fills its reserved slot (or marks it empty). A
 * filled slot counts as a packet through the queue, as gr_enqueue counts the others. */
void gr_deliver_ordered(gr_worker *w, gr_pkt *p, gr_order_ref ref)
{
    gr_subq *s = ref.sub;
    if (p) {
        w->queue_packets[s->queue->id]++;
        p->writer = (int32_t)w->id;
    }
    gr_subq_lock(w, s);
    if (p) fewer_empty_slots(s->queue, 1);
    s->ring[ref.slot & (s->ring_size - 1)] = p;
    s->state[ref.slot & (s->ring_size - 1)] = p ? GR_SLOT_READY : GR_SLOT_SKIP;
    advance_ready(s);
    uint32_t dropped = drop_head_skips(s);
    bool pool_waiters = dropped && gr_capacity_release(w, s->queue, dropped);
    gr_inst *waiter = take_in_waiter(s);
    uint64_t lost = lost_packets(s);      /* a skip may make earlier packets ready */
    gr_spin_unlock(&s->lock);
    if (waiter) gr_make_runnable(w, waiter);
    if (lost) gr_report_left(w->g, s, lost, true);
    if (p && s->queue->is_set) gr_wake_any(w, s->queue, s);
    if (dropped) gr_wake_out_waiters(w, s->queue, s);
    if (pool_waiters) gr_wake_out_waiters(w, s->queue, NULL);
}

/* Advances the ready frontier over delivered slots (lock held). */
static void advance_ready(gr_subq *s)
{
    uint64_t mask = s->ring_size - 1;
    while (s->ready_end < s->tail && s->state[s->ready_end & mask] != GR_SLOT_PENDING) {
        if (s->state[s->ready_end & mask] == GR_SLOT_SKIP) s->nskip++;
        s->ready_end++;
    }
}

/* READY packets available to the consumer beyond what it has reserved (lock held). */
uint64_t gr_subq_avail(const gr_subq *s)
{
    return s->ready_end - s->head - s->nskip - s->taken;
}

/* Whether a consumer asking for `need` packets can go on (lock held): enough packets,
 * or the producers are done, or (for a finite request larger than the capacity) the
 * subqueue is full: its forward producers wait, so waiting for more could deadlock
 * (backward producers may still add some, but nothing says they will). */
bool gr_subq_need_met(const gr_subq *s, uint32_t need, bool grant_short)
{
    if (s->closed) return true;
    if (grant_short && gr_subq_avail(s) > 0) return true;
    if (need == GR_ALL) return false;
    uint64_t have = gr_subq_avail(s);
    return have >= need || have >= s->queue->d.capacity;
}

static gr_inst *take_in_waiter(gr_subq *s)
{
    gr_inst *wt = s->in_waiter;
    if (!wt || !gr_subq_need_met(s, s->in_need, false)) return NULL;
    s->in_waiter = NULL;
    return wt;
}

/* Reserves a slot for an ordered chain's final packet (lock held by caller); GR_NO_SLOT
 * out of memory (nothing reserved). */
uint64_t gr_subq_reserve_slot(gr_subq *s)
{
    uint64_t pos = subq_append(s, NULL, GR_SLOT_PENDING);
    if (pos == GR_NO_SLOT) return pos;
    gr_subq_charge(s, 1);
    atomic_fetch_add_explicit(&s->queue->empty_slots, 1, memory_order_relaxed);
    return pos;
}

void gr_queue_out_of_memory(gr_graph *g, const gr_queue_rt *q)
{
    gr_set_error(g, GR_ERR_NOMEM, "queue '%s': out of memory growing its ring", q->name);
    atomic_store(&g->abort, true);
    gr_wake_sleepers(g);
}

/* Drops SKIP slots at the head while the consumer holds no reservation (lock held):
 * a chain that produced nothing must not hold capacity or pending work. Returns how
 * many slots were dropped; the caller uncharges that many after unlocking. */
static uint32_t drop_head_skips(gr_subq *s)
{
    uint32_t n = 0;
    uint64_t mask = s->ring_size - 1;
    while (s->taken == 0 && s->head < s->ready_end && s->state[s->head & mask] == GR_SLOT_SKIP) {
        s->head++;
        s->nskip--;
        gr_subq_charge(s, -1);
        n++;
    }
    fewer_empty_slots(s->queue, n);
    return n;
}

/* Copies pointers of the first n READY packets from the head into out (lock held);
 * SKIP slots between them are passed over. */
void gr_subq_peek(const gr_subq *s, uint32_t n, gr_pkt **out)
{
    uint64_t mask = s->ring_size - 1;
    uint32_t k = 0;
    for (uint64_t i = s->head; k < n && i < s->ready_end; i++)
        if (s->state[i & mask] == GR_SLOT_READY) out[k++] = s->ring[i & mask];
}

/* Removes the first n READY packets from the head into out, with the SKIP slots
 * before and right after them (lock held). Returns the number of slots removed: the
 * caller uncharges the queue by that many once it has released the packets. */
uint32_t gr_subq_pop(gr_subq *s, uint32_t n, gr_pkt **out)
{
    uint64_t mask = s->ring_size - 1;
    uint32_t k = 0, slots = 0;
    while (s->head < s->ready_end) {
        uint64_t i = s->head & mask;
        if (s->state[i] == GR_SLOT_READY) {
            if (k == n) break;
            out[k++] = s->ring[i];
        } else {
            s->nskip--;
        }
        s->head++;
        slots++;
    }
    gr_subq_charge(s, -(int64_t)slots);
    fewer_empty_slots(s->queue, slots - k);          /* the SKIP slots */
    return slots;
}

/* Takes the list of producers blocked on a full queue or subqueue (and, for a
 * subqueue, the ticket-ordered tasks parked on it) and makes them runnable again;
 * they re-check capacity themselves. Blocked producers still count
 * as pending work, so waking them changes no counter. A producer that keeps state
 * goes back to its own worker's inbox (gr_send_home), as one woken for input does:
 * the consumer that frees the space (a Tile-Shade freeing a tile's bins for Bin) runs
 * elsewhere, and the state (Bin's staged tiles) would follow the instance there. */
void gr_wake_out_waiters(gr_worker *w, gr_queue_rt *q, gr_subq *s)
{
    gr_inst *list;
    gr_pkt *tickets = NULL;
    if (s) {
        gr_spin_lock(&s->lock);
        list = s->out_waiters;
        s->out_waiters = NULL;
        tickets = s->ticket_waiters;
        s->ticket_waiters = NULL;
        gr_spin_unlock(&s->lock);
    } else {
        gr_spin_lock(&q->wait_lock);
        list = q->out_waiters;
        q->out_waiters = NULL;
        atomic_store(&q->nwaiters, 0);
        gr_spin_unlock(&q->wait_lock);
    }
    while (list) {
        gr_inst *next = list->next_waiter;
        list->next_waiter = NULL;
        atomic_store(&list->state, GR_INST_RUNNABLE);
        if (!gr_send_home(w, list)) gr_push_task(w, list->stage, gr_inst_task(list));
        list = next;
    }
    while (tickets) {                     /* tickets.c: they try their slots again */
        gr_pkt *next = tickets->next;
        tickets->next = NULL;
        gr_push_task(w, w->g->stages[tickets->queue->consumer], tickets);
        tickets = next;
    }
}

/* No producer will add to q again: blocked consumers get their short reservations,
 * woken heaviest subqueue first (close_wake.c). A set whose instanced consumer wants
 * every subqueue (every_subqueue) also gets an instance on each subqueue that got no
 * packet. The consumer's component still holds a pending unit here (the producers'
 * until they finish, or the hold of the quiescence check that closes its inputs), so
 * these instances run before it can finish. */
void gr_close_queue(gr_worker *w, gr_queue_rt *q)
{
    if (atomic_exchange(&q->closed, true)) return;
    if (!q->physical) return;
    uint32_t n = q->d.dynamic_keys ? atomic_load(&q->keys.count) : q->nsubs;
    bool every = w->g->stages[q->consumer]->d.every_subqueue;
    gr_close_wake woken;
    gr_close_wake_init(&woken, n);
    for (uint32_t i = 0; i < n; i++) {
        gr_subq *s = q->subs[i];
        if (!s) continue;
        gr_spin_lock(&s->lock);
        s->closed = true;
        gr_inst *waiter = take_in_waiter(s);
        const uint64_t received = s->tail;
        gr_spin_unlock(&s->lock);
        if (waiter) gr_close_wake_add(&woken, w, waiter, received);
        if (every) ensure_consumer(w, q, s);
    }
    gr_close_wake_run(&woken, w);
    if (q->is_set) gr_wake_any(w, q, NULL);
}

/* A quiescent component whose Thread consumers wait for more packets than are there:
 * hand them what is there (a short reservation) instead of closing the queue under
 * them, since in a cycle their output may be the rest of the work. Returns how many
 * consumers were woken. */
int gr_grant_waiting(gr_worker *w, gr_queue_rt *q)
{
    if (!q->physical) return 0;
    int woken = 0;
    uint32_t n = q->d.dynamic_keys ? atomic_load(&q->keys.count) : q->nsubs;
    for (uint32_t i = 0; i < n; i++) {
        gr_subq *s = q->subs[i];
        if (!s) continue;
        gr_spin_lock(&s->lock);
        gr_inst *waiter = NULL;
        if (s->in_waiter && gr_subq_avail(s) > 0) {
            waiter = s->in_waiter;
            waiter->grant_short = true;
            s->in_waiter = NULL;
        }
        gr_spin_unlock(&s->lock);
        if (waiter) { gr_make_runnable(w, waiter); woken++; }
    }
    if (q->is_set && gr_grant_any(w, q)) woken++;
    return woken;
}
