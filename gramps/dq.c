/* dq.c — Chase-Lev work-stealing deque with the C11 memory orders of Lê, Pop, Cohen and
 * Zappa Nardelli, "Correct and efficient work-stealing for weak memory models" (2013).
 * The owner pushes/pops at `bottom`; thieves CAS `top`. Ring slots are relaxed atomics so
 * a thief reading a slot the owner is overwriting is a benign, defined race. */
#include "gramps/dq.h"

#include <stdlib.h>

struct gr_dq_ring {
    int64_t size;                    /* power of two */
    gr_dq_ring *next_retired;
    _Atomic(void *) slot[];
};

static gr_dq_ring *ring_new(int64_t size)
{
    gr_dq_ring *r = malloc(sizeof *r + (size_t)size * sizeof(r->slot[0]));
    if (!r) return NULL;
    r->size = size;
    r->next_retired = NULL;
    return r;
}

static inline void *ring_get(gr_dq_ring *r, int64_t i)
{
    return atomic_load_explicit(&r->slot[i & (r->size - 1)], memory_order_relaxed);
}

static inline void ring_put(gr_dq_ring *r, int64_t i, void *x)
{
    atomic_store_explicit(&r->slot[i & (r->size - 1)], x, memory_order_relaxed);
}

int gr_dq_init(gr_dq *dq, unsigned log2_capacity)
{
    gr_dq_ring *r = ring_new((int64_t)1 << log2_capacity);
    if (!r) return -1;
    atomic_init(&dq->top, 0);
    atomic_init(&dq->bottom, 0);
    atomic_init(&dq->ring, r);
    dq->retired = NULL;
    return 0;
}

void gr_dq_destroy(gr_dq *dq)
{
    free(atomic_load_explicit(&dq->ring, memory_order_relaxed));
    for (gr_dq_ring *r = dq->retired, *n; r; r = n) {
        n = r->next_retired;
        free(r);
    }
}

/* Owner only: doubles the ring. The old ring stays alive (retired) because a thief may
 * still be reading from it. */
static gr_dq_ring *grow(gr_dq *dq, gr_dq_ring *old, int64_t top, int64_t bottom)
{
    gr_dq_ring *r = ring_new(old->size * 2);
    if (!r) return NULL;
    for (int64_t i = top; i < bottom; i++) ring_put(r, i, ring_get(old, i));
    old->next_retired = dq->retired;
    dq->retired = old;
    /* release: a thief that sees the new ring also sees its copied slots */
    atomic_store_explicit(&dq->ring, r, memory_order_release);
    return r;
}

int gr_dq_push(gr_dq *dq, void *item)
{
    int64_t b = atomic_load_explicit(&dq->bottom, memory_order_relaxed);
    int64_t t = atomic_load_explicit(&dq->top, memory_order_acquire);
    gr_dq_ring *r = atomic_load_explicit(&dq->ring, memory_order_relaxed);
    if (b - t > r->size - 1 && !(r = grow(dq, r, t, b))) return -1;
    ring_put(r, b, item);
    /* Release store (the paper's release fence + relaxed store, in the form
     * ThreadSanitizer understands; a plain store on x86): pairs with the thief's acquire
     * load of bottom, so the slot and the task it points to are visible first. */
    atomic_store_explicit(&dq->bottom, b + 1, memory_order_release);
    return 0;
}

void *gr_dq_pop(gr_dq *dq)
{
    int64_t b = atomic_load_explicit(&dq->bottom, memory_order_relaxed) - 1;
    gr_dq_ring *r = atomic_load_explicit(&dq->ring, memory_order_relaxed);
    atomic_store_explicit(&dq->bottom, b, memory_order_relaxed);
    /* seq_cst fence: orders our bottom store before the top load, pairing with the
     * thief's fence between its top and bottom loads (the Dekker-style handshake). */
    atomic_thread_fence(memory_order_seq_cst);
    int64_t t = atomic_load_explicit(&dq->top, memory_order_relaxed);
    void *x = NULL;
    if (t <= b) {
        x = ring_get(r, b);
        if (t == b) {                 /* last item: race a thief for it */
            if (!atomic_compare_exchange_strong_explicit(&dq->top, &t, t + 1,
                    memory_order_seq_cst, memory_order_relaxed))
                x = NULL;
            atomic_store_explicit(&dq->bottom, b + 1, memory_order_relaxed);
        }
    } else {
        atomic_store_explicit(&dq->bottom, b + 1, memory_order_relaxed);
    }
    return x;
}

void *gr_dq_steal(gr_dq *dq)
{
    int64_t t = atomic_load_explicit(&dq->top, memory_order_acquire);
    atomic_thread_fence(memory_order_seq_cst);     /* pairs with the fence in pop */
    int64_t b = atomic_load_explicit(&dq->bottom, memory_order_acquire);
    if (t >= b) return NULL;
    gr_dq_ring *r = atomic_load_explicit(&dq->ring, memory_order_acquire);
    void *x = ring_get(r, t);
    /* The CAS decides ownership: losing means the owner or another thief took it. */
    if (!atomic_compare_exchange_strong_explicit(&dq->top, &t, t + 1, memory_order_seq_cst,
                                                 memory_order_relaxed))
        return NULL;
    return x;
}

int64_t gr_dq_size(const gr_dq *dq)
{
    int64_t b = atomic_load_explicit(&dq->bottom, memory_order_relaxed);
    int64_t t = atomic_load_explicit(&dq->top, memory_order_relaxed);
    return b > t ? b - t : 0;
}
