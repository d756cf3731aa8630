/* Binding counts have no fixed limit: a queue fed by 300 producer stages, and stages with
 * 40 outputs (a Shader) and 40 inputs plus 40 outputs (a Thread), run to completion with
 * every packet accounted for, at 1 and 4 workers. (Up to issue 11 a stage or queue took
 * at most 16 bindings, and the raster graph, one producer per worker, failed at 17.) */
#include "gramps/gramps.h"
#include "tests/check.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

static gr_status run(gr_graph *g, unsigned workers)
{
    gr_launch_opts o = {.workers = workers, .deadlock_seconds = 20};
    gr_status st = gr_launch(g, &o, NULL, 0);
    if (st == GR_OK) st = gr_wait(g);
    if (st != GR_OK) fprintf(stderr, "  run failed: %s\n", gr_error(g));
    return st;
}

/* ---- 300 producers into one queue ---------------------------------------------------- */

enum { PRODUCERS = 300, PER_PRODUCER = 20 };

typedef struct tag { uint32_t producer, seq; } tag;
typedef struct producer_arg { uint32_t id; } producer_arg;
typedef struct collect { uint32_t next[PRODUCERS]; uint32_t total, bad; } collect;

static void produce(gr_ctx *c)
{
    const producer_arg *a = gr_user(c);
    for (uint32_t k = 0; k < PER_PRODUCER; k++) {
        gr_window w;
        gr_reserve_out(c, 0, 1, &w);
        *(tag *)w.mem = (tag){a->id, k};
        gr_commit_out(c, 0, 1);
    }
}

/* One queue is FIFO, so each producer's packets arrive in the order it committed them. */
static void consume_tags(gr_ctx *c)
{
    collect *r = gr_user(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) != GR_NOMORE) {
        tag t = *(tag *)w.mem;
        if (t.producer >= PRODUCERS || t.seq != r->next[t.producer]++) r->bad++;
        r->total++;
        gr_commit(c, 0, 1);
    }
}

static void many_producers(unsigned workers)
{
    static producer_arg args[PRODUCERS];
    collect r = {0};
    gr_graph *g = gr_graph_create();
    int q = gr_queue(g, &(gr_queue_desc){.name = "many", .packet_bytes = sizeof(tag), .capacity = 64});
    int sink = gr_stage(g, &(gr_stage_desc){.name = "sink", .kind = GR_THREAD, .main = consume_tags, .user = &r});
    gr_bind(g, sink, GR_BIND_INPUT, q);
    int bad_binds = 0;
    for (uint32_t p = 0; p < PRODUCERS; p++) {
        char name[32];
        snprintf(name, sizeof name, "prod-%u", p);
        args[p].id = p;
        int s = gr_stage(g, &(gr_stage_desc){.name = name, .kind = GR_THREAD, .main = produce, .user = &args[p]});
        bad_binds += gr_bind(g, s, GR_BIND_OUTPUT, q) != 0;   /* slot 0 of each */
    }
    CHECK_MSG(bad_binds == 0, "%d bindings refused: %s", bad_binds, gr_error(g));
    CHECK(run(g, workers) == GR_OK);
    CHECK_MSG(r.total == PRODUCERS * PER_PRODUCER && r.bad == 0, "%u packets, %u bad", r.total, r.bad);
    for (uint32_t p = 0; p < PRODUCERS; p++) CHECK(r.next[p] == PER_PRODUCER);
    const gr_stats *st = gr_get_stats(g);
    CHECK(st && st->queues[q].packets == PRODUCERS * PER_PRODUCER);
    gr_graph_destroy(g);
}

static void test_queue_with_300_producers(void)
{
    many_producers(1);
    many_producers(4);
}

/* ---- 40 outputs and 40 inputs -------------------------------------------------------- */

/* source -> fan (Shader, 40 outputs) -> gather (Thread, 40 in, 40 out) -> check (Thread,
 * 40 in). Output i of value v carries v * 100 + i, or nothing where (v + i) % 5 == 0
 * (gr_discard), so every output slot's own state is exercised. Each queue holds all of
 * its values, so gather and check may drain one input after the other. */
enum { WIDE = 40, VALUES = 64 };

typedef struct wide_result { uint32_t seen[WIDE][VALUES]; _Atomic(uint32_t) bad; } wide_result;

