/* Shader batches (gr_stage_desc.batch, what a stage placed on an accelerator launches one
 * kernel over): the hook sees the ready packets of the stage's input together, then each
 * task runs with gr_batch_index naming its packet's position; every packet is processed
 * once, at 1 and 3 workers, and batches of more than one packet happen when the stage
 * runs after its producer (priority -1). A batch hook with input coalescing is refused. */
#include "gramps/gramps.h"
#include "tests/check.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { PACKETS = 400, BATCH = 16 };

typedef struct batch_state {
    uint64_t squares[GR_MAX_WORKERS][BATCH];   /* the hook's results per worker, by position */
    _Atomic(uint32_t) calls, largest, mismatches, unbatched;
    _Atomic(uint64_t) sum;
} batch_state;

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

static void square_batch(gr_ctx *c, void *const packets[], uint32_t n)
{
    batch_state *s = gr_user(c);
    atomic_fetch_add(&s->calls, 1);
    uint32_t big = atomic_load(&s->largest);
    while (n > big && !atomic_compare_exchange_weak(&s->largest, &big, n)) {}
    for (uint32_t k = 0; k < n; k++) {
        uint64_t v = ((const uint32_t *)packets[k])[1];
        s->squares[gr_worker_id(c)][k] = v * v;
    }
}

static void square(gr_ctx *c)
{
    batch_state *s = gr_user(c);
    const uint32_t *in = gr_input(c, NULL);
    uint64_t v = (uint64_t)in[1] * in[1];
    int k = gr_batch_index(c);
    if (k < 0) atomic_fetch_add(&s->unbatched, 1);
    else if (k >= BATCH || s->squares[gr_worker_id(c)][k] != v) atomic_fetch_add(&s->mismatches, 1);
    gr_push(c, 0, &v);
}

static void sink(gr_ctx *c)
{
    batch_state *s = gr_user(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) != GR_NOMORE) {
        const uint32_t *p = w.mem;
        const uint64_t *v = (const uint64_t *)(p + 2);
        for (uint32_t i = 0; i < p[0]; i++) atomic_fetch_add(&s->sum, v[i]);
        gr_commit(c, 0, 1);
    }
}

static gr_graph *graph(batch_state *s, bool coalesce)
{
    gr_graph *g = gr_graph_create();
    int in = gr_queue(g, &(gr_queue_desc){.name = "in", .kind = GR_COLLECTION, .header_bytes = 4,
                                          .element_bytes = 4, .elements = 1, .capacity = 64});
    /* Coalescing needs an in-place output of the input's packets. */
    int out = coalesce ? gr_queue(g, &(gr_queue_desc){.name = "out", .kind = GR_COLLECTION,
                                                      .header_bytes = 4, .element_bytes = 4,
                                                      .elements = 1, .capacity = 64})
                       : gr_queue(g, &(gr_queue_desc){.name = "out", .kind = GR_COLLECTION,
                                                      .header_bytes = 8, .element_bytes = 8,
                                                      .elements = 32, .capacity = 16});
    int src = gr_stage(g, &(gr_stage_desc){.name = "source", .kind = GR_THREAD, .main = source});
    int sq = gr_stage(g, &(gr_stage_desc){.name = "square", .kind = GR_SHADER, .main = square,
                                          .user = s, .priority = -1, .batch = square_batch,
                                          .batch_max = BATCH, .coalesce_input = coalesce});
    int snk = gr_stage(g, &(gr_stage_desc){.name = "sink", .kind = GR_THREAD, .main = sink, .user = s});
    gr_bind(g, src, GR_BIND_OUTPUT, in);
    gr_bind(g, sq, GR_BIND_INPUT, in);
    gr_bind(g, sq, coalesce ? GR_BIND_INPLACE : GR_BIND_PUSH, out);
    gr_bind(g, snk, GR_BIND_INPUT, out);
    return g;
}

static void run_batches(unsigned workers)
{
    static batch_state s;
    s = (batch_state){0};
    gr_graph *g = graph(&s, false);
    gr_launch_opts o = {.workers = workers, .deadlock_seconds = 20};
    int runnable[] = {0, 2};
    gr_status st = gr_launch(g, &o, runnable, 2);
    if (st == GR_OK) st = gr_wait(g);
    CHECK_MSG(st == GR_OK, "%s", gr_error(g));
    uint64_t want = 0;
    for (uint64_t k = 0; k < PACKETS; k++) want += k * k;
    CHECK_MSG(atomic_load(&s.sum) == want, "%u workers: sum %llu, want %llu", workers,
              (unsigned long long)atomic_load(&s.sum), (unsigned long long)want);
    CHECK_MSG(atomic_load(&s.mismatches) == 0, "%u tasks saw another packet's result",
              atomic_load(&s.mismatches));
    CHECK_MSG(atomic_load(&s.unbatched) == 0, "%u tasks ran outside a batch", atomic_load(&s.unbatched));
    /* Task-stealing runs each task as soon as it is made (work first) and breadth-first
     * one task of a stage at a time: batches of one, by design. */
    const char *policy = gr_scheduler_of(g);
    if (!strcmp(policy, "task-stealing") || !strcmp(policy, "breadth-first"))
        printf("note: %s runs batches of %u packet(s) at most\n", policy, atomic_load(&s.largest));
    else
        CHECK_MSG(atomic_load(&s.largest) > 1 && atomic_load(&s.calls) < PACKETS,
                  "%u workers: %u batches, the largest of %u", workers, atomic_load(&s.calls),
                  atomic_load(&s.largest));
    const gr_stats *stats = gr_get_stats(g);
    CHECK(stats && stats->stages[1].tasks == PACKETS);
    gr_graph_destroy(g);
}

static void test_batches_one_worker(void) { run_batches(1); }
static void test_batches_three_workers(void) { run_batches(3); }

static void test_batch_with_coalescing_refused(void)
{
    static batch_state s;
    gr_graph *g = graph(&s, true);
    gr_launch_opts o = {.workers = 1};
    int runnable[] = {0, 2};
    CHECK(gr_launch(g, &o, runnable, 2) == GR_ERR_INVALID);
    CHECK_MSG(strstr(gr_error(g), "'square'") && strstr(gr_error(g), "batches"), "%s", gr_error(g));
    gr_graph_destroy(g);
}

int main(void)
{
    RUN(test_batches_one_worker);
    RUN(test_batches_three_workers);
    RUN(test_batch_with_coalescing_refused);
    return check_finish();
}
