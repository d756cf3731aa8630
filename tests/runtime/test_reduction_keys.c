/* Recirculating reduction per key (gr_stage_desc.reduce_per_key): values tagged with K
 * keys reduce to exactly one packet per key, each holding the serial sum of its key's
 * values, delivered into the key's subqueue of a queue set, under every policy at 1, 2,
 * 3 and 8 workers and simulated. Bad graphs are refused naming the stage and queue. */
#include "gramps/gramps.h"
#include "tests/check.h"
#include "tests/runtime/run_graph.h"
#include "tests/runtime/sum_packets.h"

#include <stdint.h>
#include <string.h>

#define KEYS 7

typedef struct key_params {
    uint32_t packets;
    sum_tally got[KEYS];              /* one collector instance per key */
} key_params;

/* Value i (1 .. packets) in a packet of its own, tagged with key i * 5 % KEYS: the keys
 * interleave, so neighbouring packets rarely share one. */
static void gen_keyed(gr_ctx *c)
{
    key_params *p = gr_user(c);
    for (uint64_t i = 1; i <= p->packets; i++) {
        gr_window w;
        gr_reserve_out_key(c, 0, 1, i * 5 % KEYS, &w);
        sums_pkt *pk = w.mem;
        pk->count = 1;
        pk->v[0] = i;
        gr_commit_out(c, 0, 1);
    }
}

static void collect(gr_ctx *c)
{
    key_params *p = gr_user(c);
    tally_input(c, &p->got[gr_key(c)]);
}

/* gen -> singles -> reduce (per key) -> sums (set of KEYS) -> collect[key] */
static gr_graph *keyed_graph(key_params *p, bool per_key, bool recirculate)
{
    gr_queue_desc a = sums_queue("singles", 0), b = sums_queue("sums", KEYS);
    return chain_graph(&a, &b,
                       &(gr_stage_desc){.name = "gen", .kind = GR_THREAD, .main = gen_keyed,
                                        .user = p},
                       &(gr_stage_desc){.name = "reduce", .kind = GR_SHADER, .main = sum_inplace,
                                        .coalesce_input = true, .recirculate = recirculate,
                                        .reduce_per_key = per_key},
                       GR_BIND_INPLACE,
                       &(gr_stage_desc){.name = "collect", .kind = GR_THREAD, .main = collect,
                                        .user = p, .instanced = true});
}

static void reduce_once(const char *sched, unsigned workers, unsigned simulate, uint32_t packets)
{
    key_params p = {.packets = packets};
    gr_graph *g = keyed_graph(&p, true, true);
    gr_status st = launch_and_wait(g, sched, workers, simulate);
    CHECK_MSG(st == GR_OK, "%s, %u workers: %s", sched, workers, gr_error(g));
    uint64_t want[KEYS] = {0};                /* the serial reduction */
    for (uint64_t i = 1; i <= packets; i++) want[i * 5 % KEYS] += i;
    for (int k = 0; k < KEYS; k++) {
        uint64_t n = want[k] ? 1 : 0;
        const sum_tally *got = &p.got[k];
        CHECK_MSG(got->results == n && got->elements == n && got->sum == want[k],
                  "%s, %u workers (%u simulated), key %d: %llu result packets of %llu "
                  "elements, sum %llu (want %llu of %llu, %llu)", sched, workers, simulate, k,
                  (unsigned long long)got->results, (unsigned long long)got->elements,
                  (unsigned long long)got->sum, (unsigned long long)n,
                  (unsigned long long)n, (unsigned long long)want[k]);
    }
    gr_graph_destroy(g);
}

static void test_one_result_per_key(void)
{
    for (int k = 0; k < POLICIES; k++)
        for (int i = 0; i < WORKER_COUNTS; i++)
            reduce_once(every_policy[k], worker_counts[i], 0, 1000);
}

static void test_simulated_workers(void)
{
    for (int k = 0; k < POLICIES; k++) reduce_once(every_policy[k], 1, 16, 1000);
}

/* Fewer packets than keys: the keys that got none get no result. */
static void test_keys_without_packets(void)
{
    for (int k = 0; k < POLICIES; k++) reduce_once(every_policy[k], 2, 0, 3);
}

static void test_bad_graphs_refused(void)
{
    key_params p = {.packets = 10};
    gr_graph *g = keyed_graph(&p, false, true);
    CHECK(launch_and_wait(g, "gramps", 1, 0) == GR_ERR_INVALID);
    CHECK_MSG(strstr(gr_error(g), "recirculates its reduction into 'sums', which is a queue set") &&
              strstr(gr_error(g), "with reduce_per_key"), "%s", gr_error(g));
    gr_graph_destroy(g);
    g = keyed_graph(&p, true, false);
    CHECK(launch_and_wait(g, "gramps", 1, 0) == GR_ERR_INVALID);
    CHECK_MSG(strstr(gr_error(g), "Shader stage 'reduce' reduces per key, which needs recirculate"),
              "%s", gr_error(g));
    gr_graph_destroy(g);
}

int main(void)
{
    RUN(test_one_result_per_key);
    RUN(test_simulated_workers);
    RUN(test_keys_without_packets);
    RUN(test_bad_graphs_refused);
    return check_finish();
}
