/* tests/runtime/test_bufpool.c — the packet-stealing buffer manager (gramps/bufpool.c):
 * LIFO reuse within a worker's partition, 64-byte alignment, batch stealing of half a
 * victim's packets nearest victim first, the malloc safeguard once a round of stealing
 * finds nothing, and 4 threads allocating and freeing concurrently with pattern writes
 * that would expose a packet handed out twice. */
#include "gramps/bufpool.h"
#include "tests/check.h"

#include <pthread.h>
#include <sched.h>

static uint64_t counter(_Atomic(uint64_t) *v) { return atomic_load(v); }

static void test_lifo_reuse(void)
{
    gr_bufpool p;
    CHECK(gr_buf_init(&p, 100, 2, 8) == 0);
    CHECK(p.packet_bytes == 128);
    void *a = gr_buf_alloc(&p, 0);
    gr_buf_free(&p, 0, a);
    CHECK(gr_buf_alloc(&p, 0) == a);              /* the hot packet comes straight back */
    void *b = gr_buf_alloc(&p, 0);
    CHECK(b && b != a);
    gr_buf_free(&p, 0, a);
    gr_buf_free(&p, 0, b);
    CHECK(gr_buf_alloc(&p, 0) == b);
    CHECK(gr_buf_alloc(&p, 0) == a);
    /* A packet freed by worker 1 joins worker 1's partition, not worker 0's. */
    gr_buf_free(&p, 1, a);
    CHECK(gr_buf_alloc(&p, 1) == a);
    CHECK(counter(&p.steals) == 0 && counter(&p.mallocs) == 0);
    gr_buf_destroy(&p);
}

static void test_alignment(void)
{
    const size_t sizes[] = { 0, 1, 63, 64, 65, 1000, 4096 };
    for (int s = 0; s < 7; s++) {
        gr_bufpool p;
        CHECK(gr_buf_init(&p, sizes[s], 3, 7) == 0);
        CHECK(p.packet_bytes % 64 == 0 && p.packet_bytes >= sizes[s] && p.packet_bytes > 0);
        void *pk[20];
        for (int i = 0; i < 20; i++) {
            pk[i] = gr_buf_alloc(&p, (unsigned)i % 3);
            CHECK_MSG(pk[i] && (uintptr_t)pk[i] % 64 == 0, "size %zu packet %d at %p",
                      sizes[s], i, pk[i]);
            if (pk[i]) memset(pk[i], 0xab, p.packet_bytes);   /* whole packet is ours */
        }
        for (int i = 0; i < 20; i++) gr_buf_free(&p, (unsigned)i % 3, pk[i]);
        gr_buf_destroy(&p);
    }
}

/* Two workers with 8 packets each: worker 0 drains its own, then steals 4, 2, 1, 1 of
 * worker 1's (half, rounded up, each time its partition runs dry), then mallocs. */
static void test_steal_half(void)
{
    gr_bufpool p;
    CHECK(gr_buf_init(&p, 64, 2, 16) == 0);
    CHECK(counter(&p.packets_total) == 16);
    void *pk[17];
    const uint64_t steals_after[17] = { 0, 0, 0, 0, 0, 0, 0, 0,  /* own 8 */
                                        1, 1, 1, 1,              /* steal 4 of 8 */
                                        2, 2,                    /* steal 2 of 4 */
                                        3,                       /* steal 1 of 2 */
                                        4,                       /* steal the last */
                                        4 };                     /* nothing left */
    for (int i = 0; i < 17; i++) {
        pk[i] = gr_buf_alloc(&p, 0);
        CHECK_MSG(counter(&p.steals) == steals_after[i], "alloc %d: %llu steals, expected %llu",
                  i, (unsigned long long)counter(&p.steals),
                  (unsigned long long)steals_after[i]);
        CHECK(counter(&p.mallocs) == (i == 16));
        for (int j = 0; j < i; j++) CHECK(pk[j] != pk[i]);
    }
    CHECK(counter(&p.packets_total) > 16);
    for (int i = 0; i < 17; i++) gr_buf_free(&p, 0, pk[i]);
    gr_buf_destroy(&p);
}

static int in_set(void *x, void **set, int n)
{
    for (int i = 0; i < n; i++)
        if (set[i] == x) return 1;
    return 0;
}

/* A victim with both kinds of free packets: the never-used run goes first (4 of its 5),
 * then, once the run is down to one packet, that one and the coldest freed packet. */
