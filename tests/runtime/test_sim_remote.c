/* The simulator's charges for lines that move between cores (gramps/simulate.c's cost
 * model), checked by structure, never by time: a packet read on a worker other than the
 * one that committed it is charged (its lines counted), one read where it was written is
 * not; a subqueue's lock taken over from another worker is counted, one worker alone
 * never takes a line from anyone; a Thread instance with private data (gr_state_bytes)
 * pays for it exactly when it resumes on another worker than its last. Each stage here
 * writes its worker's id into the packets it commits and counts, on reading one,
 * whether its own id differs: the simulator must count exactly those. */
#include "gramps/gramps.h"
#include "tests/check.h"

#include <stdatomic.h>
#include <stdint.h>

typedef struct item {
    uint64_t value;
    uint32_t writer;                      /* gr_worker_id of the stage that committed it */
} item;

#define ITEM_LINES 2                      /* (64-byte runtime header + 16 bytes) / 64, up */

typedef struct flow {
    uint32_t packets;
    size_t state;                         /* the sink's gr_state_bytes */
    _Atomic(uint64_t) crossed, sum, moved;
} flow;

/* Whether the reader of `it` runs on another worker than its writer did. */
static void count_read(gr_ctx *c, flow *f, const item *it)
{
    if (it->writer != gr_worker_id(c)) atomic_fetch_add(&f->crossed, 1);
}

static void source(gr_ctx *c)
{
    flow *f = gr_user(c);
    gr_window w;
    for (uint32_t i = 0; i < f->packets; i++) {
        gr_reserve_out(c, 0, 1, &w);
        *(item *)w.mem = (item){.value = i, .writer = gr_worker_id(c)};
        gr_commit_out(c, 0, 1);
    }
}

static void square(gr_ctx *c)
{
    flow *f = gr_user(c);
    const item *in = gr_input(c, NULL);
    count_read(c, f, in);
    for (volatile int k = 0; k < 2000; k++) {}   /* enough work for steals to pay */
    *(item *)gr_output(c, 0) = (item){.value = in->value * in->value, .writer = gr_worker_id(c)};
}

static void add(gr_ctx *c)
{
    flow *f = gr_user(c);
    const item *in = gr_input(c, NULL);
    count_read(c, f, in);
    atomic_fetch_add(&f->sum, in->value);
}

/* A Thread consumer: reads its input one packet at a time from a physical queue. With
 * private data, it counts the runtime calls it came back from on another worker (an
 * instance changes workers only between activations, which end in runtime calls). */
static void sink(gr_ctx *c)
{
    flow *f = gr_user(c);
    gr_state_bytes(c, f->state);
    unsigned on = gr_worker_id(c);
    gr_window w;
    for (;;) {
        gr_status st = gr_reserve(c, 0, 1, &w);
        if (f->state && gr_worker_id(c) != on) atomic_fetch_add(&f->moved, 1);
        on = gr_worker_id(c);
        if (st != GR_OK) break;
        const item *in = w.mem;
        count_read(c, f, in);
        atomic_fetch_add(&f->sum, in->value);
        gr_commit(c, 0, 1);
        if (f->state && gr_worker_id(c) != on) atomic_fetch_add(&f->moved, 1);
        on = gr_worker_id(c);
    }
}

/* source -> square (Shader) -> add (Shader), or source -> sink (Thread). */
static gr_graph *graph(flow *f, bool thread_sink)
{
    gr_graph *g = gr_graph_create();
    int work = gr_queue(g, &(gr_queue_desc){.name = "work", .packet_bytes = sizeof(item),
                                            .capacity = 64});
    int src = gr_stage(g, &(gr_stage_desc){.name = "source", .kind = GR_THREAD, .main = source,
                                           .user = f});
    gr_bind(g, src, GR_BIND_OUTPUT, work);
    if (thread_sink) {
        int snk = gr_stage(g, &(gr_stage_desc){.name = "sink", .kind = GR_THREAD, .main = sink,
                                               .user = f});
        gr_bind(g, snk, GR_BIND_INPUT, work);
        return g;
    }
    int squares = gr_queue(g, &(gr_queue_desc){.name = "squares", .packet_bytes = sizeof(item),
                                               .capacity = 64});
    int sq = gr_stage(g, &(gr_stage_desc){.name = "square", .kind = GR_SHADER, .main = square,
                                          .user = f});
    int sum = gr_stage(g, &(gr_stage_desc){.name = "add", .kind = GR_SHADER, .main = add,
                                           .user = f});
    gr_bind(g, sq, GR_BIND_INPUT, work);
    gr_bind(g, sq, GR_BIND_OUTPUT, squares);
    gr_bind(g, sum, GR_BIND_INPUT, squares);
    return g;
}

typedef struct totals {
    uint64_t remote_packets, remote_lines, line_takes, state_moves;
} totals;

