/* Recirculating in-place reduction (thesis §3.5.3, gr_stage_desc.recirculate): a
 * coalescing Shader sums its packet into one element, and its results recirculate until
 * one packet remains, which alone reaches the stage downstream, under every policy and
 * worker count. Bad graphs and a task that does not shrink its packet fail with a
 * message naming the stage and queue. */
#include "gramps/gramps.h"
#include "tests/check.h"
#include "tests/runtime/run_graph.h"
#include "tests/runtime/sum_packets.h"

#include <stdint.h>
#include <string.h>

typedef struct red_params {
    uint32_t packets;
    sum_tally got;                    /* written by the single collector */
} red_params;

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

/* Leaves the packet as it came: not a reduction. */
static void keep_all(gr_ctx *c) { (void)gr_input(c, NULL); }

static void collect(gr_ctx *c)
{
    red_params *p = gr_user(c);
    tally_input(c, &p->got);
}

/* gen -> singles -> reduce (recirculating) -> result (ordered or not) -> collect */
static gr_graph *reduction_graph(red_params *p, gr_stage_fn reduce, bool coalesce, bool ordered)
{
    gr_queue_desc a = sums_queue("singles", 0), b = sums_queue("result", 0);
    b.ordered = ordered;
    return chain_graph(&a, &b,
                       &(gr_stage_desc){.name = "gen", .kind = GR_THREAD, .main = gen_singles,
                                        .user = p},
                       &(gr_stage_desc){.name = "reduce", .kind = GR_SHADER, .main = reduce,
                                        .coalesce_input = coalesce, .recirculate = true},
                       GR_BIND_INPLACE,
                       &(gr_stage_desc){.name = "collect", .kind = GR_THREAD, .main = collect,
                                        .user = p});
}

static void reduce_once(const char *sched, unsigned workers, unsigned simulate, uint32_t packets)
{
    red_params p = {.packets = packets};
    gr_graph *g = reduction_graph(&p, sum_inplace, true, false);
    gr_status st = launch_and_wait(g, sched, workers, simulate);
    CHECK_MSG(st == GR_OK, "%s, %u workers: %s", sched, workers, gr_error(g));
    uint64_t want = (uint64_t)packets * (packets + 1) / 2;
    CHECK_MSG(p.got.results == (packets ? 1 : 0) && p.got.elements == p.got.results &&
              p.got.sum == want,
              "%s, %u workers (%u simulated): %llu result packets of %llu elements, sum %llu "
              "(want one of one, %llu)", sched, workers, simulate,
              (unsigned long long)p.got.results, (unsigned long long)p.got.elements,
              (unsigned long long)p.got.sum, (unsigned long long)want);
    gr_graph_destroy(g);
}

static void test_thousand_packets_reduce_to_one(void)
{
    for (int k = 0; k < POLICIES; k++)
        for (int i = 0; i < WORKER_COUNTS; i++)
            reduce_once(every_policy[k], worker_counts[i], 0, 1000);
}

static void test_simulated_workers_reduce_to_one(void)
{
    for (int k = 0; k < POLICIES; k++) reduce_once(every_policy[k], 1, 16, 1000);
}

/* Nothing in: nothing out, and the run ends. One packet in: it comes out reduced. */
static void test_no_input_and_one_packet(void)
{
    for (int k = 0; k < POLICIES; k++) {
        reduce_once(every_policy[k], 2, 0, 0);
        reduce_once(every_policy[k], 2, 0, 1);
    }
}

/* A task that leaves more than half a packet would let two results overflow one. */
static void test_result_too_large_fails(void)
{
    red_params p = {.packets = 100};
    gr_graph *g = reduction_graph(&p, keep_all, true, false);
    gr_status st = launch_and_wait(g, "gramps", 2, 0);
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
    gr_graph *g = reduction_graph(&p, sum_inplace, false, false);
    CHECK(launch_and_wait(g, "gramps", 1, 0) == GR_ERR_INVALID);
    CHECK_MSG(strstr(gr_error(g), "'reduce' recirculates its reduction, which needs coalesce_input"),
              "%s", gr_error(g));
    gr_graph_destroy(g);

    g = reduction_graph(&p, sum_inplace, true, true);
    CHECK(launch_and_wait(g, "gramps", 1, 0) == GR_ERR_INVALID);
    CHECK_MSG(strstr(gr_error(g), "recirculates its reduction into 'result', which is ordered"),
              "%s", gr_error(g));
    gr_graph_destroy(g);
}

/* Coalescing and recirculating are Shader constructs: a Thread stage asking is refused. */
static void test_thread_stage_refused(void)
{
    red_params p = {.packets = 10};
    gr_graph *g = gr_graph_create();
    gr_queue_desc a = sums_queue("singles", 0);
    int qa = gr_queue(g, &a);
    int gen = gr_stage(g, &(gr_stage_desc){.name = "gen", .kind = GR_THREAD, .main = gen_singles, .user = &p});
    int col = gr_stage(g, &(gr_stage_desc){.name = "collect", .kind = GR_THREAD, .main = collect, .user = &p,
                                           .coalesce_input = true, .recirculate = true});
    gr_bind(g, gen, GR_BIND_OUTPUT, qa);
    gr_bind(g, col, GR_BIND_INPUT, qa);
    CHECK(launch_and_wait(g, "gramps", 1, 0) == GR_ERR_INVALID);
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
