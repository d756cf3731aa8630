/* Shader batches into a queue set (gramps/batch_room.c): a batched Shader pushes each
 * task's elements to a subqueue it picks while running (value % SUBS). Told where
 * (gr_stage_desc.set_pushes), a batch follows those subqueues and the worker's push
 * coalescing: at one worker no task is launched twice (each packet reaches the batch
 * hook once) and batches take more tasks than the estimate from the fullest subqueue
 * allows (at most 1 + (CAPACITY - 1) tasks). Told wrongly (that a task pushes nothing),
 * tasks are sent back but no
 * subqueue passes the README's bound, capacity - 1 + W x (M + 1) packets (M = 1: a
 * task's PUSH elements fit one packet); nor untold, nor told at three workers. Every
 * element arrives once. */
#include "gramps/gramps.h"
#include "tests/check.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { PACKETS = 600, BATCH = 32, SUBS = 4, CAPACITY = 2, ELEMENTS = 4, PUSH = 2 };

typedef enum told { UNTOLD, TOLD, TOLD_WRONGLY } told;

typedef struct sets_state {
    told how;
    _Atomic(uint32_t) calls, largest, launched;
    _Atomic(uint64_t) sum, elements;
} sets_state;

static void source(gr_ctx *c)
{
    for (uint32_t k = 0; k < PACKETS; k++) {
        gr_window w;
        gr_reserve_out(c, 0, 1, &w);
        uint32_t *p = w.mem;
        p[0] = 1;
        p[1] = k;
        gr_commit_out(c, 0, 1);
    }
}

static void count_batch(gr_ctx *c, void *const packets[], uint32_t n)
{
    sets_state *s = gr_user(c);
    (void)packets;
    atomic_fetch_add(&s->calls, 1);
    atomic_fetch_add(&s->launched, n);
    uint32_t big = atomic_load(&s->largest);
    while (n > big && !atomic_compare_exchange_weak(&s->largest, &big, n)) {}
}

static void spread(gr_ctx *c)
{
    const uint32_t *in = gr_input(c, NULL);
    uint32_t v[PUSH];
    for (int i = 0; i < PUSH; i++) v[i] = in[1];
    gr_push_key_n(c, 0, in[1] % SUBS, v, PUSH);
}

static uint32_t where(gr_ctx *c, int output, gr_set_push *pushes)
{
    const sets_state *s = gr_user(c);
    const uint32_t *in = gr_input(c, NULL);
    (void)output;
    pushes[0] = (gr_set_push){in[1] % SUBS, PUSH};
    return s->how == TOLD_WRONGLY ? 0 : 1;       /* wrongly: that it pushes nothing */
}

static void sink(gr_ctx *c)
{
    sets_state *s = gr_user(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) != GR_NOMORE) {
        const uint32_t *p = w.mem;
        for (uint32_t i = 0; i < p[0]; i++) {
            atomic_fetch_add(&s->sum, p[1 + i]);
            atomic_fetch_add(&s->elements, 1);
        }
        gr_commit(c, 0, 1);
    }
}

/* Runs the graph; the most packets one subqueue of the set held. */
static uint32_t run(sets_state *s, unsigned workers, const char **policy)
{
    gr_graph *g = gr_graph_create();
    int in = gr_queue(g, &(gr_queue_desc){.name = "in", .kind = GR_COLLECTION, .header_bytes = 4,
                                          .element_bytes = 4, .elements = 1, .capacity = 64});
    int set = gr_queue(g, &(gr_queue_desc){.name = "set", .kind = GR_COLLECTION, .header_bytes = 4,
                                           .element_bytes = 4, .elements = ELEMENTS,
                                           .capacity = CAPACITY, .subqueues = SUBS});
    int src = gr_stage(g, &(gr_stage_desc){.name = "source", .kind = GR_THREAD, .main = source});
    int sp = gr_stage(g, &(gr_stage_desc){.name = "spread", .kind = GR_SHADER, .main = spread,
                                          .user = s, .priority = -1, .batch = count_batch,
                                          .batch_max = BATCH,
                                          .set_pushes = s->how == UNTOLD ? NULL : where});
    int snk = gr_stage(g, &(gr_stage_desc){.name = "sink", .kind = GR_THREAD, .main = sink,
                                           .user = s, .instanced = true});
    gr_bind(g, src, GR_BIND_OUTPUT, in);
    gr_bind(g, sp, GR_BIND_INPUT, in);
    gr_bind(g, sp, GR_BIND_PUSH, set);
    gr_bind(g, snk, GR_BIND_INPUT, set);
    gr_launch_opts o = {.workers = workers, .deadlock_seconds = 20};
    gr_status st = gr_launch(g, &o, &src, 1);
    if (st == GR_OK) st = gr_wait(g);
    CHECK_MSG(st == GR_OK, "%s", gr_error(g));
    uint64_t want = (uint64_t)PACKETS * (PACKETS - 1) / 2 * PUSH;
    CHECK_MSG(atomic_load(&s->sum) == want && atomic_load(&s->elements) == (uint64_t)PACKETS * PUSH,
              "%u workers: %llu elements summing to %llu, want %d summing to %llu", workers,
              (unsigned long long)atomic_load(&s->elements), (unsigned long long)atomic_load(&s->sum),
              PACKETS * PUSH, (unsigned long long)want);
    const gr_stats *stats = gr_get_stats(g);
    uint32_t peak = stats ? stats->queues[set].peak_subqueue_packets : UINT32_MAX;
    uint32_t bound = CAPACITY - 1 + workers * (1 + 1);
    CHECK_MSG(peak <= bound, "%u workers: a subqueue held %u packets, bound %u", workers, peak, bound);
    *policy = gr_scheduler_of(g);
    printf("%u workers, %s: %u batches (the largest %u) launched %u packets for %d tasks; a "
           "subqueue's peak %u of bound %u (%s)\n", workers,
           s->how == TOLD ? "told" : s->how == UNTOLD ? "untold" : "told wrongly",
           atomic_load(&s->calls), atomic_load(&s->largest), atomic_load(&s->launched), PACKETS,
           peak, bound, *policy);
    gr_graph_destroy(g);
    return peak;
}