/* Runs the graph at p virtual workers; the workers' counts summed. */
static totals simulate(flow *f, bool thread_sink, const char *sched, unsigned p)
{
    totals t = {0};
    gr_graph *g = graph(f, thread_sink);
    gr_launch_opts o = {.scheduler = sched, .simulate = p, .stack_bytes = 64 * 1024,
                        .deadlock_seconds = 30};
    gr_status st = gr_launch(g, &o, NULL, 0);
    if (st == GR_OK) st = gr_wait(g);
    CHECK_MSG(st == GR_OK, "%s at %u: %s", sched, p, gr_error(g));
    if (st == GR_OK) {
        const gr_stats *s = gr_get_stats(g);
        for (unsigned w = 0; w < s->workers; w++) {
            t.remote_packets += s->per_worker[w].remote_packets;
            t.remote_lines += s->per_worker[w].remote_lines;
            t.line_takes += s->per_worker[w].line_takes;
            t.state_moves += s->per_worker[w].state_moves;
        }
    }
    gr_graph_destroy(g);
    return t;
}

static uint64_t sum_of(uint32_t n, bool squares)
{
    uint64_t s = 0;
    for (uint64_t i = 0; i < n; i++) s += squares ? i * i : i;
    return s;
}

/* Every packet that crosses workers is charged, and only those: at one virtual worker
 * none, at eight exactly the stages' own count (and some do cross, except under
 * Task-Stealing: its work-first order runs each committed packet's consumer on the
 * worker that committed it, and only the source's continuation is stolen; GRAMPS_TORTURE
 * does the same to every policy, preempting the source at each commit). */
static void test_crossing_packets_are_charged(void)
{
    static const char *const scheds[] = {"gramps", "task-stealing", "breadth-first"};
    static const unsigned counts[] = {1, 8};
    const bool torture = getenv("GRAMPS_TORTURE") && atoi(getenv("GRAMPS_TORTURE")) != 0;
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 2; i++)
            for (int thread_sink = 0; thread_sink < 2; thread_sink++) {
                flow f = {.packets = 400};
                totals t = simulate(&f, thread_sink, scheds[k], counts[i]);
                uint64_t crossed = atomic_load(&f.crossed);
                CHECK(atomic_load(&f.sum) == sum_of(f.packets, !thread_sink));
                CHECK_MSG(t.remote_packets == crossed, "%s at %u, %s: %llu packets charged, "
                          "%llu crossed workers", scheds[k], counts[i],
                          thread_sink ? "Thread sink" : "Shaders",
                          (unsigned long long)t.remote_packets, (unsigned long long)crossed);
                CHECK(t.remote_lines == t.remote_packets * ITEM_LINES);
                if (counts[i] == 1) CHECK(crossed == 0 && t.line_takes == 0);
                else if (!thread_sink && k != 1 && !torture)
                    CHECK_MSG(crossed > 0, "%s at 8: no packet crossed", scheds[k]);
            }
}

/* A Thread producer and a Thread consumer on two workers share one subqueue lock: its
 * line goes back and forth, and each hand-off is counted. */
static void test_lock_handoffs_counted(void)
{
    flow f = {.packets = 400};
    totals t = simulate(&f, true, "gramps", 2);
    CHECK(atomic_load(&f.sum) == sum_of(f.packets, false));
    if (atomic_load(&f.crossed) > 0)
        CHECK_MSG(t.line_takes > 0, "%llu packets crossed, no line changed hands",
                  (unsigned long long)atomic_load(&f.crossed));
}

/* The sink keeps 4 KiB (64 lines) between calls: each activation that starts on another
 * worker than the last is charged, and only those; at one worker none; without the
 * declaration none. */
static void test_state_follows_instance(void)
{
    static const char *const scheds[] = {"gramps", "task-stealing", "breadth-first"};
    static const unsigned counts[] = {1, 4};
    uint64_t moves_at_4 = 0;
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 2; i++) {
            flow f = {.packets = 400, .state = 4096};
            totals t = simulate(&f, true, scheds[k], counts[i]);
            uint64_t moved = atomic_load(&f.moved);
            CHECK_MSG(t.state_moves == moved, "%s at %u: %llu state moves charged, the sink "
                      "moved %llu times", scheds[k], counts[i],
                      (unsigned long long)t.state_moves, (unsigned long long)moved);
            CHECK(t.remote_lines == t.remote_packets * ITEM_LINES + t.state_moves * 64);
            if (counts[i] == 1) CHECK(moved == 0);
            if (counts[i] > 1) moves_at_4 += moved;
            flow plain = {.packets = 400};
            CHECK(simulate(&plain, true, scheds[k], counts[i]).state_moves == 0);
        }
    CHECK_MSG(moves_at_4 > 0, "the sink never changed workers at 4 virtual workers");
}

int main(void)
{
    RUN(test_crossing_packets_are_charged);
    RUN(test_lock_handoffs_counted);
    RUN(test_state_follows_instance);
    return check_finish();
}
