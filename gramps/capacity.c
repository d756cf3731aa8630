/* capacity.c — how many packets each queue holds, and backpressure's hard bound, kept
 * without a counter that every worker writes on every packet.
 *
 * A queue's capacity is split between a shared pool (`q->free`) and per-worker credits
 * (`w->credit[q]`): space a worker took from the pool or freed itself and has not
 * given back. Charging a packet spends a credit, taking more from the pool (up to
 * `credit_keep` extra) when there is none; releasing one adds a credit, and a worker
 * holding more than twice `credit_keep` gives the excess back. So
 *
 *     held = capacity - free - sum of the workers' credits
 *
 * and, since nothing takes space from the pool that is not there, held never exceeds
 * the capacity. Three charges may overdraw the pool, each with its own bound (README,
 * "Capacity"): a backward binding's (the cycle's way back may not wait), a push
 * coalescer's packets beyond the one reserved before its task ran (a running Shader
 * cannot wait), and a reservation larger than the capacity on an empty queue. Queues
 * that can be overdrawn keep no credits, so a credit is always real space. In the
 * steady state a worker touches only its own credit, on its own cache line.
 *
 * The single shared counter this replaces cost 60% of the per-packet time of empty
 * Shader tasks at 2 workers (every charge and release moved its line between cores):
 * Sanchez et al. 2011 §III-A track queue utilization "in a scalable fashion" for this
 * reason. What it costs: `held` is a sum over workers, so it is read by the footprint
 * sampler (stats.c) rather than updated on every packet; per-queue peaks come from the
 * samples, with `reserved_peak` (most space ever taken from the pool, exact) as the
 * upper bound.
 *
 * Space moving between the pool and a credit is, for a moment, in neither (the pool is
 * written first on the way out, the credit first on the way back): a sum read then
 * would count it as held, packets that do not exist (test_stats' short run once sampled
 * more than the 24 packets it ever held). Each such move is bracketed
 * (move_begin/move_end), and gr_queue_held reads again when one overlapped its reads.
 * The brackets sit on the pool's line, which the move writes anyway.
 *
 * Space stranded in another worker's credits is never lost: a charge that finds the
 * pool short takes every worker's credits back first, a producer that parks on a full
 * queue recounts after registering (pairing with the release side's waiter check),
 * and a worker returns all its credits before it sleeps.
 *
 * Under a policy without backpressure (scheduler.h) every binding is exempt
 * (gr_exempt): charges take from the pool unconditionally, so they never fail nor wait,
 * the pool goes as negative as the queue is deep, and held, the samples and
 * `reserved_peak` count exactly as before. No queue keeps credits then. */
#include "gramps/internal.h"

#define CREDIT_KEEP_MAX 16

/* The whole queue's capacity. Queue sets bound each subqueue under its lock
 * (thread_stage.c); for them the pool only counts (the most keys a dynamic set may
 * create, for its size). */
static int64_t space_of(const gr_queue_rt *q)
{
    uint32_t subqueues = q->d.dynamic_keys ? q->d.max_keys : q->d.subqueues;
    return (int64_t)q->d.capacity * (subqueues ? subqueues : 1);
}

/* Credits a worker keeps per queue (it may hold up to twice that before giving the
 * excess back): small against the capacity, so all workers' cached credits stay under
 * a quarter of it. None (the shared pool alone, exact) for queues under 8 packets per
 * worker; for queues that may be overdrawn: those with a backward binding and those
 * fed by pushes (overdrawing drives the pool negative, and a credit is spendable space
 * only while the pool is not negative; checking the pool on every charge would bring
 * back the shared line the credits exist to avoid); and for queue sets and ordered
 * queues, whose packets take a subqueue lock anyway and whose pool must stay exact for
 * reserved_peak to bound them (cached credits would count as reserved space); and all
 * queues when capacities are not enforced (schedulers without backpressure). */
