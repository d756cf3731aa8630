/* Recirculating in-place reduction (thesis §3.5.3, gr_stage_desc.recirculate): a
 * coalescing Shader sums its packet into one element, and its results recirculate until
 * one packet remains, which alone reaches the stage downstream, under every policy and
 * worker count. Bad graphs and a task that does not shrink its packet fail with a
 * message naming the stage and queue. */
#include "gramps/gramps.h"
#include "tests/check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ELEMS 16
typedef struct sums_pkt { uint32_t count, pad; uint64_t v[ELEMS]; } sums_pkt;

typedef struct red_params {
    uint32_t packets;
    uint64_t sum, results, elements;  /* written by the single collector */
} red_params;

static gr_queue_desc sums_queue(const char *name)
{
    return (gr_queue_desc){.name = name, .kind = GR_COLLECTION, .header_bytes = 8,
                           .element_bytes = sizeof(uint64_t), .elements = ELEMS, .capacity = 64};
}

/* One value per packet, 1 .. packets. */
static void gen_singles(gr_ctx *c)
{
    red_params *p = gr_user(c);
    for (uint32_t i = 1; i <= p->packets; i++) {
        gr_window w;
        gr_reserve_out(c, 0, 1, &w);
        sums_pkt *pk = w.mem;
        pk->count = 1;
        pk->v[0] = i;
        gr_commit_out(c, 0, 1);
    }
}

/* Sums the packet's elements into its first one. */
static void sum_inplace(gr_ctx *c)
{
    sums_pkt *in = gr_input(c, NULL);
    uint64_t s = 0;
    for (uint32_t k = 0; k < in->count; k++) s += in->v[k];
    in->v[0] = s;
    in->count = 1;
}

/* Leaves the packet as it came: not a reduction. */
static void keep_all(gr_ctx *c) { (void)gr_input(c, NULL); }

static void collect(gr_ctx *c)
{
    red_params *p = gr_user(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        const sums_pkt *pk = w.mem;
        p->results++;
        p->elements += pk->count;
        for (uint32_t k = 0; k < pk->count; k++) p->sum += pk->v[k];
        gr_commit(c, 0, 1);
    }
}

/* gen -> singles -> reduce (recirculating) -> result -> collect */
static gr_graph *reduction_graph(red_params *p, gr_stage_fn reduce, bool coalesce)
{
    gr_graph *g = gr_graph_create();
    gr_queue_desc a = sums_queue("singles"), b = sums_queue("result");
    int qa = gr_queue(g, &a), qb = gr_queue(g, &b);
    int gen = gr_stage(g, &(gr_stage_desc){.name = "gen", .kind = GR_THREAD, .main = gen_singles, .user = p});
    int red = gr_stage(g, &(gr_stage_desc){.name = "reduce", .kind = GR_SHADER, .main = reduce,
                                           .coalesce_input = coalesce, .recirculate = true});
    int col = gr_stage(g, &(gr_stage_desc){.name = "collect", .kind = GR_THREAD, .main = collect, .user = p});
    gr_bind(g, gen, GR_BIND_OUTPUT, qa);
    gr_bind(g, red, GR_BIND_INPUT, qa);
    gr_bind(g, red, GR_BIND_INPLACE, qb);
    gr_bind(g, col, GR_BIND_INPUT, qb);
    return g;
}

static gr_status launch(gr_graph *g, const char *sched, unsigned workers, unsigned simulate)
{
    gr_launch_opts o = {.workers = workers, .scheduler = sched, .simulate = simulate,
                        .deadlock_seconds = 20};
    gr_status st = gr_launch(g, &o, NULL, 0);
    return st == GR_OK ? gr_wait(g) : st;
}

static const char *const schedulers[] = {"gramps", "task-stealing", "breadth-first", "static", "qes", "pss"};

static void reduce_once(const char *sched, unsigned workers, unsigned simulate, uint32_t packets)
{
    red_params p = {.packets = packets};
    gr_graph *g = reduction_graph(&p, sum_inplace, true);
    gr_status st = launch(g, sched, workers, simulate);
    CHECK_MSG(st == GR_OK, "%s, %u workers: %s", sched, workers, gr_error(g));
    uint64_t want = (uint64_t)packets * (packets + 1) / 2;
    CHECK_MSG(p.results == (packets ? 1 : 0) && p.elements == p.results && p.sum == want,
              "%s, %u workers (%u simulated): %llu result packets of %llu elements, sum %llu "
              "(want one of one, %llu)", sched, workers, simulate,
              (unsigned long long)p.results, (unsigned long long)p.elements,
              (unsigned long long)p.sum, (unsigned long long)want);
    gr_graph_destroy(g);
}