static void test_steal_run_then_list(void)
{
    gr_bufpool p;
    CHECK(gr_buf_init(&p, 64, 2, 16) == 0);
    void *used[3], *got[12];
    for (int i = 0; i < 3; i++) used[i] = gr_buf_alloc(&p, 1);
    for (int i = 0; i < 3; i++) gr_buf_free(&p, 1, used[i]);   /* list: used[2], [1], [0] */
    for (int i = 0; i < 12; i++) got[i] = gr_buf_alloc(&p, 0); /* own 8, stolen 4 */
    CHECK(counter(&p.steals) == 1);
    for (int i = 8; i < 12; i++) CHECK(!in_set(got[i], used, 3));
    void *a = gr_buf_alloc(&p, 0), *b = gr_buf_alloc(&p, 0);   /* steal 2 of 4 */
    CHECK(counter(&p.steals) == 2 && counter(&p.mallocs) == 0);
    CHECK((a == used[0]) != (b == used[0]) && !in_set(a == used[0] ? b : a, used, 3));
    CHECK(gr_buf_alloc(&p, 1) == used[2] && gr_buf_alloc(&p, 1) == used[1]);
    CHECK(counter(&p.mallocs) == 0);
    gr_buf_destroy(&p);
}

/* Four workers: once worker 0 has exhausted worker 1 (its nearest, +1), it steals from
 * worker 3 (-1) before worker 2 (+2). */
static void test_nearest_victim_first(void)
{
    gr_bufpool p;
    CHECK(gr_buf_init(&p, 64, 4, 8) == 0);        /* 2 packets per worker */
    void *own[4][2];
    for (unsigned w = 0; w < 4; w++) {           /* learn whose packets are whose */
        own[w][0] = gr_buf_alloc(&p, w);
        own[w][1] = gr_buf_alloc(&p, w);
    }
    for (unsigned w = 0; w < 4; w++) {
        gr_buf_free(&p, w, own[w][1]);
        gr_buf_free(&p, w, own[w][0]);
    }
    CHECK(counter(&p.steals) == 0);
    for (int i = 0; i < 2; i++) CHECK(in_set(gr_buf_alloc(&p, 0), own[0], 2));
    for (int i = 0; i < 2; i++) CHECK(in_set(gr_buf_alloc(&p, 0), own[1], 2));
    for (int i = 0; i < 2; i++) CHECK(in_set(gr_buf_alloc(&p, 0), own[3], 2));
    for (int i = 0; i < 2; i++) CHECK(in_set(gr_buf_alloc(&p, 0), own[2], 2));
    CHECK(counter(&p.mallocs) == 0);
    gr_buf_destroy(&p);                         /* frees packets still handed out */
}

static void test_malloc_safeguard(void)
{
    gr_bufpool p;
    CHECK(gr_buf_init(&p, 200, 1, 2) == 0);
    void *a = gr_buf_alloc(&p, 0), *b = gr_buf_alloc(&p, 0);
    CHECK(counter(&p.mallocs) == 0);
    void *c = gr_buf_alloc(&p, 0);                /* one worker: nobody to steal from */
    CHECK(c && c != a && c != b && (uintptr_t)c % 64 == 0);
    CHECK(counter(&p.mallocs) == 1);
    uint64_t total = counter(&p.packets_total);
    CHECK(total > 3);
    /* The rest of the safeguard chunk serves the next allocations without mallocs. */
    for (uint64_t i = 3; i < total; i++) CHECK(gr_buf_alloc(&p, 0) != NULL);
    CHECK(counter(&p.mallocs) == 1);
    CHECK(gr_buf_alloc(&p, 0) != NULL);
    CHECK(counter(&p.mallocs) == 2);
    CHECK(p.nchunks == 3);                         /* init's chunk and two safeguards */
    gr_buf_destroy(&p);                          /* LSan: every chunk freed */
}

static void test_init_errors(void)
{
    gr_bufpool p;
    CHECK(gr_buf_init(&p, 64, 0, 4) == -1);
    CHECK(gr_buf_init(&p, 64, 5, 0) == 0);         /* at least one packet per worker */
    CHECK(counter(&p.packets_total) == 5);
    for (unsigned w = 0; w < 5; w++) CHECK(gr_buf_alloc(&p, w) != NULL);
    CHECK(counter(&p.steals) == 0 && counter(&p.mallocs) == 0);
    gr_buf_destroy(&p);
}

/* ---- concurrent ------------------------------------------------------------------- */

#define NTHREADS 4
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define ITERS 4000
#else
#define ITERS 40000
#endif
#define HOLD_MAX 8

typedef struct conc { gr_bufpool p; _Atomic(int) errors; _Atomic(int) start; } conc;
typedef struct conc_arg { conc *c; unsigned id; } conc_arg;

