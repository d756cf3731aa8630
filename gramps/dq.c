/* dq.c — the Chase-Lev work-stealing deque behind every per-stage, per-worker task
 * queue of the scheduler (gramps/sched.c), with the C11 memory orders proven correct by
 * Lê, Pop, Cohen and Zappa Nardelli, "Correct and efficient work-stealing for weak
 * memory models" (PPoPP 2013), Fig. 1.
 *
 * The owner pushes and pops at `bottom`; thieves claim the item at `top` with one CAS.
 * Ring slots are relaxed atomics: a thief may read a slot the owner is rewriting, and
 * the CAS on `top` then tells it to discard the value, so that race is benign and must
 * still be defined behaviour. Where the paper has "release fence; relaxed store" this
 * file has a release store: the same ordering, in the form ThreadSanitizer models. */
#include "gramps/dq.h"

#include <stdbool.h>
#include <stdlib.h>

#define MAX_LOG2_CAPACITY 40          /* keeps 1 << log2 far from int64 overflow */

struct gr_dq_ring {
    int64_t size;                     /* power of two */
    gr_dq_ring *next_retired;         /* chain of rings replaced by growth */
    _Atomic(void *) slot[];
};

static gr_dq_ring *ring_new(int64_t size)
{
    gr_dq_ring *r = malloc(sizeof *r + (size_t)size * sizeof r->slot[0]);
    if (!r) return NULL;
    r->size = size;
    r->next_retired = NULL;
    return r;
}

static inline void *ring_get(const gr_dq_ring *r, int64_t i)
{
    /* relaxed: ordering comes from the bottom/top accesses around each call */
    return atomic_load_explicit(&((gr_dq_ring *)r)->slot[i & (r->size - 1)],
                                memory_order_relaxed);
}

static inline void ring_put(gr_dq_ring *r, int64_t i, void *x)
{
    atomic_store_explicit(&r->slot[i & (r->size - 1)], x, memory_order_relaxed);
}

void gr_dq_init(gr_dq *dq, unsigned log2_capacity)
{
    atomic_init(&dq->top, 0);
    atomic_init(&dq->bottom, 0);
    dq->top_seen = 0;
    atomic_init(&dq->ring, NULL);
    dq->retired = NULL;
    dq->log2_capacity = log2_capacity < MAX_LOG2_CAPACITY ? log2_capacity : MAX_LOG2_CAPACITY;
}

/* Owner only, at its first push: no ring before, so nobody can hold an old one. */
static gr_dq_ring *first_ring(gr_dq *dq)
{
    gr_dq_ring *r = ring_new((int64_t)1 << dq->log2_capacity);
    /* release: pairs with the thief's acquire load of `ring`, which it makes only after
     * seeing this push's bottom, so it sees the ring's size */
    if (r) atomic_store_explicit(&dq->ring, r, memory_order_release);
    return r;
}

void gr_dq_reset(gr_dq *dq)
{
    for (gr_dq_ring *r = dq->retired, *next; r; r = next) {
        next = r->next_retired;
        free(r);
    }
    dq->retired = NULL;
    atomic_store_explicit(&dq->top, 0, memory_order_relaxed);
    atomic_store_explicit(&dq->bottom, 0, memory_order_relaxed);
    dq->top_seen = 0;
}

void gr_dq_destroy(gr_dq *dq)
{
    free(atomic_load_explicit(&dq->ring, memory_order_relaxed));
    for (gr_dq_ring *r = dq->retired, *next; r; r = next) {
        next = r->next_retired;
        free(r);
    }
    atomic_store_explicit(&dq->ring, NULL, memory_order_relaxed);
    dq->retired = NULL;
}

/* Owner only: replaces the full ring by one twice its size holding the same items at
 * the same indices. The old ring is retired, not freed: a thief that loaded it before
 * the switch may still read a slot from it (its CAS on top validates that read). */
static gr_dq_ring *grow(gr_dq *dq, gr_dq_ring *old, int64_t top, int64_t bottom)
{
    gr_dq_ring *r = ring_new(old->size * 2);
    if (!r) return NULL;
    for (int64_t i = top; i < bottom; i++) ring_put(r, i, ring_get(old, i));
    old->next_retired = dq->retired;
    dq->retired = old;
    /* release: pairs with the thief's acquire load of `ring` (the paper's consume), so a
     * thief that sees the new ring also sees its size and the copied slots */
    atomic_store_explicit(&dq->ring, r, memory_order_release);
    return r;
}

