/* tests/runtime/test_dq.c — the Chase-Lev work-stealing deque (gramps/dq.c): owner
 * LIFO and thief FIFO order, growth past the initial ring, NULL when empty, and a
 * concurrent stress where the owner pushes and pops while 1-3 thieves steal and every
 * item must be taken exactly once. */
#include "gramps/dq.h"
#include "tests/check.h"

#include <pthread.h>
#include <sched.h>
#include <stdint.h>

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define STRESS_ITEMS 100000       /* sanitizers are 5-20x slower */
#else
#define STRESS_ITEMS 1000000
#endif

static void *item(uintptr_t i) { return (void *)i; }

static void test_lifo_pop(void)
{
    gr_dq dq;
    gr_dq_init(&dq, 4);
    CHECK(gr_dq_pop(&dq) == NULL);
    for (uintptr_t i = 1; i <= 10; i++) CHECK(gr_dq_push(&dq, item(i)) == 0);
    CHECK(gr_dq_size(&dq) == 10);
    for (uintptr_t i = 10; i >= 1; i--) CHECK(gr_dq_pop(&dq) == item(i));
    CHECK(gr_dq_pop(&dq) == NULL);
    CHECK(gr_dq_pop(&dq) == NULL);              /* an empty pop leaves it consistent */
    CHECK(gr_dq_size(&dq) == 0);
    CHECK(gr_dq_push(&dq, item(7)) == 0);
    CHECK(gr_dq_pop(&dq) == item(7));
    gr_dq_destroy(&dq);
}

/* A deque never pushed to has no ring yet: pops, steals and sizes see it empty, and
 * destroying it frees nothing that was not made. */
static void test_never_pushed(void)
{
    gr_dq dq;
    gr_dq_init(&dq, 3);
    CHECK(gr_dq_pop(&dq) == NULL && gr_dq_steal(&dq) == NULL && gr_dq_pop(&dq) == NULL);
    CHECK(gr_dq_size(&dq) == 0 && gr_dq_owner_size(&dq) == 0 && gr_dq_owner_bound(&dq) == 0);
    gr_dq_destroy(&dq);
    gr_dq_init(&dq, 0);                         /* one slot: the first push grows it too */
    CHECK(gr_dq_steal(&dq) == NULL);
    CHECK(gr_dq_push(&dq, item(1)) == 0 && gr_dq_push(&dq, item(2)) == 0);
    CHECK(gr_dq_steal(&dq) == item(1) && gr_dq_pop(&dq) == item(2) && gr_dq_pop(&dq) == NULL);
    gr_dq_destroy(&dq);
}

static void test_fifo_steal(void)
{
    gr_dq dq;
    gr_dq_init(&dq, 4);
    CHECK(gr_dq_steal(&dq) == NULL);
    for (uintptr_t i = 1; i <= 10; i++) gr_dq_push(&dq, item(i));
    for (uintptr_t i = 1; i <= 10; i++) CHECK(gr_dq_steal(&dq) == item(i));
    CHECK(gr_dq_steal(&dq) == NULL);
    CHECK(gr_dq_size(&dq) == 0);
    gr_dq_destroy(&dq);
}

/* Both ends at once: steal takes the oldest, pop the newest. */
static void test_mixed_ends(void)
{
    gr_dq dq;
    gr_dq_init(&dq, 1);
    for (uintptr_t i = 1; i <= 6; i++) gr_dq_push(&dq, item(i));
    CHECK(gr_dq_steal(&dq) == item(1));
    CHECK(gr_dq_pop(&dq) == item(6));
    CHECK(gr_dq_steal(&dq) == item(2));
    CHECK(gr_dq_pop(&dq) == item(5));
    CHECK(gr_dq_size(&dq) == 2);
    CHECK(gr_dq_pop(&dq) == item(4));
    CHECK(gr_dq_steal(&dq) == item(3));       /* the last item, taken from the top */
    CHECK(gr_dq_pop(&dq) == NULL);
    CHECK(gr_dq_steal(&dq) == NULL);
    gr_dq_destroy(&dq);
}

/* Starting at 4 slots, 5000 items force ten doublings, with the indices wrapping
 * around the ring in between (the top has moved before each growth). */