static void fill(void *pkt, size_t bytes, uint64_t tag)
{
    for (size_t i = 0; i < bytes / 8; i++) ((uint64_t *)pkt)[i] = tag + i;
}

static int intact(const void *pkt, size_t bytes, uint64_t tag)
{
    for (size_t i = 0; i < bytes / 8; i++)
        if (((const uint64_t *)pkt)[i] != tag + i) return 0;
    return 1;
}

/* Holds 1..8 packets at a time, tagged with (thread, iteration); if the pool ever gave
 * a held packet to another thread, that thread's fill breaks our tag. Thread 0 frees
 * everything into worker 1's partition (as if a consumer on worker 1 freed them), so
 * worker 0 keeps running dry and stealing while worker 1's owner races its thieves. */
static void *churn(void *arg)
{
    conc_arg *a = arg;
    conc *c = a->c;
    void *held[HOLD_MAX];
    uint64_t tags[HOLD_MAX];
    uint32_t rng = 0x9e3779b9u * (a->id + 1);
    while (!atomic_load(&c->start)) sched_yield();
    for (uint64_t it = 0; it < ITERS; it++) {
        rng ^= rng << 13; rng ^= rng >> 17; rng ^= rng << 5;
        int n = 1 + (int)(rng % HOLD_MAX);
        for (int i = 0; i < n; i++) {
            held[i] = gr_buf_alloc(&c->p, a->id);
            tags[i] = ((uint64_t)a->id << 56) | (it << 8) | (uint64_t)i;
            fill(held[i], c->p.packet_bytes, tags[i]);
        }
        if (it % 64 == 0) sched_yield();          /* let the others run over our packets */
        for (int i = 0; i < n; i++) {
            if (!intact(held[i], c->p.packet_bytes, tags[i])) atomic_fetch_add(&c->errors, 1);
            gr_buf_free(&c->p, a->id == 0 ? 1 : a->id, held[i]);
        }
    }
    return NULL;
}

static int cmp_ptr(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;
    return x < y ? -1 : x > y;
}

/* After the threads: from one worker, allocate until the safeguard triggers; every
 * packet the pool ever made must come out exactly once (none lost, none duplicated). */
static void check_all_packets(gr_bufpool *p)
{
    uint64_t total = counter(&p->packets_total), mallocs = counter(&p->mallocs);
    void **all = malloc(total * sizeof *all);
    uint64_t n = 0;
    while (n < total) all[n++] = gr_buf_alloc(p, 0);
    CHECK(counter(&p->mallocs) == mallocs);
    qsort(all, n, sizeof *all, cmp_ptr);
    int dups = 0;
    for (uint64_t i = 1; i < n; i++) dups += all[i] == all[i - 1];
    CHECK_MSG(dups == 0, "%d packets were on two free lists", dups);
    gr_buf_alloc(p, 0);
    CHECK(counter(&p->mallocs) == mallocs + 1);       /* so all `total` were reachable */
    free(all);
}

static void test_concurrent(void)
{
    conc *c = calloc(1, sizeof *c);
    /* 16 packets for 4 threads holding up to 8 each: constant stealing, some mallocs. */
    CHECK(gr_buf_init(&c->p, 256, NTHREADS, 16) == 0);
    pthread_t t[NTHREADS];
    conc_arg args[NTHREADS];
    for (unsigned i = 0; i < NTHREADS; i++) {
        args[i] = (conc_arg){ c, i };
        pthread_create(&t[i], NULL, churn, &args[i]);
    }
    atomic_store(&c->start, 1);
    for (int i = 0; i < NTHREADS; i++) pthread_join(t[i], NULL);
    CHECK_MSG(atomic_load(&c->errors) == 0, "%d packets overwritten while held",
              atomic_load(&c->errors));
    printf("     %llu steals, %llu safeguard chunks, %llu packets\n",
           (unsigned long long)counter(&c->p.steals),
           (unsigned long long)counter(&c->p.mallocs),
           (unsigned long long)counter(&c->p.packets_total));
    CHECK(counter(&c->p.steals) > 0);
    check_all_packets(&c->p);
    gr_buf_destroy(&c->p);
    free(c);
}

int main(void)
{
    RUN(test_lifo_reuse);
    RUN(test_alignment);
    RUN(test_steal_half);
    RUN(test_steal_run_then_list);
    RUN(test_nearest_victim_first);
    RUN(test_malloc_safeguard);
    RUN(test_init_errors);
    RUN(test_concurrent);
    return check_finish();
}
