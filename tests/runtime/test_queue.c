/* Unit tests of the subqueue ring (gramps/queue.c): FIFO order, reserved slots that an
 * ordered chain fills out of order, skipped slots, growth past the initial size, and the
 * "need met" rule consumers wait on. Single-threaded: the locking is exercised by the
 * regression and stress programs. */
#include "gramps/internal.h"
#include "tests/check.h"

static gr_queue_rt make_queue(uint32_t capacity)
{
    gr_queue_rt q;
    memset(&q, 0, sizeof q);
    q.d.capacity = capacity;
    q.physical = true;
    return q;
}

static gr_pkt *pkt(uintptr_t id) { return (gr_pkt *)(id << 6); }

/* Ordered slots: filled out of order, released in reservation order. */
static void test_reorder_slots(void)
{
    gr_queue_rt q = make_queue(8);
    gr_subq *s = gr_subq_new(&q, 0, 0);
    uint64_t slot[5];
    for (int i = 0; i < 5; i++) slot[i] = gr_subq_reserve_slot(s);
    CHECK(s->charged == 5 && gr_subq_avail(s) == 0);
    /* deliver 2, then 0: only 0 is available (1 still pending) */
    s->ring[slot[2] & (s->ring_size - 1)] = pkt(3);
    s->state[slot[2] & (s->ring_size - 1)] = GR_SLOT_READY;
    s->ring[slot[0] & (s->ring_size - 1)] = pkt(1);
    s->state[slot[0] & (s->ring_size - 1)] = GR_SLOT_READY;
    /* advance happens on delivery in the runtime; emulate with a zero-packet pop */
    gr_pkt *out[8];
    CHECK(gr_subq_pop(s, 0, out) == 0);
    s->ready_end = s->head;
    s->state[slot[1] & (s->ring_size - 1)] = GR_SLOT_SKIP;   /* slot 1 produced nothing */
    s->state[slot[3] & (s->ring_size - 1)] = GR_SLOT_READY;
    s->ring[slot[3] & (s->ring_size - 1)] = pkt(4);
    /* recompute the frontier the way advance_ready does */
    while (s->ready_end < s->tail && s->state[s->ready_end & (s->ring_size - 1)] != GR_SLOT_PENDING) {
        if (s->state[s->ready_end & (s->ring_size - 1)] == GR_SLOT_SKIP) s->nskip++;
        s->ready_end++;
    }
    CHECK(gr_subq_avail(s) == 3);                          /* 0, 2, 3 ready; 1 skipped; 4 pending */
    gr_pkt *peek[3];
    gr_subq_peek(s, 3, peek);
    CHECK(peek[0] == pkt(1) && peek[1] == pkt(3) && peek[2] == pkt(4));
    uint32_t slots = gr_subq_pop(s, 2, out);
    CHECK(slots == 3 && out[0] == pkt(1) && out[1] == pkt(3));   /* the skip went with them */
    CHECK(s->charged == 2 && gr_subq_avail(s) == 1);
    gr_subq_free(s);
}

static void test_fifo_and_growth(void)
{
    gr_queue_rt q = make_queue(4);
    q.backward = true;                                       /* unbounded: the ring grows */
    gr_subq *s = gr_subq_new(&q, 0, 0);
    uint64_t initial = s->ring_size;
    for (uintptr_t i = 1; i <= 100; i++) {
        uint64_t pos = gr_subq_reserve_slot(s);
        s->ring[pos & (s->ring_size - 1)] = pkt(i);
        s->state[pos & (s->ring_size - 1)] = GR_SLOT_READY;
        s->ready_end = s->tail;
    }
    CHECK(s->ring_size > initial && s->charged == 100 && gr_subq_avail(s) == 100);
    gr_pkt *out[100];
    CHECK(gr_subq_pop(s, 100, out) == 100);
    bool in_order = true;
    for (uintptr_t i = 0; i < 100; i++) in_order &= out[i] == pkt(i + 1);
    CHECK(in_order);
    CHECK(s->charged == 0 && s->peak == 100);
    gr_subq_free(s);
}

static void test_need_met(void)
{
    gr_queue_rt q = make_queue(2);
    gr_subq *s = gr_subq_new(&q, 0, 0);
    CHECK(!gr_subq_need_met(s, 1, false));
    uint64_t pos = gr_subq_reserve_slot(s);
    s->ring[pos & (s->ring_size - 1)] = pkt(1);
    s->state[pos & (s->ring_size - 1)] = GR_SLOT_READY;
    s->ready_end = s->tail;
    CHECK(gr_subq_need_met(s, 1, false));
    CHECK(!gr_subq_need_met(s, 2, false));
    CHECK(gr_subq_need_met(s, 2, true));                     /* quiescent cycle grant */
    pos = gr_subq_reserve_slot(s);
    s->ring[pos & (s->ring_size - 1)] = pkt(2);
    s->state[pos & (s->ring_size - 1)] = GR_SLOT_READY;
    s->ready_end = s->tail;
    CHECK(gr_subq_need_met(s, 5, false));                    /* full: more than capacity asked */
    CHECK(!gr_subq_need_met(s, GR_ALL, false));              /* a barrier waits for close */
    s->closed = true;
    CHECK(gr_subq_need_met(s, GR_ALL, false));
    gr_subq_free(s);
}

int main(void)
{
    RUN(test_reorder_slots);
    RUN(test_fifo_and_growth);
    RUN(test_need_met);
    return check_finish();
}