static bool dropped(uint32_t v, int i) { return (v + (uint32_t)i) % 5 == 0; }

static void wide_source(gr_ctx *c)
{
    for (uint32_t v = 0; v < VALUES; v++) {
        gr_window w;
        gr_reserve_out(c, 0, 1, &w);
        *(uint32_t *)w.mem = v;
        gr_commit_out(c, 0, 1);
    }
}

static void wide_fan(gr_ctx *c)
{
    uint32_t v = *(uint32_t *)gr_input(c, NULL);
    for (int i = 0; i < WIDE; i++) {
        if (dropped(v, i)) gr_discard(c, i);
        else *(uint32_t *)gr_output(c, i) = v * 100 + (uint32_t)i;
    }
}

static void wide_gather(gr_ctx *c)
{
    for (int i = 0; i < WIDE; i++) {
        gr_window in, out;
        while (gr_reserve(c, i, 1, &in) != GR_NOMORE) {
            gr_reserve_out(c, i, 1, &out);
            *(uint32_t *)out.mem = *(uint32_t *)in.mem;
            gr_commit_out(c, i, 1);
            gr_commit(c, i, 1);
        }
    }
}

static void wide_check(gr_ctx *c)
{
    wide_result *r = gr_user(c);
    for (int i = 0; i < WIDE; i++) {
        gr_window w;
        while (gr_reserve(c, i, 1, &w) != GR_NOMORE) {
            uint32_t x = *(uint32_t *)w.mem, v = x / 100;
            if (x % 100 != (uint32_t)i || v >= VALUES) atomic_fetch_add(&r->bad, 1);
            else r->seen[i][v]++;
            gr_commit(c, i, 1);
        }
    }
}

static int wide_queue(gr_graph *g, const char *prefix, int i)
{
    char name[32];
    snprintf(name, sizeof name, "%s-%d", prefix, i);
    return gr_queue(g, &(gr_queue_desc){.name = name, .packet_bytes = 4, .capacity = VALUES});
}

static void wide_stages(unsigned workers)
{
    wide_result r = {0};
    gr_graph *g = gr_graph_create();
    int src_q = gr_queue(g, &(gr_queue_desc){.name = "values", .packet_bytes = 4, .capacity = 8});
    int src = gr_stage(g, &(gr_stage_desc){.name = "source", .kind = GR_THREAD, .main = wide_source});
    int fan = gr_stage(g, &(gr_stage_desc){.name = "fan", .kind = GR_SHADER, .main = wide_fan});
    int gather = gr_stage(g, &(gr_stage_desc){.name = "gather", .kind = GR_THREAD, .main = wide_gather});
    int check = gr_stage(g, &(gr_stage_desc){.name = "check", .kind = GR_THREAD, .main = wide_check, .user = &r});
    gr_bind(g, src, GR_BIND_OUTPUT, src_q);
    gr_bind(g, fan, GR_BIND_INPUT, src_q);
    int bad_binds = 0;        /* each binding gets slot i of its direction */
    for (int i = 0; i < WIDE; i++) {
        int a = wide_queue(g, "fanned", i), b = wide_queue(g, "gathered", i);
        bad_binds += gr_bind(g, fan, GR_BIND_OUTPUT, a) != i;
        bad_binds += gr_bind(g, gather, GR_BIND_INPUT, a) != i;
        bad_binds += gr_bind(g, gather, GR_BIND_OUTPUT, b) != i;
        bad_binds += gr_bind(g, check, GR_BIND_INPUT, b) != i;
    }
    CHECK_MSG(bad_binds == 0, "%d bindings refused: %s", bad_binds, gr_error(g));
    CHECK(run(g, workers) == GR_OK);
    CHECK(atomic_load(&r.bad) == 0);
    int wrong = 0;
    for (int i = 0; i < WIDE; i++)
        for (uint32_t v = 0; v < VALUES; v++) wrong += r.seen[i][v] != (dropped(v, i) ? 0u : 1u);
    CHECK_MSG(wrong == 0, "%d (output, value) pairs seen a wrong number of times", wrong);
    gr_graph_destroy(g);
}

static void test_stages_with_40_bindings(void)
{
    wide_stages(1);
    wide_stages(4);
}

int main(void)
{
    RUN(test_queue_with_300_producers);
    RUN(test_stages_with_40_bindings);
    return check_finish();
}