void gr_capacity_init(gr_graph *g)
{
    for (int i = 0; i < g->nqueues; i++) {
        gr_queue_rt *q = g->queues[i];
        q->space = space_of(q);
        int64_t keep = q->space / (8 * (int64_t)g->nworkers);
        if (keep > CREDIT_KEEP_MAX) keep = CREDIT_KEEP_MAX;
        if (q->backward || q->push_fed || q->is_set || q->d.ordered || !g->backpressure ||
            q->internal_producer) keep = 0;
        atomic_store(&q->credit_keep, keep);
        atomic_store(&q->free, q->space);
        atomic_store(&q->reserved_peak, 0);
    }
}

static int64_t keep_of(const gr_queue_rt *q)
{
    return atomic_load_explicit(&q->credit_keep, memory_order_relaxed);
}

static _Atomic(int64_t) *credit_of(gr_worker *w, const gr_queue_rt *q)
{
    return &w->credit[q->id];
}

/* Spends n of w's credits if it has them. */
static bool spend_credit(gr_worker *w, gr_queue_rt *q, int64_t n)
{
    _Atomic(int64_t) *c = credit_of(w, q);
    int64_t have = atomic_load_explicit(c, memory_order_relaxed);
    while (have >= n)    /* CAS: a charge elsewhere may be taking this worker's credits back */
        if (atomic_compare_exchange_weak(c, &have, have - n)) return true;
    return false;
}

static void note_reserved(gr_queue_rt *q, int64_t free_now)
{
    int64_t reserved = q->space - free_now;
    int64_t cur = atomic_load_explicit(&q->reserved_peak, memory_order_relaxed);
    while (reserved > cur && !atomic_compare_exchange_weak_explicit(&q->reserved_peak, &cur,
                                 reserved, memory_order_relaxed, memory_order_relaxed)) {}
}

/* Takes n from the pool whether or not it is there (the pool may go negative). */
static void take_unconditionally(gr_queue_rt *q, int64_t n)
{
    note_reserved(q, atomic_fetch_sub(&q->free, n) - n);
}

/* Gives n back to the pool. */
static void give_back(gr_queue_rt *q, int64_t n)
{
    if (n) atomic_fetch_add(&q->free, n);
}

/* seq_cst, both: a reader that saw no move begun and the same count of moves ended
 * before and after its reads read no space in transit. */
static void move_begin(gr_queue_rt *q) { atomic_fetch_add(&q->moving, 1); }

static void move_end(gr_queue_rt *q)
{
    atomic_fetch_add(&q->moves, 1);
    atomic_fetch_sub(&q->moving, 1);
}

/* Moves the whole credit *c back to the pool. */
static void return_credit(gr_queue_rt *q, _Atomic(int64_t) *c)
{
    move_begin(q);
    give_back(q, atomic_exchange(c, 0));
    move_end(q);
}

/* Moves every worker's credits for q back to the pool. */
static void reclaim_all(gr_graph *g, gr_queue_rt *q)
{
    for (unsigned i = 0; i < g->nworkers; i++) {
        _Atomic(int64_t) *c = credit_of(&g->workers[i], q);
        if (atomic_load_explicit(c, memory_order_relaxed)) return_credit(q, c);
    }
}

/* w writes the pool's line (`free`), which every worker writes in turn: a simulated
 * run charges its transfer and any wait for it (gr_sim_take). */
static void pool_line(gr_worker *w, gr_queue_rt *q)
{
    if (w->g->sim) gr_sim_take(w, &q->sim_free);
}

/* Takes n (and up to credit_keep more, as w's credits) from the pool if it holds n
 * beyond `margin` (space a cycle entry leaves for what the cycle holds). */
static bool take_from_pool(gr_worker *w, gr_queue_rt *q, int64_t n, int64_t margin)
{
    pool_line(w, q);
    int64_t f = atomic_load(&q->free);
    while (f - margin >= n) {
        int64_t keep = keep_of(q);
        int64_t take = f - n < keep ? f : n + keep;
        if (take > n) move_begin(q);
        bool taken = atomic_compare_exchange_weak(&q->free, &f, f - take);
        if (taken) {
            note_reserved(q, f - take);
            if (take > n) atomic_fetch_add(credit_of(w, q), take - n);
        }
        if (take > n) move_end(q);
        if (taken) return true;
    }
    return false;
}

