/* Shader stages consuming a queue set (gramps/gate.c): tasks of different subqueues run
 * at once, but never two of one subqueue, and each subqueue's packets run in the order
 * they were committed; under every scheduler at 1, 2 and 3 workers, for static and
 * dynamic sets fed by a Thread, and a static set a Shader pushes into (coalesced per
 * subqueue); a key with no subqueue fails the run naming the set. */
#include "gramps/gramps.h"
#include "tests/check.h"
#include "tests/runtime/run_graph.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define LANES 5
#define PACKETS 3000


typedef struct item { uint64_t key; uint32_t lane, seq; } item;

typedef struct lanes {
    bool dynamic;
    uint32_t packets, bad_key;            /* bad_key: a key past the set, 0: none */
    _Atomic(int) in_flight[LANES];
    _Atomic(uint32_t) overlaps, out_of_order, seen;
    uint32_t next[LANES];                 /* written only by the lane's one task in flight */
} lanes;

/* Lane i % LANES under a key: the index (static sets) or a sparse number (dynamic). */
static uint64_t key_of(const lanes *l, uint32_t lane) { return l->dynamic ? lane * 7919u + 3u : lane; }

static void produce(gr_ctx *c)
{
    lanes *l = gr_user(c);
    for (uint32_t i = 0; i < l->packets; i++) {
        uint32_t lane = i % LANES;
        uint64_t key = l->bad_key && i == l->packets / 2 ? l->bad_key : key_of(l, lane);
        gr_window w;
        gr_reserve_out_key(c, 0, 1, key, &w);
        *(item *)w.mem = (item){key, lane, i / LANES};
        gr_commit_out(c, 0, 1);
    }
}

/* Holds its lane for a while, so that a second task of the lane would overlap. */
static void shade(gr_ctx *c)
{
    lanes *l = gr_user(c);
    const item *it = gr_input(c, NULL);
    if (atomic_fetch_add(&l->in_flight[it->lane], 1) != 0) atomic_fetch_add(&l->overlaps, 1);
    if (it->seq != l->next[it->lane]) atomic_fetch_add(&l->out_of_order, 1);
    l->next[it->lane] = it->seq + 1;
    volatile uint32_t spin = 0;
    for (uint32_t k = 0; k < 2000; k++) spin += k;
    atomic_fetch_sub(&l->in_flight[it->lane], 1);
    *(item *)gr_output(c, 0) = *it;
}

static void consume(gr_ctx *c)
{
    lanes *l = gr_user(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        atomic_fetch_add(&l->seen, 1);
        gr_commit(c, 0, 1);
    }
}

static gr_graph *build(lanes *l)
{
    gr_graph *g = gr_graph_create();
    gr_queue_desc set = {.name = "lanes", .packet_bytes = sizeof(item), .capacity = 8};
    if (l->dynamic) set.dynamic_keys = true; else set.subqueues = LANES;
    int q = gr_queue(g, &set);
    int out = gr_queue(g, &(gr_queue_desc){.name = "shaded", .packet_bytes = sizeof(item)});
    int p = gr_stage(g, &(gr_stage_desc){.name = "produce", .kind = GR_THREAD, .main = produce, .user = l});
    int s = gr_stage(g, &(gr_stage_desc){.name = "shade", .kind = GR_SHADER, .main = shade, .user = l});
    int k = gr_stage(g, &(gr_stage_desc){.name = "consume", .kind = GR_THREAD, .main = consume, .user = l});
    gr_bind(g, p, GR_BIND_OUTPUT, q);
    gr_bind(g, s, GR_BIND_INPUT, q);
    gr_bind(g, s, GR_BIND_OUTPUT, out);
    gr_bind(g, k, GR_BIND_INPUT, out);
    return g;
}

static void one_per_subqueue(bool dynamic)
{
    for (int k = 0; k < POLICIES; k++)
        for (unsigned w = 1; w <= 3; w++) {
            lanes l = {.dynamic = dynamic, .packets = PACKETS};
            gr_graph *g = build(&l);
            gr_status st = launch_and_wait(g, every_policy[k], w, 0);
            CHECK_MSG(st == GR_OK, "%s, %u workers: %s", every_policy[k], w, gr_error(g));
            CHECK_MSG(atomic_load(&l.overlaps) == 0 && atomic_load(&l.out_of_order) == 0 &&
                      atomic_load(&l.seen) == PACKETS, "%s, %u workers: %u overlaps, %u out of "
                      "order, %u of %u packets", every_policy[k], w, atomic_load(&l.overlaps),
                      atomic_load(&l.out_of_order), atomic_load(&l.seen), PACKETS);
            gr_graph_destroy(g);
        }
}

