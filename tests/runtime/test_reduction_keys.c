/* Recirculating reduction per key (gr_stage_desc.reduce_per_key): values tagged with K
 * keys reduce to exactly one packet per key, each holding the serial sum of its key's
 * values, delivered into the key's subqueue of a queue set, under every policy at 1, 2,
 * 3 and 8 workers and simulated. Bad graphs are refused naming the stage and queue. */
#include "gramps/gramps.h"
#include "tests/check.h"

#include <stdint.h>
#include <string.h>

#define ELEMS 16
#define KEYS 7
typedef struct sums_pkt { uint32_t count, pad; uint64_t v[ELEMS]; } sums_pkt;

typedef struct key_params {
    uint32_t packets;
    uint64_t results[KEYS], elements[KEYS], sum[KEYS];   /* one collector instance per key */
} key_params;

static gr_queue_desc sums_queue(const char *name, uint32_t subqueues)
{
    return (gr_queue_desc){.name = name, .kind = GR_COLLECTION, .header_bytes = 8,
                           .element_bytes = sizeof(uint64_t), .elements = ELEMS, .capacity = 64,
                           .subqueues = subqueues};
}

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

static void sum_inplace(gr_ctx *c)
{
    sums_pkt *in = gr_input(c, NULL);
    uint64_t s = 0;
    for (uint32_t k = 0; k < in->count; k++) s += in->v[k];
    in->v[0] = s;
    in->count = 1;
}

static void collect(gr_ctx *c)
{
    key_params *p = gr_user(c);
    uint64_t key = gr_key(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        const sums_pkt *pk = w.mem;
        p->results[key]++;
        p->elements[key] += pk->count;
        for (uint32_t k = 0; k < pk->count; k++) p->sum[key] += pk->v[k];
        gr_commit(c, 0, 1);
    }
}

/* gen -> singles -> reduce (per key) -> sums (set of KEYS) -> collect[key] */
static gr_graph *keyed_graph(key_params *p, bool per_key, bool recirculate)
{
    gr_graph *g = gr_graph_create();
    gr_queue_desc a = sums_queue("singles", 0), b = sums_queue("sums", KEYS);
    int qa = gr_queue(g, &a), qb = gr_queue(g, &b);
    int gen = gr_stage(g, &(gr_stage_desc){.name = "gen", .kind = GR_THREAD, .main = gen_keyed, .user = p});
    int red = gr_stage(g, &(gr_stage_desc){.name = "reduce", .kind = GR_SHADER, .main = sum_inplace,
                                           .coalesce_input = true, .recirculate = recirculate,
                                           .reduce_per_key = per_key});
    int col = gr_stage(g, &(gr_stage_desc){.name = "collect", .kind = GR_THREAD, .main = collect,
                                           .user = p, .instanced = true});
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
    key_params p = {.packets = packets};
    gr_graph *g = keyed_graph(&p, true, true);
    gr_status st = launch(g, sched, workers, simulate);
    CHECK_MSG(st == GR_OK, "%s, %u workers: %s", sched, workers, gr_error(g));
    uint64_t want[KEYS] = {0};                /* the serial reduction */
    for (uint64_t i = 1; i <= packets; i++) want[i * 5 % KEYS] += i;
    for (int k = 0; k < KEYS; k++) {
        uint64_t n = want[k] ? 1 : 0;
        CHECK_MSG(p.results[k] == n && p.elements[k] == n && p.sum[k] == want[k],
                  "%s, %u workers (%u simulated), key %d: %llu result packets of %llu "
                  "elements, sum %llu (want %llu of %llu, %llu)", sched, workers, simulate, k,
                  (unsigned long long)p.results[k], (unsigned long long)p.elements[k],
                  (unsigned long long)p.sum[k], (unsigned long long)n,
                  (unsigned long long)n, (unsigned long long)want[k]);
    }
    gr_graph_destroy(g);
}

static void test_one_result_per_key(void)
{
    static const unsigned workers[] = {1, 2, 3, 8};
    for (int k = 0; k < 6; k++)
        for (int i = 0; i < 4; i++) reduce_once(schedulers[k], workers[i], 0, 1000);
}

static void test_simulated_workers(void)
{
    for (int k = 0; k < 6; k++) reduce_once(schedulers[k], 1, 16, 1000);
}

/* Fewer packets than keys: the keys that got none get no result. */
static void test_keys_without_packets(void)
{
    for (int k = 0; k < 6; k++) reduce_once(schedulers[k], 2, 0, 3);
}

static void test_bad_graphs_refused(void)
{
    key_params p = {.packets = 10};
    gr_graph *g = keyed_graph(&p, false, true);
    CHECK(launch(g, "gramps", 1, 0) == GR_ERR_INVALID);
    CHECK_MSG(strstr(gr_error(g), "recirculates its reduction into 'sums', which is a queue set") &&
              strstr(gr_error(g), "with reduce_per_key"), "%s", gr_error(g));
    gr_graph_destroy(g);
    g = keyed_graph(&p, true, false);
    CHECK(launch(g, "gramps", 1, 0) == GR_ERR_INVALID);
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