/* A reservation larger than the capacity, granted when the queue is empty (the whole
 * capacity is in the pool) so that it cannot wait forever. It overdraws the pool, so
 * from then on the queue keeps no credits (see gr_capacity_init): nothing is held and
 * every credit is in the pool when this succeeds, so none can be spent while the pool
 * is negative. The granted packets reach their consumer only through a subqueue lock
 * taken after the store, so their releases see no credits either. */
static bool take_oversized(gr_queue_rt *q, int64_t n)
{
    int64_t f = q->space;
    if (n <= q->space || !atomic_compare_exchange_strong(&q->free, &f, f - n)) return false;
    atomic_store(&q->credit_keep, 0);
    note_reserved(q, f - n);
    return true;
}

/* Packets held by the queues of q's cycle other than q (validate.c's link_cycles).
 * They keep no credits (gr_capacity_init), so each holds space - free. */
static int64_t cycle_held(const gr_graph *g, const gr_queue_rt *q)
{
    int64_t held = 0;
    for (int i = 0; i < q->ncycle_queues; i++) {
        const gr_queue_rt *c = g->queues[q->cycle_queues[i]];
        held += c->space - atomic_load_explicit(&c->free, memory_order_relaxed);
    }
    return held;
}

void gr_charge(gr_worker *w, gr_queue_rt *q, int64_t n)
{
    if (!spend_credit(w, q, n)) {
        pool_line(w, q);
        take_unconditionally(q, n);
    }
    if (!q->physical) gr_pending_add(w, q->cons_comp, n);
}

/* Charges n packets unless that would overfill the queue (for a backward binding it is
 * never full; an empty queue always takes a reservation, so one larger than the
 * capacity cannot wait forever). */
bool gr_try_charge(gr_worker *w, gr_queue_rt *q, int64_t n, bool backward)
{
    if (backward) {
        gr_charge(w, q, n);
        return true;
    }
    if (!spend_credit(w, q, n) && !take_from_pool(w, q, n, 0)) {
        reclaim_all(w->g, q);             /* space may sit in other workers' credits */
        if (!take_from_pool(w, q, n, 0) && !take_oversized(q, n)) return false;
    }
    if (!q->physical) gr_pending_add(w, q->cons_comp, n);
    return true;
}

/* A cycle entry's charge (a Shader's forward output into q from outside q's cycle): n
 * packets if q and its cycle queues together then hold no more than q's capacity.
 * What is in the cycle comes back into q at most once per packet that entered when
 * each stage of the cycle sends on no more packets than it takes (the ray tracer's
 * Shade: a packet of hits makes at most one of reflection rays), so the backward
 * binding, which never waits, cannot take q past its capacity. Queues with a backward
 * producer keep no credits: the pool is all the space there is. An empty cycle takes
 * any reservation (as gr_try_charge), so an oversized one cannot wait forever. */
bool gr_try_charge_entry(gr_worker *w, gr_queue_rt *q, int64_t n)
{
    int64_t margin = cycle_held(w->g, q);
    if (!take_from_pool(w, q, n, margin) && (margin > 0 || !take_oversized(q, n))) return false;
    if (!q->physical) gr_pending_add(w, q->cons_comp, n);
    return true;
}

/* Whether s, a Shader with a backward output that waits (gr_binding.back_waits), may
 * overdraw it: when its input queue is full as well. A backward producer waiting on a
 * full queue whose consumer waits on the cycle's next full queue, and so on around the
 * cycle, waits on itself: every stage of a jammed simple cycle holds a full output, so
 * the backward producer's input is full too, and then its output goes through (the
 * exemption every backward binding had before). Otherwise some queue of the cycle has
 * room and its producer, or the one before, can run. */
bool gr_cycle_jammed(gr_worker *w, const gr_stage_rt *s)
{
    return gr_queue_full(w, w->g->queues[s->in[0].queue]);
}

