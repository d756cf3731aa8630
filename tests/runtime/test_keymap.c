/* tests/runtime/test_keymap.c — the lock-free key -> dense index map (gramps/keymap.c):
 * indices in insertion order, lookups, a full map, the reserved key, and 10,000 keys
 * inserted concurrently by 4 threads with overlapping key sets, where every key must get
 * exactly one index, the indices must be exactly 0..9999, and init must run exactly once
 * per key and be visible to every thread that gets the index. */
#include "gramps/keymap.h"
#include "tests/check.h"

#include <pthread.h>
#include <sched.h>

/* ---- single thread ---------------------------------------------------------------- */

typedef struct init_log {
    int calls;
    uint64_t keys[64];
    uint32_t indices[64];
} init_log;

static void log_init(void *ctx, uint64_t key, uint32_t index)
{
    init_log *l = ctx;
    if (l->calls < 64) {
        l->keys[l->calls] = key;
        l->indices[l->calls] = index;
    }
    l->calls++;
}

static void test_insertion_order(void)
{
    gr_keymap m;
    CHECK(gr_keymap_init(&m, 16) == 0);
    init_log l = {0};
    const uint64_t keys[] = { 1000, 5, 0, 77777, 1ull << 40, UINT64_MAX - 1, 6 };
    for (uint32_t i = 0; i < 7; i++) CHECK(gr_keymap_get(&m, keys[i], log_init, &l) == i);
    CHECK(l.calls == 7);
    for (int i = 0; i < 7 && i < l.calls; i++)
        CHECK(l.keys[i] == keys[i] && l.indices[i] == (uint32_t)i);
    /* Known keys: same index, init not called again. */
    for (uint32_t i = 0; i < 7; i++) CHECK(gr_keymap_get(&m, keys[i], log_init, &l) == i);
    CHECK(l.calls == 7);
    CHECK(atomic_load(&m.count) == 7);
    gr_keymap_destroy(&m);
}

static void test_find(void)
{
    gr_keymap m;
    CHECK(gr_keymap_init(&m, 100) == 0);
    CHECK(gr_keymap_find(&m, 42) == UINT32_MAX);
    for (uint64_t k = 0; k < 100; k++) CHECK(gr_keymap_get(&m, k * 1000003, NULL, NULL) == k);
    for (uint64_t k = 0; k < 100; k++) CHECK(gr_keymap_find(&m, k * 1000003) == k);
    CHECK(gr_keymap_find(&m, 1) == UINT32_MAX);
    CHECK(gr_keymap_find(&m, UINT64_MAX) == UINT32_MAX);
    gr_keymap_destroy(&m);
}

static void test_full(void)
{
    gr_keymap m;
    CHECK(gr_keymap_init(&m, 8) == 0);
    init_log l = {0};
    for (uint64_t k = 0; k < 8; k++) CHECK(gr_keymap_get(&m, k << 32, log_init, &l) == k);
    CHECK(gr_keymap_get(&m, 99, log_init, &l) == GR_KEYMAP_FULL);
    CHECK(gr_keymap_get(&m, 99, log_init, &l) == GR_KEYMAP_FULL);   /* still full */
    CHECK(gr_keymap_find(&m, 99) == UINT32_MAX);
    CHECK(l.calls == 8);                          /* no init for a key that got no index */
    for (uint64_t k = 0; k < 8; k++) CHECK(gr_keymap_get(&m, k << 32, log_init, &l) == k);
    CHECK(atomic_load(&m.count) == 8);
    gr_keymap_destroy(&m);

    CHECK(gr_keymap_init(&m, 0) == 0);            /* a map that can hold nothing */
    CHECK(gr_keymap_get(&m, 1, NULL, NULL) == GR_KEYMAP_FULL);
    gr_keymap_destroy(&m);
}

static void test_bad_key(void)
{
    gr_keymap m;
    CHECK(gr_keymap_init(&m, 4) == 0);
    init_log l = {0};
    CHECK(gr_keymap_get(&m, UINT64_MAX, log_init, &l) == GR_KEYMAP_BADKEY);
    CHECK(l.calls == 0);
    CHECK(atomic_load(&m.count) == 0);
    CHECK(gr_keymap_get(&m, 3, log_init, &l) == 0);   /* the bad key took no index */
    gr_keymap_destroy(&m);
}

/* ---- concurrent ------------------------------------------------------------------- */

#define NKEYS 10000
#define NTHREADS 4
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define ROUNDS 4
#else
#define ROUNDS 30
#endif