static void test_growth(void)
{
    gr_dq dq;
    gr_dq_init(&dq, 2);
    uintptr_t next_steal = 1, pushed = 0;
    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < 1000; i++) CHECK(gr_dq_push(&dq, item(++pushed)) == 0);
        for (int i = 0; i < 3; i++) CHECK(gr_dq_steal(&dq) == item(next_steal++));
    }
    CHECK(gr_dq_size(&dq) == (int64_t)(pushed - next_steal + 1));
    for (uintptr_t i = pushed; i >= next_steal; i--) CHECK(gr_dq_pop(&dq) == item(i));
    CHECK(gr_dq_pop(&dq) == NULL);
    gr_dq_destroy(&dq);
}

/* ---- concurrent stress ------------------------------------------------------------ */

typedef struct stress {
    gr_dq dq;
    _Atomic(int) taken[STRESS_ITEMS + 1];     /* times each item was returned */
    /* Written by the owner just before the push, plainly: the taker must see it, which
     * is what the deque's release/acquire publication promises (and TSan checks). */
    uintptr_t payload[STRESS_ITEMS + 1];
    _Atomic(int) done;                         /* owner finished and drained */
    _Atomic(long) stolen;
} stress;

static void take(stress *s, void *x)
{
    uintptr_t i = (uintptr_t)x;
    if (i >= 1 && i <= STRESS_ITEMS && s->payload[i] == i * 7 + 1)
        atomic_fetch_add(&s->taken[i], 1);
    else
        atomic_fetch_add(&s->taken[0], 1);    /* garbage or unpublished: a failure */
}

static void *thief(void *arg)
{
    stress *s = arg;
    long n = 0;
    while (!atomic_load(&s->done)) {
        void *x = gr_dq_steal(&s->dq);
        if (x) { take(s, x); n++; }
        else sched_yield();
    }
    atomic_fetch_add(&s->stolen, n);
    return NULL;
}

static uint32_t xorshift(uint32_t *st)
{
    uint32_t x = *st;
    x ^= x << 13; x ^= x >> 17; x ^= x << 5;
    return *st = x;
}

/* The owner pushes 1..N in bursts and pops a random share back, so pops race steals
 * for the last item often; a small first ring makes it grow under the thieves. */
static void owner_run(stress *s)
{
    uint32_t rng = 12345;
    uintptr_t next = 1;
    while (next <= STRESS_ITEMS) {
        unsigned burst = 1 + xorshift(&rng) % 16;
        for (unsigned i = 0; i < burst && next <= STRESS_ITEMS; i++, next++) {
            s->payload[next] = next * 7 + 1;
            CHECK(gr_dq_push(&s->dq, item(next)) == 0);
        }
        unsigned pops = xorshift(&rng) % (burst + 1);
        for (unsigned i = 0; i < pops; i++) {
            void *x = gr_dq_pop(&s->dq);
            if (x) take(s, x);
        }
    }
    for (void *x; (x = gr_dq_pop(&s->dq));) take(s, x);
}

static void stress_with(int nthieves)
{
    stress *s = aligned_alloc(_Alignof(stress), sizeof *s);   /* gr_dq is 64-aligned */
    memset(s, 0, sizeof *s);
    gr_dq_init(&s->dq, 2);
    pthread_t t[3];
    for (int i = 0; i < nthieves; i++) pthread_create(&t[i], NULL, thief, s);
    owner_run(s);
    CHECK(gr_dq_size(&s->dq) == 0);
    atomic_store(&s->done, 1);
    for (int i = 0; i < nthieves; i++) pthread_join(t[i], NULL);
    int lost = 0, dup = 0;
    for (int i = 1; i <= STRESS_ITEMS; i++) {
        int n = atomic_load(&s->taken[i]);
        lost += n == 0;
        dup += n > 1;
    }
    CHECK_MSG(lost == 0 && dup == 0 && atomic_load(&s->taken[0]) == 0,
              "%d thieves: %d lost, %d taken twice, %d garbage or unpublished", nthieves,
              lost, dup,
              atomic_load(&s->taken[0]));
    printf("     %d thieves: %ld of %d items stolen\n", nthieves, atomic_load(&s->stolen),
           STRESS_ITEMS);
    gr_dq_destroy(&s->dq);
    free(s);
}

static void test_stress_1_thief(void) { stress_with(1); }
static void test_stress_2_thieves(void) { stress_with(2); }
static void test_stress_3_thieves(void) { stress_with(3); }

int main(void)
{
    RUN(test_lifo_pop);
    RUN(test_never_pushed);
    RUN(test_fifo_steal);
    RUN(test_mixed_ends);
    RUN(test_growth);
    RUN(test_stress_1_thief);
    RUN(test_stress_2_thieves);
    RUN(test_stress_3_thieves);
    return check_finish();
}
