/* gr_push_flush ends a worker's push packets early: each task of the pusher pushes a
 * first part of its elements, flushes, pushes a second part and flushes again, so every
 * packet its consumer gets holds elements of one part of one task only, and the packet
 * count is exact (without the flushes, packets of 4 elements would mix tasks and parts).
 * Into a plain queue and into a queue set (every subqueue's packet ends), under every
 * scheduling policy, at 1, 2, 3 and 8 workers and simulated; under the policies with
 * backpressure the plain queue stays within its capacity bound, the packets a task
 * starts after a flush counted (docs/runtime-api.md, "Capacity"). */
#include "gramps/gramps.h"
#include "tests/check.h"
#include "tests/runtime/run_graph.h"

#include <stdatomic.h>
#include <string.h>

#define TASKS 600
#define ELEMS 4                       /* elements per push packet */
#define FIRST 5                       /* a task's first part: a full packet and one of 1 */
#define SECOND 3                      /* its second part: one packet of 3 */
#define PACKETS_PER_TASK 3
#define CAPACITY 4
#define KEYS 2                        /* subqueues of the queue-set variant */

typedef struct element {
    uint32_t task, part;
} element;

typedef struct flush_run {
    _Atomic(uint32_t) elements[2];    /* consumed, per part */
    _Atomic(uint32_t) mixed;          /* packets holding more than one (task, part) */
    _Atomic(uint32_t) wrong_size;     /* packets of a size the parts cannot make */
    _Atomic(uint64_t) task_sum;
} flush_run;

static void source(gr_ctx *c)
{
    gr_window w;
    for (uint32_t i = 0; i < TASKS; i++) {
        if (gr_reserve_out(c, 0, 1, &w) != GR_OK) return;
        *(uint32_t *)w.mem = i;
        gr_commit_out(c, 0, 1);
    }
}

static void push_part(gr_ctx *c, uint32_t task, uint32_t part, uint32_t n)
{
    element e[FIRST];
    for (uint32_t i = 0; i < n; i++) e[i] = (element){task, part};
    gr_push_key_n(c, 0, task % KEYS, e, n);
    gr_push_flush(c, 0);
}

static void pusher(gr_ctx *c)
{
    const uint32_t task = *(const uint32_t *)gr_input(c, NULL);
    push_part(c, task, 0, FIRST);
    push_part(c, task, 1, SECOND);
}

/* The sizes the parts make: 4 and 1 for the first, 3 for the second. */
static bool size_ok(uint32_t part, uint32_t n)
{
    return part == 0 ? n == ELEMS || n == FIRST - ELEMS : n == SECOND;
}

static void check_packet(flush_run *r, const void *mem)
{
    const uint32_t n = gr_count(mem);
    const element *e = (const element *)((const char *)mem + sizeof(uint32_t));
    for (uint32_t i = 1; i < n; i++)
        if (e[i].task != e[0].task || e[i].part != e[0].part) {
            atomic_fetch_add(&r->mixed, 1);
            break;
        }
    if (!size_ok(e[0].part, n)) atomic_fetch_add(&r->wrong_size, 1);
    for (uint32_t i = 0; i < n; i++) atomic_fetch_add(&r->task_sum, e[i].task);
    atomic_fetch_add(&r->elements[e[0].part ? 1 : 0], n);
}

static void sink(gr_ctx *c)
{
    flush_run *r = gr_user(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        check_packet(r, w.mem);
        gr_commit(c, 0, 1);
    }
}

static gr_graph *flush_graph(flush_run *r, bool set)
{
    gr_graph *g = gr_graph_create();
    int tasks = gr_queue(g, &(gr_queue_desc){.name = "tasks", .packet_bytes = 4, .capacity = 8});
    int pushed = gr_queue(g, &(gr_queue_desc){.name = "pushed", .kind = GR_COLLECTION,
                                              .header_bytes = 4, .element_bytes = sizeof(element),
                                              .elements = ELEMS, .capacity = CAPACITY,
                                              .subqueues = set ? KEYS : 0});
    int src = gr_stage(g, &(gr_stage_desc){.name = "source", .kind = GR_THREAD, .main = source});
    int push = gr_stage(g, &(gr_stage_desc){.name = "pusher", .kind = GR_SHADER, .main = pusher});
    int snk = gr_stage(g, &(gr_stage_desc){.name = "sink", .kind = GR_THREAD, .main = sink,
                                           .user = r, .instanced = set});
    gr_bind(g, src, GR_BIND_OUTPUT, tasks);
    gr_bind(g, push, GR_BIND_INPUT, tasks);
    gr_bind(g, push, GR_BIND_PUSH, pushed);
    gr_bind(g, snk, GR_BIND_INPUT, pushed);
    return g;
}