static void test_static_set(void) { one_per_subqueue(false); }
static void test_dynamic_set(void) { one_per_subqueue(true); }

/* ---- pushed into the set by a Shader: partial packets per subqueue ------------------ */

typedef struct vals { uint32_t count, pad; uint32_t v[16]; } vals;   /* a Collection */

typedef struct pushed {
    uint32_t packets;
    _Atomic(int) in_flight[LANES];
    _Atomic(uint32_t) overlaps, wrong_lane;
    _Atomic(uint64_t) sum;
} pushed;

static void numbers(gr_ctx *c)
{
    pushed *p = gr_user(c);
    for (uint32_t i = 0; i < p->packets; i++) {
        gr_window w;
        gr_reserve_out(c, 0, 1, &w);
        *(uint32_t *)w.mem = i;
        gr_commit_out(c, 0, 1);
    }
}

static void route(gr_ctx *c)
{
    uint32_t v = *(const uint32_t *)gr_input(c, NULL);
    gr_push_key(c, 0, v % LANES, &v);
}

static void add_lane(gr_ctx *c)
{
    pushed *p = gr_user(c);
    const vals *in = gr_input(c, NULL);
    uint32_t lane = in->v[0] % LANES;
    if (atomic_fetch_add(&p->in_flight[lane], 1) != 0) atomic_fetch_add(&p->overlaps, 1);
    for (uint32_t k = 0; k < in->count; k++) {
        if (in->v[k] % LANES != lane) atomic_fetch_add(&p->wrong_lane, 1);
        atomic_fetch_add(&p->sum, in->v[k]);
    }
    atomic_fetch_sub(&p->in_flight[lane], 1);
}

static void test_pushed_into_the_set(void)
{
    for (int k = 0; k < POLICIES; k++)
        for (unsigned w = 1; w <= 3; w++) {
            pushed p = {.packets = 4000};
            gr_graph *g = gr_graph_create();
            int a = gr_queue(g, &(gr_queue_desc){.name = "numbers", .packet_bytes = 4});
            int set = gr_queue(g, &(gr_queue_desc){.name = "by-lane", .kind = GR_COLLECTION,
                                                   .header_bytes = 8, .element_bytes = 4,
                                                   .elements = 16, .subqueues = LANES});
            int s0 = gr_stage(g, &(gr_stage_desc){.name = "numbers", .kind = GR_THREAD, .main = numbers, .user = &p});
            int s1 = gr_stage(g, &(gr_stage_desc){.name = "route", .kind = GR_SHADER, .main = route});
            int s2 = gr_stage(g, &(gr_stage_desc){.name = "add", .kind = GR_SHADER, .main = add_lane, .user = &p});
            gr_bind(g, s0, GR_BIND_OUTPUT, a);
            gr_bind(g, s1, GR_BIND_INPUT, a);
            gr_bind(g, s1, GR_BIND_PUSH, set);
            gr_bind(g, s2, GR_BIND_INPUT, set);
            CHECK_MSG(launch_and_wait(g, every_policy[k], w, 0) == GR_OK, "%s: %s", every_policy[k],
                      gr_error(g));
            CHECK_MSG(atomic_load(&p.overlaps) == 0 && atomic_load(&p.wrong_lane) == 0 &&
                      atomic_load(&p.sum) == 4000ull * 3999 / 2, "%s, %u workers: %u overlaps, "
                      "%u in the wrong lane, sum %llu", every_policy[k], w,
                      atomic_load(&p.overlaps), atomic_load(&p.wrong_lane),
                      (unsigned long long)atomic_load(&p.sum));
            gr_graph_destroy(g);
        }
}

static void test_key_past_the_set(void)
{
    lanes l = {.packets = 40, .bad_key = LANES + 2};
    gr_graph *g = build(&l);
    CHECK(launch_and_wait(g, "gramps", 2, 0) == GR_ERR_INVALID);
    CHECK_MSG(strstr(gr_error(g), "'lanes'") && strstr(gr_error(g), "subqueue 7 does not exist"),
              "%s", gr_error(g));
    gr_graph_destroy(g);
}

int main(void)
{
    RUN(test_static_set);
    RUN(test_dynamic_set);
    RUN(test_pushed_into_the_set);
    RUN(test_key_past_the_set);
    return check_finish();
}