/* Backpressure test for a cycle entry (gr_try_charge_entry's condition). */
bool gr_cycle_full(const gr_graph *g, const gr_queue_rt *q)
{
    return atomic_load_explicit(&q->free, memory_order_relaxed) - cycle_held(g, q) <= 0;
}

/* n packets of q were released on w: their space becomes w's credit, the excess over
 * twice credit_keep goes back to the pool, and all of it when a producer waits. The
 * credit update and the waiter check are seq_cst: a producer registering as a waiter
 * then recounting (thread_stage.c) cannot miss this release, nor this release miss it. */
bool gr_capacity_release(gr_worker *w, gr_queue_rt *q, int64_t n)
{
    int64_t keep = keep_of(q);
    if (keep == 0) {
        pool_line(w, q);
        give_back(q, n);
    } else {
        _Atomic(int64_t) *c = credit_of(w, q);
        int64_t have = atomic_fetch_add(c, n) + n;
        if (have > 2 * keep) {
            move_begin(q);
            while (have > 2 * keep && !atomic_compare_exchange_weak(c, &have, keep)) {}
            if (have > 2 * keep) {
                pool_line(w, q);
                give_back(q, have - keep);
            }
            move_end(q);
        }
    }
    if (atomic_load(&q->nwaiters) == 0) return false;
    if (keep) return_credit(q, credit_of(w, q));
    return true;
}

/* Returns all of w's credits to their pools (before it sleeps: nobody else would know
 * to take them back). */
void gr_credits_return(gr_worker *w)
{
    for (int i = 0; i < w->g->nqueues; i++) {
        gr_queue_rt *q = w->g->queues[i];
        _Atomic(int64_t) *c = credit_of(w, q);
        if (atomic_load_explicit(c, memory_order_relaxed)) return_credit(q, c);
    }
}

/* Credits held by all workers (a snapshot; each read is atomic, the sum is not). */
static int64_t all_credits(const gr_graph *g, const gr_queue_rt *q)
{
    int64_t sum = 0;
    for (unsigned i = 0; i < g->nworkers; i++)
        sum += atomic_load(credit_of(&g->workers[i], q));
    return sum;
}

/* Reads again (up to 16 times) while a move between the pool and a credit overlaps the
 * reads, which would count the moving space as held. */
int64_t gr_queue_held(const gr_graph *g, const gr_queue_rt *q)
{
    int64_t held = 0;
    for (int tries = 0; tries < 16; tries++) {
        uint32_t moves = atomic_load(&q->moves);
        bool still = atomic_load(&q->moving) == 0;
        held = q->space - atomic_load(&q->free) - all_credits(g, q);
        if (still && atomic_load(&q->moving) == 0 && atomic_load(&q->moves) == moves) break;
    }
    return held > 0 ? held : 0;
}

/* Backpressure test for Shader producers with a forward binding to q (backward ones
 * are never held back). Ordered outputs never count: inside an ordered chain the space
 * was reserved at the chain's end when its first packet was committed. A queue set is
 * full while any of its subqueues is: a Shader picks the subqueue while it runs, so it
 * may start only while every subqueue has room (a set a Shader consumes is bounded as a
 * whole, as a plain queue, gate.c). Other workers' credits are read only when the
 * pool and w's credits are empty and the queue keeps credits at all: a queue that keeps
 * none (credit_keep 0, from gr_capacity_init or take_oversized, which sets it only while
 * every credit is in the pool) has none anywhere, and the scan would read one line per
 * worker for nothing (the raster graph's primitives queues at 16 workers: every
 * scheduling pass that met a full one did). */
bool gr_queue_full(gr_worker *w, const gr_queue_rt *q)
{
    if (q->d.ordered) return false;
    if (q->is_set && q->physical)
        return atomic_load_explicit(&q->full_subqueues, memory_order_relaxed) > 0;
    if (atomic_load_explicit(&q->free, memory_order_relaxed) > 0) return false;
    if (keep_of(q) == 0) return true;
    if (atomic_load_explicit(credit_of(w, q), memory_order_relaxed) > 0) return false;
    return all_credits(w->g, q) <= 0;
}