static void run_flush(const char *policy, unsigned workers, unsigned simulate, bool set)
{
    flush_run r = {0};
    gr_graph *g = flush_graph(&r, set);
    const char *what = set ? "queue set" : "plain queue";
    gr_status st = launch_and_wait(g, policy, workers, simulate);
    CHECK_MSG(st == GR_OK, "%s, %u workers (simulated %u), %s: %s", policy, workers, simulate,
              what, gr_error(g));
    CHECK_MSG(atomic_load(&r.mixed) == 0 && atomic_load(&r.wrong_size) == 0,
              "%s, %u workers (simulated %u), %s: %u packets mixed parts, %u of a wrong size",
              policy, workers, simulate, what, atomic_load(&r.mixed), atomic_load(&r.wrong_size));
    CHECK(atomic_load(&r.elements[0]) == TASKS * FIRST && atomic_load(&r.elements[1]) == TASKS * SECOND);
    CHECK(atomic_load(&r.task_sum) == (uint64_t)TASKS * (TASKS - 1) / 2 * (FIRST + SECOND));
    const gr_stats *s = gr_get_stats(g);
    CHECK(s != NULL);
    if (s) {
        const gr_queue_stats *q = &s->queues[1];
        CHECK_MSG(q->packets == TASKS * PACKETS_PER_TASK, "%s, %u workers, %s: %llu packets, "
                  "expected %d", policy, workers, what, (unsigned long long)q->packets,
                  TASKS * PACKETS_PER_TASK);
        /* capacity + W x (M - 1): the flushes take no space of their own */
        const unsigned w = simulate ? simulate : workers;
        const uint64_t bound = CAPACITY + (uint64_t)w * (PACKETS_PER_TASK - 1);
        if (!set && gr_scheduler_bounded(policy))
            CHECK_MSG(q->reserved_peak_packets <= bound && q->peak_packets <= bound,
                      "%s, %u workers: peak %llu reserved, %llu held, bound %llu", policy, w,
                      (unsigned long long)q->reserved_peak_packets,
                      (unsigned long long)q->peak_packets, (unsigned long long)bound);
    }
    gr_graph_destroy(g);
}

static void test_packet_boundaries(void)
{
    for (int p = 0; p < POLICIES; p++)
        for (int k = 0; k < WORKER_COUNTS; k++)
            for (int set = 0; set < 2; set++)
                run_flush(every_policy[p], worker_counts[k], 0, set);
}

static void test_simulated(void)
{
    for (int p = 0; p < POLICIES; p++)
        for (int set = 0; set < 2; set++) run_flush(every_policy[p], 1, 4, set);
}

/* On an output that is not a push binding the run fails with the stage's name. */
static void not_push(gr_ctx *c)
{
    gr_push_flush(c, 0);
}

static void drain(gr_ctx *c)
{
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) gr_commit(c, 0, 1);
}

static void test_misuse(void)
{
    gr_graph *g = gr_graph_create();
    int a = gr_queue(g, &(gr_queue_desc){.name = "a", .packet_bytes = 4});
    int b = gr_queue(g, &(gr_queue_desc){.name = "b", .packet_bytes = 4});
    int src = gr_stage(g, &(gr_stage_desc){.name = "source", .kind = GR_THREAD, .main = source});
    int sh = gr_stage(g, &(gr_stage_desc){.name = "shader", .kind = GR_SHADER, .main = not_push});
    int snk = gr_stage(g, &(gr_stage_desc){.name = "sink", .kind = GR_THREAD, .main = drain});
    gr_bind(g, src, GR_BIND_OUTPUT, a);
    gr_bind(g, sh, GR_BIND_INPUT, a);
    gr_bind(g, sh, GR_BIND_OUTPUT, b);
    gr_bind(g, snk, GR_BIND_INPUT, b);
    gr_status st = launch_and_wait(g, NULL, 1, 0);
    CHECK(st != GR_OK);
    CHECK_MSG(strstr(gr_error(g), "stage 'shader': gr_push_flush on output 0") != NULL, "%s",
              gr_error(g));
    gr_graph_destroy(g);
}

int main(void)
{
    RUN(test_packet_boundaries);
    RUN(test_simulated);
    RUN(test_misuse);
    return check_finish();
}