int gr_dq_push(gr_dq *dq, void *item)
{
    int64_t b = atomic_load_explicit(&dq->bottom, memory_order_relaxed); /* own variable */
    /* relaxed: only the owner (this thread) ever stores ring */
    gr_dq_ring *r = atomic_load_explicit(&dq->ring, memory_order_relaxed);
    if (!r && !(r = first_ring(dq))) return -1;
    /* top only grows, so b - top_seen bounds the count: top is read (a cache miss while
     * thieves work) only when the ring may be full. The acquire load that produced
     * top_seen pairs with the thieves' successful CAS on top, so the slots below it that
     * are reused here were read by their thieves before. */
    if (b - dq->top_seen > r->size - 1) {
        int64_t t = atomic_load_explicit(&dq->top, memory_order_acquire);
        dq->top_seen = t;
        if (b - t > r->size - 1 && !(r = grow(dq, r, t, b))) return -1;
    }
    ring_put(r, b, item);
    /* release: pairs with the thief's acquire load of bottom, so the slot (and the task
     * the item points to) is visible before the thief can see b + 1 */
    atomic_store_explicit(&dq->bottom, b + 1, memory_order_release);
    return 0;
}

/* The queue looked empty, or the last item went to a thief: undo the reservation. */
static void *pop_fail(gr_dq *dq, int64_t b)
{
    atomic_store_explicit(&dq->bottom, b + 1, memory_order_relaxed);
    return NULL;
}

void *gr_dq_pop(gr_dq *dq)
{
    int64_t b = atomic_load_explicit(&dq->bottom, memory_order_relaxed) - 1;
    gr_dq_ring *r = atomic_load_explicit(&dq->ring, memory_order_relaxed);
    atomic_store_explicit(&dq->bottom, b, memory_order_relaxed);   /* reserve slot b */
    /* seq_cst fence: our bottom store is ordered before the top load below; pairs with
     * the fence in gr_dq_steal between its top and bottom loads, so the owner and a
     * thief cannot both miss each other's claim on the same item */
    atomic_thread_fence(memory_order_seq_cst);
    /* acquire (the paper has relaxed): the value also becomes top_seen, which push uses
     * to reuse slots, and that needs the pairing described there */
    int64_t t = atomic_load_explicit(&dq->top, memory_order_acquire);
    dq->top_seen = t;
    if (t > b) return pop_fail(dq, b);                   /* was empty */
    void *x = ring_get(r, b);
    if (t < b) return x;                                 /* more than one: no race */
    /* Last item: race the thieves for it with the same CAS they use (seq_cst, in the
     * single total order with their CAS and the fences). */
    bool won = atomic_compare_exchange_strong_explicit(&dq->top, &t, t + 1,
                                                       memory_order_seq_cst,
                                                       memory_order_relaxed);
    atomic_store_explicit(&dq->bottom, b + 1, memory_order_relaxed);   /* now empty */
    return won ? x : NULL;
}

void *gr_dq_steal(gr_dq *dq)
{
    /* acquire: pairs with other thieves' and the owner's CAS on top */
    int64_t t = atomic_load_explicit(&dq->top, memory_order_acquire);
    /* seq_cst fence: pairs with the owner's fence in gr_dq_pop (see there) */
    atomic_thread_fence(memory_order_seq_cst);
    /* acquire: pairs with the release store of bottom in gr_dq_push */
    int64_t b = atomic_load_explicit(&dq->bottom, memory_order_acquire);
    if (t >= b) return NULL;
    /* acquire: pairs with the release store in grow() */
    gr_dq_ring *r = atomic_load_explicit(&dq->ring, memory_order_acquire);
    void *x = ring_get(r, t);
    /* seq_cst CAS decides ownership of item t; it pairs with the owner's CAS for the last
     * item and with other thieves' CAS. Losing means someone else took it. */
    if (!atomic_compare_exchange_strong_explicit(&dq->top, &t, t + 1, memory_order_seq_cst,
                                                 memory_order_relaxed))
        return NULL;
    return x;
}

int64_t gr_dq_size(const gr_dq *dq)
{
    /* relaxed: a hint only; callers re-check with pop/steal */
    int64_t b = atomic_load_explicit(&((gr_dq *)dq)->bottom, memory_order_relaxed);
    int64_t t = atomic_load_explicit(&((gr_dq *)dq)->top, memory_order_relaxed);
    return b > t ? b - t : 0;
}

int64_t gr_dq_owner_size(gr_dq *dq)
{
    int64_t b = atomic_load_explicit(&dq->bottom, memory_order_relaxed);
    /* acquire: a top used later by push must carry the thieves' reads with it */
    int64_t t = atomic_load_explicit(&dq->top, memory_order_acquire);
    dq->top_seen = t;
    return b > t ? b - t : 0;
}
