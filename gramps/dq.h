/* Chase-Lev work-stealing deque of task pointers (internal).
 *
 * One deque per stage per worker. The owning worker pushes and pops at the bottom
 * (LIFO); any worker steals from the top (FIFO). The owner may also take from the top
 * with gr_dq_steal() on its own deque, which is how FIFO-ordered stages are drained.
 * Owner operations need no atomic read-modify-write except when racing a thief for
 * the last item; a steal is one CAS. The ring grows when full (owner only); retired
 * rings are kept until gr_dq_destroy so a concurrent thief never reads freed memory. */
#ifndef GRAMPS_DQ_H
#define GRAMPS_DQ_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gr_dq_ring gr_dq_ring;

typedef struct gr_dq {
    _Alignas(64) _Atomic(int64_t) top;     /* thieves' end */
    _Alignas(64) _Atomic(int64_t) bottom;  /* owner's end */
    int64_t top_seen;                      /* owner only: a top it has read (<= top) */
    _Atomic(gr_dq_ring *) ring;
    gr_dq_ring *retired;                   /* old rings, freed at destroy */
    unsigned log2_capacity;                /* of the first ring */
} gr_dq;

/* log2_capacity: the first ring, made at the first push, holds 1 << log2_capacity items
 * (a deque never pushed to costs no allocation: a graph has one per stage per worker). */
void gr_dq_init(gr_dq *dq, unsigned log2_capacity);
void gr_dq_destroy(gr_dq *dq);
/* An empty deque whose owner and thieves are all stopped made as new (positions from 0),
 * keeping its ring (the largest it grew to) and freeing the retired ones. */
void gr_dq_reset(gr_dq *dq);

/* Owner only. item must not be NULL. Returns 0, or -1 if making or growing the ring
 * failed (ENOMEM). */
int gr_dq_push(gr_dq *dq, void *item);
/* Owner only: the most recently pushed item, or NULL when empty. */
void *gr_dq_pop(gr_dq *dq);
/* Any thread: the oldest item, or NULL when empty or when the race was lost to another
 * thief or to the owner (callers treat NULL as "nothing here now"). */
void *gr_dq_steal(gr_dq *dq);
/* Any thread: a snapshot of the item count (may be stale by the time it is used). */
int64_t gr_dq_size(const gr_dq *dq);
/* Owner only: an upper bound of the item count that does not read `top` (thieves write
 * that cache line on every steal, so reading it costs a cache miss while they work). */
static inline int64_t gr_dq_owner_bound(const gr_dq *dq)
{
    int64_t b = atomic_load_explicit(&((gr_dq *)dq)->bottom, memory_order_relaxed);
    return b > dq->top_seen ? b - dq->top_seen : 0;
}
/* Owner only: how many items it has pushed, less those it popped, since the deque was
 * made: items pushed after a moment are those above the value it had then (thieves take
 * from the other end and do not change it). */
static inline int64_t gr_dq_owner_pushed(const gr_dq *dq)
{
    return atomic_load_explicit(&((gr_dq *)dq)->bottom, memory_order_relaxed);
}
/* Owner only: the item count, reading `top` (and remembering it for the bound). */
int64_t gr_dq_owner_size(gr_dq *dq);

#endif