/* Task-stealing and breadth-first run batches of one task by design (test_batch.c). */
static bool batches_grow(const char *policy)
{
    return strcmp(policy, "task-stealing") && strcmp(policy, "breadth-first");
}

static bool bounded(void)
{
    if (gr_scheduler_bounded(NULL)) return true;
    printf("note: the %s scheduler has no backpressure: no room to forecast\n", gr_scheduler_default());
    return false;
}

static void test_told_one_worker(void)
{
    if (!bounded()) return;
    static sets_state told_s, untold_s;
    const char *policy;
    told_s = (sets_state){.how = TOLD};
    untold_s = (sets_state){.how = UNTOLD};
    run(&told_s, 1, &policy);
    run(&untold_s, 1, &policy);
    CHECK_MSG(atomic_load(&told_s.launched) == PACKETS, "told: %u packets launched for %d tasks",
              atomic_load(&told_s.launched), PACKETS);
    if (!batches_grow(policy)) return;
    CHECK_MSG(atomic_load(&untold_s.largest) <= CAPACITY && atomic_load(&told_s.largest) > CAPACITY,
              "the largest batch: %u told, %u untold (the fullest subqueue's room: %d)",
              atomic_load(&told_s.largest), atomic_load(&untold_s.largest), CAPACITY);
    CHECK_MSG(atomic_load(&told_s.calls) < atomic_load(&untold_s.calls), "%u batches told, %u untold",
              atomic_load(&told_s.calls), atomic_load(&untold_s.calls));
}

/* A wrong answer costs launches (tasks sent back), never the bound (checked in run). */
static void test_told_wrongly(void)
{
    if (!bounded()) return;
    static sets_state s;
    const char *policy;
    s = (sets_state){.how = TOLD_WRONGLY};
    run(&s, 1, &policy);
    if (batches_grow(policy))
        CHECK_MSG(atomic_load(&s.launched) > PACKETS, "told wrongly: %u packets launched for %d "
                  "tasks, none sent back", atomic_load(&s.launched), PACKETS);
}

static void test_told_three_workers(void)
{
    if (!bounded()) return;
    static sets_state s;
    const char *policy;
    s = (sets_state){.how = TOLD};
    run(&s, 3, &policy);
}

/* gr_set_push_add: an element counted to its key's entry wherever it is, a new key
 * appended, and false (not a seventeenth entry written) past GR_SET_PUSHES_MAX keys. */
static void test_set_push_add(void)
{
    gr_set_push pushes[GR_SET_PUSHES_MAX + 1];
    memset(pushes, 0xff, sizeof pushes);
    uint32_t n = 0;
    const uint64_t keys[] = {7, 7, 3, 7, 3, 9};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) CHECK(gr_set_push_add(pushes, &n, keys[i]));
    CHECK(n == 3);
    CHECK(pushes[0].key == 7 && pushes[0].elements == 3);
    CHECK(pushes[1].key == 3 && pushes[1].elements == 2);
    CHECK(pushes[2].key == 9 && pushes[2].elements == 1);
    for (uint64_t k = 100; n < GR_SET_PUSHES_MAX; k++) CHECK(gr_set_push_add(pushes, &n, k));
    CHECK(gr_set_push_add(pushes, &n, 7) && pushes[0].elements == 4);
    CHECK(!gr_set_push_add(pushes, &n, 1000));
    CHECK(n == GR_SET_PUSHES_MAX && pushes[GR_SET_PUSHES_MAX].key == UINT64_MAX);
}

int main(void)
{
    RUN(test_set_push_add);
    RUN(test_told_one_worker);
    RUN(test_told_wrongly);
    RUN(test_told_three_workers);
    return check_finish();
}