typedef struct shared {
    gr_keymap m;
    _Atomic(int) init_calls[NKEYS];   /* per key number */
    _Atomic(int) seen[NKEYS];         /* per index: how many keys got it (from init) */
    /* Written by init without atomics: a thread that gets the index must see them,
     * which is what the release/acquire publication promises (and TSan checks). */
    uint64_t payload_key[NKEYS];
    int payload_ready[NKEYS];
    _Atomic(int) errors;
    _Atomic(int) start;
} shared;

typedef struct worker { shared *s; int id; uint32_t got[NKEYS]; } worker;

/* Sparse keys whose low bits are all equal, so a weak hash would collide them. */
static uint64_t key_of(int i) { return ((uint64_t)i << 24) | 0x5a; }
static int number_of(uint64_t key) { return (int)(key >> 24); }

static void shared_init(void *ctx, uint64_t key, uint32_t index)
{
    shared *s = ctx;
    int n = number_of(key);
    if (n < 0 || n >= NKEYS || index >= NKEYS) {
        atomic_fetch_add(&s->errors, 1);
        return;
    }
    atomic_fetch_add(&s->init_calls[n], 1);
    atomic_fetch_add(&s->seen[index], 1);
    s->payload_key[index] = key;
    if (n % 64 == 0) sched_yield();   /* widen the window in which others must wait */
    s->payload_ready[index] = 1;
}

static void *insert_all(void *arg)
{
    worker *w = arg;
    shared *s = w->s;
    while (!atomic_load(&s->start)) sched_yield();
    /* Each thread covers every key, from a different starting point and direction, so
     * the four sets overlap completely but in different orders. */
    for (int j = 0; j < NKEYS; j++) {
        int i = w->id % 2 ? (w->id * 2500 + j) % NKEYS : (NKEYS - 1 - j + w->id * 2500) % NKEYS;
        uint32_t idx = gr_keymap_get(&s->m, key_of(i), shared_init, s);
        w->got[i] = idx;
        if (idx >= NKEYS || !s->payload_ready[idx] || s->payload_key[idx] != key_of(i))
            atomic_fetch_add(&s->errors, 1);
    }
    return NULL;
}

static void check_concurrent_result(shared *s, worker *w)
{
    int bad_init = 0, bad_seen = 0, disagree = 0, bad_find = 0;
    for (int i = 0; i < NKEYS; i++) {
        bad_init += atomic_load(&s->init_calls[i]) != 1;
        bad_seen += atomic_load(&s->seen[i]) != 1;   /* index i given exactly once */
        for (int t = 1; t < NTHREADS; t++) disagree += w[t].got[i] != w[0].got[i];
        bad_find += gr_keymap_find(&s->m, key_of(i)) != w[0].got[i];
    }
    CHECK_MSG(atomic_load(&s->errors) == 0, "%d unpublished or wrong payloads",
              atomic_load(&s->errors));
    CHECK_MSG(bad_init == 0, "%d keys whose init did not run exactly once", bad_init);
    CHECK_MSG(bad_seen == 0, "%d indices of 0..%d not given exactly once", bad_seen, NKEYS - 1);
    CHECK_MSG(disagree == 0, "%d keys with different indices in different threads", disagree);
    CHECK(bad_find == 0);
    CHECK(atomic_load(&s->m.count) == NKEYS);
    CHECK(gr_keymap_get(&s->m, key_of(NKEYS), NULL, NULL) == GR_KEYMAP_FULL);
}

static void concurrent_round(void)
{
    shared *s = calloc(1, sizeof *s);
    worker *w = calloc(NTHREADS, sizeof *w);
    CHECK(gr_keymap_init(&s->m, NKEYS) == 0);      /* exactly full at the end */
    pthread_t t[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        w[i].s = s;
        w[i].id = i;
        pthread_create(&t[i], NULL, insert_all, &w[i]);
    }
    atomic_store(&s->start, 1);
    for (int i = 0; i < NTHREADS; i++) pthread_join(t[i], NULL);
    check_concurrent_result(s, w);
    gr_keymap_destroy(&s->m);
    free(w);
    free(s);
}

/* Many rounds: one round is over in about a millisecond, so repetition is what makes
 * the threads collide on the same keys often. */
static void test_concurrent_inserts(void)
{
    for (int round = 0; round < ROUNDS && !check_failures_in_test; round++) concurrent_round();
}

int main(void)
{
    RUN(test_insertion_order);
    RUN(test_find);
    RUN(test_full);
    RUN(test_bad_key);
    RUN(test_concurrent_inserts);
    return check_finish();
}