static void test_thousand_packets_reduce_to_one(void)
{
    static const unsigned workers[] = {1, 2, 3, 8};
    for (int k = 0; k < 6; k++)
        for (int i = 0; i < 4; i++) reduce_once(schedulers[k], workers[i], 0, 1000);
}

static void test_simulated_workers_reduce_to_one(void)
{
    for (int k = 0; k < 6; k++) reduce_once(schedulers[k], 1, 16, 1000);
}

/* Nothing in: nothing out, and the run ends. One packet in: it comes out reduced. */
static void test_no_input_and_one_packet(void)
{
    for (int k = 0; k < 6; k++) {
        reduce_once(schedulers[k], 2, 0, 0);
        reduce_once(schedulers[k], 2, 0, 1);
    }
}

/* A task that leaves more than half a packet would let two results overflow one. */
static void test_result_too_large_fails(void)
{
    red_params p = {.packets = 100};
    gr_graph *g = reduction_graph(&p, keep_all, true);
    gr_status st = launch(g, "gramps", 2, 0);
    CHECK(st == GR_ERR_INVALID);
    CHECK_MSG(strstr(gr_error(g), "stage 'reduce' recirculates its reduction") &&
              strstr(gr_error(g), "queue 'singles'") && strstr(gr_error(g), "at most 8 elements"),
              "%s", gr_error(g));
    gr_graph_destroy(g);
}

/* Recirculation needs coalescing; its result queue must be plain and unordered. */
static void test_bad_graphs_refused(void)
{
    red_params p = {.packets = 10};
    gr_graph *g = reduction_graph(&p, sum_inplace, false);
    CHECK(launch(g, "gramps", 1, 0) == GR_ERR_INVALID);
    CHECK_MSG(strstr(gr_error(g), "'reduce' recirculates its reduction, which needs coalesce_input"),
              "%s", gr_error(g));
    gr_graph_destroy(g);

    g = gr_graph_create();
    gr_queue_desc a = sums_queue("singles"), b = sums_queue("result");
    b.ordered = true;
    int qa = gr_queue(g, &a), qb = gr_queue(g, &b);
    int gen = gr_stage(g, &(gr_stage_desc){.name = "gen", .kind = GR_THREAD, .main = gen_singles, .user = &p});
    int red = gr_stage(g, &(gr_stage_desc){.name = "reduce", .kind = GR_SHADER, .main = sum_inplace,
                                           .coalesce_input = true, .recirculate = true});
    int col = gr_stage(g, &(gr_stage_desc){.name = "collect", .kind = GR_THREAD, .main = collect, .user = &p});
    gr_bind(g, gen, GR_BIND_OUTPUT, qa);
    gr_bind(g, red, GR_BIND_INPUT, qa);
    gr_bind(g, red, GR_BIND_INPLACE, qb);
    gr_bind(g, col, GR_BIND_INPUT, qb);
    CHECK(launch(g, "gramps", 1, 0) == GR_ERR_INVALID);
    CHECK_MSG(strstr(gr_error(g), "recirculates its reduction into 'result', which is ordered"),
              "%s", gr_error(g));
    gr_graph_destroy(g);
}

/* Coalescing and recirculating are Shader constructs: a Thread stage asking is refused. */
static void test_thread_stage_refused(void)
{
    red_params p = {.packets = 10};
    gr_graph *g = gr_graph_create();
    gr_queue_desc a = sums_queue("singles");
    int qa = gr_queue(g, &a);
    int gen = gr_stage(g, &(gr_stage_desc){.name = "gen", .kind = GR_THREAD, .main = gen_singles, .user = &p});
    int col = gr_stage(g, &(gr_stage_desc){.name = "collect", .kind = GR_THREAD, .main = collect, .user = &p,
                                           .coalesce_input = true, .recirculate = true});
    gr_bind(g, gen, GR_BIND_OUTPUT, qa);
    gr_bind(g, col, GR_BIND_INPUT, qa);
    CHECK(launch(g, "gramps", 1, 0) == GR_ERR_INVALID);
    CHECK_MSG(strstr(gr_error(g), "Thread stage 'collect' asks to recirculate its input"), "%s", gr_error(g));
    gr_graph_destroy(g);
}

int main(void)
{
    RUN(test_thousand_packets_reduce_to_one);
    RUN(test_simulated_workers_reduce_to_one);
    RUN(test_no_input_and_one_packet);
    RUN(test_result_too_large_fails);
    RUN(test_bad_graphs_refused);
    RUN(test_thread_stage_refused);
    return check_finish();
}
