/* Any-subqueue reserve (thesis appendix A.2, gr_reserve_any): a Thread stage that is
 * not instanced reads a queue set from whichever subqueue is ready. set-reduce-keyed's
 * reduce-huge: one huge reservation per lane, the runtime choosing the lane, then
 * GR_NOMORE; and a one-packet-at-a-time reader of a set with small subqueues, whose
 * producer blocks on full ones, under every policy and worker count. */
#include "gramps/gramps.h"
#include "tests/check.h"
#include "tests/runtime/run_graph.h"

#include <stdint.h>
#include <string.h>

#define MAX_LANES 8

typedef struct any_params {
    uint32_t values, lanes;
    uint32_t next[MAX_LANES];         /* the next value expected per lane */
    uint32_t bad, seen, huge_windows;
} any_params;

static void generate_keyed(gr_ctx *c)
{
    any_params *p = gr_user(c);
    for (uint32_t i = 0; i < p->values; i++) {
        gr_window w;
        gr_reserve_out_key(c, 0, 1, i % p->lanes, &w);
        *(uint32_t *)w.mem = i;
        gr_commit_out(c, 0, 1);
    }
}

/* Checks that a window of lane w->key continues that lane's values in order. */
static void check_window(any_params *p, const gr_window *w)
{
    if (w->key >= p->lanes) { p->bad++; return; }
    for (uint32_t k = 0; k < w->packets; k++) {
        uint32_t v = ((const uint32_t *)w->mem)[k];
        if (v != p->next[w->key] * p->lanes + w->key) p->bad++;
        p->next[w->key]++;
        p->seen++;
    }
}

/* Appendix A.2's reduce-huge-reserve, not instanced: each lane whole, in one window. */
static void reduce_huge_any(gr_ctx *c)
{
    any_params *p = gr_user(c);
    for (uint32_t lane = 0; lane < p->lanes; lane++) {
        gr_window w;
        gr_status st = gr_reserve_any(c, 0, GR_ALL, &w);
        if (st == GR_NOMORE) { p->bad++; return; }
        p->huge_windows++;
        check_window(p, &w);
        gr_commit(c, 0, w.packets);
    }
    gr_window w;
    if (gr_reserve_any(c, 0, 1, &w) != GR_NOMORE) p->bad++;
}

static void read_each_any(gr_ctx *c)
{
    any_params *p = gr_user(c);
    gr_window w;
    while (gr_reserve_any(c, 0, 1, &w) != GR_NOMORE) {
        check_window(p, &w);
        gr_commit(c, 0, w.packets);
    }
}

static gr_status run_set(any_params *p, gr_stage_fn reader, const gr_queue_desc *set,
                         const char *sched, unsigned workers, gr_graph **out)
{
    gr_graph *g = gr_graph_create();
    int q = gr_queue(g, set);
    int gen = gr_stage(g, &(gr_stage_desc){.name = "generate", .kind = GR_THREAD, .main = generate_keyed, .user = p});
    int red = gr_stage(g, &(gr_stage_desc){.name = "reduce", .kind = GR_THREAD, .main = reader, .user = p});
    gr_bind(g, gen, GR_BIND_OUTPUT, q);
    gr_bind(g, red, GR_BIND_INPUT, q);
    *out = g;
    return launch_and_wait(g, sched, workers, 0);
}


static void test_reduce_huge_any_subqueue(void)
{
    for (int k = 0; k < POLICIES; k++)
        for (int i = 0; i < WORKER_COUNTS; i++)
            for (int dynamic = 0; dynamic <= 1; dynamic++) {
                any_params p = {.values = 25, .lanes = 6};
                gr_queue_desc d = {.name = "data-set", .packet_bytes = 4, .capacity = 40,
                                   .subqueues = dynamic ? 0 : 6, .dynamic_keys = dynamic};
                gr_graph *g;
                gr_status st = run_set(&p, reduce_huge_any, &d, every_policy[k], worker_counts[i],
                                       &g);
                CHECK_MSG(st == GR_OK && p.bad == 0 && p.seen == 25 && p.huge_windows == 6,
                          "%s, %u workers, %s set: %s; %u bad, %u values, %u windows",
                          every_policy[k], worker_counts[i], dynamic ? "dynamic" : "static",
                          gr_error(g), p.bad, p.seen, p.huge_windows);
                gr_graph_destroy(g);
            }
}

/* Subqueues of 4 packets: the producer fills one and blocks, and the reader must be
 * woken by that subqueue, not by the one it looked at last. */
static void test_small_subqueues_one_at_a_time(void)
{
    for (int k = 0; k < POLICIES; k++)
        for (int i = 0; i < WORKER_COUNTS; i++) {
            any_params p = {.values = 2000, .lanes = 5};
            gr_queue_desc d = {.name = "lanes", .packet_bytes = 4, .capacity = 4, .subqueues = 5};
            gr_graph *g;
            gr_status st = run_set(&p, read_each_any, &d, every_policy[k], worker_counts[i], &g);
            CHECK_MSG(st == GR_OK && p.bad == 0 && p.seen == 2000, "%s, %u workers: %s; %u bad, "
                      "%u values", every_policy[k], worker_counts[i], gr_error(g), p.bad, p.seen);
            gr_graph_destroy(g);
        }
}

static void read_plain_any(gr_ctx *c)
{
    gr_window w;
    gr_reserve_any(c, 0, 1, &w);
}

static void test_plain_queue_refused(void)
{
    any_params p = {.values = 3, .lanes = 1};
    gr_queue_desc d = {.name = "plain", .packet_bytes = 4};
    gr_graph *g;
    gr_status st = run_set(&p, read_plain_any, &d, "gramps", 1, &g);
    CHECK(st == GR_ERR_INVALID);
    CHECK_MSG(strstr(gr_error(g), "stage 'reduce': gr_reserve_any on input 'plain', which is no "
                     "queue set"), "%s", gr_error(g));
    gr_graph_destroy(g);
}

int main(void)
{
    RUN(test_reduce_huge_any_subqueue);
    RUN(test_small_subqueues_one_at_a_time);
    RUN(test_plain_queue_refused);
    return check_finish();
}
