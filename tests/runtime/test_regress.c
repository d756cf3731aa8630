/* Runtime regression programs after the thesis' appendix A (set-reduce-keyed) and its
 * kin: static and dynamic queue sets with instanced Thread consumers, Shader pipelines
 * with push, an in-place reduction, ordered chains, a cycle (mergesort), a barrier
 * reserve, backpressure, and 10,000 dynamic keys. Each runs at several worker counts. */
#include "gramps/gramps.h"
#include "tests/check.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static gr_launch_opts opts_for(unsigned workers)
{
    gr_launch_opts o = {0};
    o.workers = workers;
    o.deadlock_seconds = 20;
    return o;
}

static gr_status run(gr_graph *g, unsigned workers)
{
    gr_launch_opts o = opts_for(workers);
    gr_status st = gr_launch(g, &o, NULL, 0);
    if (st == GR_OK) st = gr_wait(g);
    if (st != GR_OK) fprintf(stderr, "  run failed: %s\n", gr_error(g));
    return st;
}

/* ---- set-reduce-keyed ------------------------------------------------------------- */

typedef struct sr_params { uint32_t values, lanes; _Atomic(uint32_t) bad, lanes_seen; } sr_params;

static void generate_keyed(gr_ctx *c)
{
    sr_params *p = gr_user(c);
    for (uint32_t i = 0; i < p->values; i++) {
        gr_window w;
        gr_reserve_out_key(c, 0, 1, i % p->lanes, &w);
        *(uint32_t *)w.mem = i;
        gr_commit_out(c, 0, 1);
    }
}

/* Reduce-huge-reserve: one huge reservation returns the whole subqueue once the
 * producer is done; every value must be the ones that belong to this key, in order. */
static void reduce_huge(gr_ctx *c)
{
    sr_params *p = gr_user(c);
    gr_window w;
    gr_status st = gr_reserve(c, 0, GR_ALL, &w);
    if (st == GR_NOMORE) return;
    uint64_t lane = gr_key(c);
    uint32_t expected_n = p->values / p->lanes + (lane < p->values % p->lanes);
    if (st != GR_SHORT || w.packets != expected_n || w.key != lane) atomic_fetch_add(&p->bad, 1);
    for (uint32_t i = 0; i < w.packets; i++)
        if (((uint32_t *)w.mem)[i] != i * p->lanes + lane) atomic_fetch_add(&p->bad, 1);
    gr_commit(c, 0, w.packets);
    if (gr_reserve(c, 0, 1, &w) != GR_NOMORE) atomic_fetch_add(&p->bad, 1);
    atomic_fetch_add(&p->lanes_seen, 1);
}

static void set_reduce(uint32_t values, uint32_t lanes, bool dynamic, unsigned workers)
{
    sr_params p = {values, lanes, 0, 0};
    gr_graph *g = gr_graph_create();
    gr_queue_desc qd = {.name = "data-set", .packet_bytes = 4, .capacity = values + 1};
    if (dynamic) qd.dynamic_keys = true; else qd.subqueues = lanes;
    int q = gr_queue(g, &qd);
    int gen = gr_stage(g, &(gr_stage_desc){.name = "generate", .kind = GR_THREAD,
                                           .main = generate_keyed, .user = &p});
    int red = gr_stage(g, &(gr_stage_desc){.name = "reduce-huge", .kind = GR_THREAD,
                                           .main = reduce_huge, .user = &p, .instanced = true});
    gr_bind(g, gen, GR_BIND_OUTPUT, q);
    gr_bind(g, red, GR_BIND_INPUT, q);
    CHECK(run(g, workers) == GR_OK);
    CHECK_MSG(atomic_load(&p.bad) == 0, "%u bad values", atomic_load(&p.bad));
    CHECK_MSG(atomic_load(&p.lanes_seen) == lanes, "%u lanes of %u", atomic_load(&p.lanes_seen), lanes);
    const gr_stats *st = gr_get_stats(g);
    CHECK(st && st->stages[red].instances == lanes);
    gr_graph_destroy(g);
}

static void test_set_reduce_keyed(void)
{
    for (unsigned w = 1; w <= 4; w++) {
        set_reduce(25, 6, true, w);
        set_reduce(5000, 7, true, w);
    }
}

static void test_set_reduce_static(void)
{
    for (unsigned w = 1; w <= 4; w++) set_reduce(3000, 5, false, w);
}

/* ---- an instance for every subqueue -------------------------------------------------- */

#define EVERY_LANES 8
typedef struct every_params {
    uint32_t fed_mask;                    /* the lanes the producer sends to */
    uint32_t per_lane;
    _Atomic(uint32_t) ran[EVERY_LANES], got[EVERY_LANES], bad;
} every_params;

static void generate_some_lanes(gr_ctx *c)
{
    every_params *p = gr_user(c);
    for (uint32_t i = 0; i < p->per_lane; i++)
        for (uint32_t lane = 0; lane < EVERY_LANES; lane++) {
            if (!(p->fed_mask >> lane & 1)) continue;
            gr_window w;
            gr_reserve_out_key(c, 0, 1, lane, &w);
            *(uint32_t *)w.mem = lane;
            gr_commit_out(c, 0, 1);
        }
}

static void count_lane(gr_ctx *c)
{
    every_params *p = gr_user(c);
    uint64_t lane = gr_key(c);
    if (lane >= EVERY_LANES) { atomic_fetch_add(&p->bad, 1); return; }
    atomic_fetch_add(&p->ran[lane], 1);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        if (*(uint32_t *)w.mem != lane) atomic_fetch_add(&p->bad, 1);
        atomic_fetch_add(&p->got[lane], 1);
        gr_commit(c, 0, 1);
    }
}

static gr_graph *every_graph(every_params *p, bool every, bool instanced, bool dynamic)
{
    gr_graph *g = gr_graph_create();
    gr_queue_desc qd = {.name = "lanes", .packet_bytes = 4, .capacity = 16};
    if (dynamic) qd.dynamic_keys = true; else qd.subqueues = EVERY_LANES;
    int q = gr_queue(g, &qd);
    int gen = gr_stage(g, &(gr_stage_desc){.name = "generate", .kind = GR_THREAD,
                                           .main = generate_some_lanes, .user = p});
    int cnt = gr_stage(g, &(gr_stage_desc){.name = "count", .kind = GR_THREAD, .main = count_lane,
                                           .user = p, .instanced = instanced,
                                           .every_subqueue = every});
    gr_bind(g, gen, GR_BIND_OUTPUT, q);
    gr_bind(g, cnt, GR_BIND_INPUT, q);
    return g;
}

/* every_subqueue: each of the 8 subqueues gets exactly one instance, fed or not (none
 * fed, some, all), and a fed one sees all its packets; without it only the fed ones
 * run. Asking for it on a stage that is not instanced, or on a set with dynamic keys,
 * is refused at launch. */
static void test_every_subqueue(void)
{
    static const uint32_t masks[] = {0x00, 0x92, 0xff};
    for (unsigned w = 1; w <= 3; w++)
        for (int m = 0; m < 3; m++)
            for (int every = 0; every <= 1; every++) {
                every_params p = {.fed_mask = masks[m], .per_lane = 40};
                gr_graph *g = every_graph(&p, every, true, false);
                CHECK(run(g, w) == GR_OK);
                CHECK(atomic_load(&p.bad) == 0);
                uint32_t runs = 0;
                for (int lane = 0; lane < EVERY_LANES; lane++) {
                    bool fed = masks[m] >> lane & 1;
                    uint32_t ran = atomic_load(&p.ran[lane]), got = atomic_load(&p.got[lane]);
                    runs += ran;
                    CHECK_MSG(ran == (fed || every) && got == (fed ? 40u : 0u), "%u workers, "
                              "mask %#x, every %d: lane %d ran %u times, got %u packets", w,
                              masks[m], every, lane, ran, got);
                }
                const gr_stats *st = gr_get_stats(g);
                CHECK(st && st->stages[1].instances == runs);
                gr_graph_destroy(g);
            }
    every_params p = {.fed_mask = 1, .per_lane = 1};
    gr_graph *g = every_graph(&p, true, false, false);
    CHECK(gr_launch(g, NULL, NULL, 0) == GR_ERR_INVALID && strstr(gr_error(g), "not instanced"));
    gr_graph_destroy(g);
    g = every_graph(&p, true, true, true);
    CHECK(gr_launch(g, NULL, NULL, 0) == GR_ERR_INVALID && strstr(gr_error(g), "dynamic_keys"));
    gr_graph_destroy(g);
}

/* ---- Shader pipeline with push ------------------------------------------------------ */

#define ELEMS 16
typedef struct ints_pkt { uint32_t count; uint32_t v[ELEMS]; } ints_pkt;

typedef struct push_params {
    uint32_t packets;
    uint64_t sum, count;              /* written by the single collector */
    uint32_t partial_packets;
} push_params;

static void gen_ints(gr_ctx *c)
{
    push_params *p = gr_user(c);
    for (uint32_t i = 0; i < p->packets; i++) {
        gr_window w;
        gr_reserve_out(c, 0, 1, &w);
        ints_pkt *pk = w.mem;
        pk->count = ELEMS;
        for (uint32_t k = 0; k < ELEMS; k++) pk->v[k] = i * ELEMS + k;
        gr_commit_out(c, 0, 1);
    }
}

/* Pushes the multiples of 3: a variable number of elements per input packet. */
static void filter_push(gr_ctx *c)
{
    ints_pkt *in = gr_input(c, NULL);
    for (uint32_t k = 0; k < in->count; k++)
        if (in->v[k] % 3 == 0) gr_push(c, 0, &in->v[k]);
}

static void collect_ints(gr_ctx *c)
{
    push_params *p = gr_user(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        ints_pkt *pk = w.mem;
        for (uint32_t k = 0; k < pk->count; k++) p->sum += pk->v[k];
        p->count += pk->count;
        if (pk->count != ELEMS) p->partial_packets++;
        gr_commit(c, 0, 1);
    }
}

static gr_queue_desc ints_queue(const char *name, uint32_t capacity)
{
    return (gr_queue_desc){.name = name, .kind = GR_COLLECTION, .header_bytes = 4,
                           .element_bytes = 4, .elements = ELEMS, .capacity = capacity};
}

static void test_shader_push(void)
{
    for (unsigned w = 1; w <= 4; w++) {
        push_params p = {.packets = 2000};
        gr_graph *g = gr_graph_create();
        gr_queue_desc a = ints_queue("ints", 32), b = ints_queue("multiples", 32);
        int qa = gr_queue(g, &a), qb = gr_queue(g, &b);
        int gen = gr_stage(g, &(gr_stage_desc){.name = "gen", .kind = GR_THREAD, .main = gen_ints, .user = &p});
        int flt = gr_stage(g, &(gr_stage_desc){.name = "filter", .kind = GR_SHADER, .main = filter_push});
        int col = gr_stage(g, &(gr_stage_desc){.name = "collect", .kind = GR_THREAD, .main = collect_ints, .user = &p});
        gr_bind(g, gen, GR_BIND_OUTPUT, qa);
        gr_bind(g, flt, GR_BIND_INPUT, qa);
        gr_bind(g, flt, GR_BIND_PUSH, qb);
        gr_bind(g, col, GR_BIND_INPUT, qb);
        CHECK(run(g, w) == GR_OK);
        uint64_t n = (uint64_t)p.packets * ELEMS, expect_count = (n + 2) / 3;
        uint64_t expect_sum = 3 * ((expect_count - 1) * expect_count / 2);
        CHECK_MSG(p.count == expect_count, "%llu elements, expected %llu",
                  (unsigned long long)p.count, (unsigned long long)expect_count);
        CHECK(p.sum == expect_sum);
        const gr_stats *st = gr_get_stats(g);
        uint64_t flushes = 0;
        for (unsigned i = 0; st && i < st->workers; i++) flushes += st->per_worker[i].flushes;
        /* Only flushes (a worker running out of local work) send partial packets. */
        CHECK_MSG(p.partial_packets <= flushes, "%u partial packets, %llu flushes",
                  p.partial_packets, (unsigned long long)flushes);
        if (w == 1) CHECK(p.partial_packets <= 1 + flushes);
        gr_graph_destroy(g);
    }
}

/* ---- in-place reduction ------------------------------------------------------------- */

/* Sums a packet's elements into its first element, in place. */
static void reduce_inplace(gr_ctx *c)
{
    ints_pkt *in = gr_input(c, NULL);
    uint64_t s = 0;
    for (uint32_t k = 0; k < in->count; k++) s += in->v[k];
    in->v[0] = (uint32_t)s;
    in->count = 1;
}

static void sum_partials(gr_ctx *c)
{
    push_params *p = gr_user(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        ints_pkt *pk = w.mem;
        p->sum += pk->v[0];
        p->count++;
        gr_commit(c, 0, 1);
    }
}

static void test_inplace_reduction(void)
{
    for (unsigned w = 1; w <= 4; w++) {
        push_params p = {.packets = 1000};
        gr_graph *g = gr_graph_create();
        gr_queue_desc a = ints_queue("values", 16), b = ints_queue("sums", 16);
        int qa = gr_queue(g, &a), qb = gr_queue(g, &b);
        int gen = gr_stage(g, &(gr_stage_desc){.name = "gen", .kind = GR_THREAD, .main = gen_ints, .user = &p});
        int red = gr_stage(g, &(gr_stage_desc){.name = "reduce", .kind = GR_SHADER, .main = reduce_inplace});
        int sum = gr_stage(g, &(gr_stage_desc){.name = "sum", .kind = GR_THREAD, .main = sum_partials, .user = &p});
        gr_bind(g, gen, GR_BIND_OUTPUT, qa);
        gr_bind(g, red, GR_BIND_INPUT, qa);
        gr_bind(g, red, GR_BIND_INPLACE, qb);
        gr_bind(g, sum, GR_BIND_INPUT, qb);
        CHECK(run(g, w) == GR_OK);
        uint64_t n = (uint64_t)p.packets * ELEMS;
        CHECK_MSG(p.sum == n * (n - 1) / 2, "sum %llu", (unsigned long long)p.sum);
        CHECK(p.count == p.packets);
        gr_graph_destroy(g);
    }
}

/* One value per packet, 0 .. packets-1: packets a coalescing reduction can merge. */
static void gen_singles(gr_ctx *c)
{
    push_params *p = gr_user(c);
    for (uint32_t i = 0; i < p->packets; i++) {
        gr_window w;
        gr_reserve_out(c, 0, 1, &w);
        *(ints_pkt *)w.mem = (ints_pkt){1, {i}};
        gr_commit_out(c, 0, 1);
    }
}

/* In-place reduction with input coalescing (thesis §3.5.3): each task sums the packets
 * that joined its input, so fewer packets leave than came in, and the sum is whole
 * under every policy. Policies that let the producer run ahead (GRAMPS' watermark,
 * Breadth-First) leave tasks to merge on one worker (63 packets out of 1,000 at 1
 * worker); Task-Stealing runs each packet's task as soon as it is made, so it need not
 * merge any, nor need a torture run, which preempts the producer at every commit. */
static uint64_t coalesced_run(const char *sched, unsigned workers, uint32_t packets)
{
    push_params p = {.packets = packets};
    gr_graph *g = gr_graph_create();
    gr_queue_desc a = ints_queue("singles", 64), b = ints_queue("sums", 64);
    int qa = gr_queue(g, &a), qb = gr_queue(g, &b);
    int gen = gr_stage(g, &(gr_stage_desc){.name = "gen", .kind = GR_THREAD, .main = gen_singles, .user = &p});
    int red = gr_stage(g, &(gr_stage_desc){.name = "reduce", .kind = GR_SHADER, .main = reduce_inplace,
                                           .coalesce_input = true});
    int sum = gr_stage(g, &(gr_stage_desc){.name = "sum", .kind = GR_THREAD, .main = sum_partials, .user = &p});
    gr_bind(g, gen, GR_BIND_OUTPUT, qa);
    gr_bind(g, red, GR_BIND_INPUT, qa);
    gr_bind(g, red, GR_BIND_INPLACE, qb);
    gr_bind(g, sum, GR_BIND_INPUT, qb);
    gr_launch_opts o = opts_for(workers);
    o.scheduler = sched;
    gr_status st = gr_launch(g, &o, NULL, 0);
    if (st == GR_OK) st = gr_wait(g);
    CHECK_MSG(st == GR_OK, "%s", gr_error(g));
    CHECK_MSG(p.sum == (uint64_t)packets * (packets - 1) / 2, "%s, %u workers: sum %llu", sched,
              workers, (unsigned long long)p.sum);
    gr_graph_destroy(g);
    return p.count;
}

static void test_inplace_reduction_coalesces(void)
{
    static const char *const scheds[] = {"gramps", "task-stealing", "breadth-first", "static", "qes", "pss"};
    const char *torture = getenv("GRAMPS_TORTURE");   /* preempts the producer at every commit */
    bool ahead = !torture || !atoi(torture);
    for (int k = 0; k < 6; k++)
        for (unsigned w = 1; w <= 3; w++) {
            uint64_t out = coalesced_run(scheds[k], w, 1000);
            CHECK_MSG(out >= 1000 / ELEMS && out <= 1000, "%s: %llu", scheds[k], (unsigned long long)out);
            if (ahead && w == 1 && (k == 0 || k == 2))
                CHECK_MSG(out <= 1000 / 4, "%s at 1 worker: %llu packets out of 1000 in",
                          scheds[k], (unsigned long long)out);
        }
}

/* Coalescing needs an unordered Collection input and an in-place output to forward. */
static void test_coalesce_input_checked(void)
{
    gr_graph *g = gr_graph_create();
    gr_queue_desc a = ints_queue("singles", 64), b = ints_queue("sums", 64);
    int qa = gr_queue(g, &a), qb = gr_queue(g, &b);
    int gen = gr_stage(g, &(gr_stage_desc){.name = "gen", .kind = GR_THREAD, .main = gen_singles});
    int red = gr_stage(g, &(gr_stage_desc){.name = "reduce", .kind = GR_SHADER, .main = reduce_inplace,
                                           .coalesce_input = true});
    int sum = gr_stage(g, &(gr_stage_desc){.name = "sum", .kind = GR_THREAD, .main = sum_partials});
    gr_bind(g, gen, GR_BIND_OUTPUT, qa);
    gr_bind(g, red, GR_BIND_INPUT, qa);
    gr_bind(g, red, GR_BIND_OUTPUT, qb);
    gr_bind(g, sum, GR_BIND_INPUT, qb);
    gr_launch_opts o = opts_for(1);
    CHECK(gr_launch(g, &o, NULL, 0) == GR_ERR_INVALID);
    CHECK_MSG(strstr(gr_error(g), "'reduce' coalesces its input") && strstr(gr_error(g), "in-place"),
              "%s", gr_error(g));
    gr_graph_destroy(g);
}

/* ---- ordered chain Thread -> Shader -> Shader -> Thread -------------------------------- */

typedef struct seq_pkt { uint32_t seq; uint32_t payload; } seq_pkt;
typedef struct order_params { uint32_t n; uint32_t next, bad, seen; } order_params;

static void gen_seq(gr_ctx *c)
{
    order_params *p = gr_user(c);
    for (uint32_t i = 0; i < p->n; i++) {
        gr_window w;
        gr_reserve_out(c, 0, 1, &w);
        *(seq_pkt *)w.mem = (seq_pkt){i, i * 7};
        gr_commit_out(c, 0, 1);
    }
}

static void spin_for(uint32_t x)
{
    volatile uint32_t sink = 0;
    for (uint32_t k = 0; k < (x % 13) * 200; k++) sink += k;
}

/* Uneven work so tasks finish out of order; every 5th packet is dropped. */
static void shade_a(gr_ctx *c)
{
    seq_pkt *in = gr_input(c, NULL), *out = gr_output(c, 0);
    spin_for(in->seq * 2654435761u);
    *out = *in;
    out->payload += 1;
    if (in->seq % 5 == 4) gr_discard(c, 0);
}

static void shade_b(gr_ctx *c)
{
    seq_pkt *in = gr_input(c, NULL), *out = gr_output(c, 0);
    spin_for(in->seq * 40503u);
    *out = *in;
    out->payload *= 2;
}

static void check_order(gr_ctx *c)
{
    order_params *p = gr_user(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        seq_pkt *s = w.mem;
        while (p->next % 5 == 4) p->next++;
        if (s->seq != p->next || s->payload != (s->seq * 7 + 1) * 2) p->bad++;
        p->next = s->seq + 1;
        p->seen++;
        gr_commit(c, 0, 1);
    }
}

static void test_ordered_chain(void)
{
    bool bounded = gr_scheduler_bounded(NULL);
    if (!bounded) printf("note test_ordered_chain: capacity bound not checked (the %s scheduler "
                         "has no backpressure)\n", gr_scheduler_default());
    for (unsigned w = 1; w <= 8; w++) {
        order_params p = {.n = 3000};
        gr_graph *g = gr_graph_create();
        int q[3];
        const char *names[] = {"q0", "q1", "q2"};
        for (int i = 0; i < 3; i++)
            q[i] = gr_queue(g, &(gr_queue_desc){.name = names[i], .packet_bytes = sizeof(seq_pkt),
                                                .capacity = 16, .ordered = true});
        int gen = gr_stage(g, &(gr_stage_desc){.name = "gen", .kind = GR_THREAD, .main = gen_seq, .user = &p});
        int a = gr_stage(g, &(gr_stage_desc){.name = "a", .kind = GR_SHADER, .main = shade_a});
        int b = gr_stage(g, &(gr_stage_desc){.name = "b", .kind = GR_SHADER, .main = shade_b});
        int chk = gr_stage(g, &(gr_stage_desc){.name = "check", .kind = GR_THREAD, .main = check_order, .user = &p});
        gr_bind(g, gen, GR_BIND_OUTPUT, q[0]);
        gr_bind(g, a, GR_BIND_INPUT, q[0]);
        gr_bind(g, a, GR_BIND_OUTPUT, q[1]);
        gr_bind(g, b, GR_BIND_INPUT, q[1]);
        gr_bind(g, b, GR_BIND_OUTPUT, q[2]);
        gr_bind(g, chk, GR_BIND_INPUT, q[2]);
        CHECK(run(g, w) == GR_OK);
        CHECK_MSG(p.bad == 0, "%u packets out of order with %u workers", p.bad, w);
        CHECK_MSG(p.seen == p.n - p.n / 5, "%u packets seen", p.seen);
        const gr_stats *st = gr_get_stats(g);
        for (int i = 0; st && bounded && i < 3; i++) CHECK(st->queues[i].peak_subqueue_packets <= 16);
        gr_graph_destroy(g);
    }
}

/* ---- a cycle: mergesort (thesis Fig. 5.1) ------------------------------------------- */

typedef struct run_pkt { uint32_t a, b, c; } run_pkt;    /* [a,b) or merge [a,b)+[b,c) */
typedef struct sort_params {
    uint32_t n, chunk;
    int *data, *tmp;
    uint32_t *end_of;                  /* pair's table: run starting at i ends at end_of[i] */
    uint32_t *start_of;                /* run ending at i starts at start_of[i] */
    uint32_t merges;
} sort_params;

#define NONE UINT32_MAX

static void split_chunks(gr_ctx *c)
{
    sort_params *p = gr_user(c);
    for (uint32_t a = 0; a < p->n; a += p->chunk) {
        gr_window w;
        gr_reserve_out(c, 0, 1, &w);
        uint32_t b = a + p->chunk < p->n ? a + p->chunk : p->n;
        *(run_pkt *)w.mem = (run_pkt){a, b, 0};
        gr_commit_out(c, 0, 1);
    }
}

static int cmp_int(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

static void sort_chunk(gr_ctx *c)
{
    sort_params *p = gr_user(c);
    run_pkt *in = gr_input(c, NULL), *out = gr_output(c, 0);
    qsort(p->data + in->a, in->b - in->a, sizeof(int), cmp_int);
    *out = *in;
}

static void merge_runs(gr_ctx *c)
{
    sort_params *p = gr_user(c);
    run_pkt *in = gr_input(c, NULL), *out = gr_output(c, 0);
    uint32_t i = in->a, j = in->b, k = in->a;
    while (i < in->b && j < in->c) p->tmp[k++] = p->data[i] <= p->data[j] ? p->data[i++] : p->data[j++];
    while (i < in->b) p->tmp[k++] = p->data[i++];
    while (j < in->c) p->tmp[k++] = p->data[j++];
    for (k = in->a; k < in->c; k++) p->data[k] = p->tmp[k];
    *out = (run_pkt){in->a, in->c, 0};
}

/* Pairs adjacent sorted runs and sends them around the cycle to be merged. */
static void pair_runs(gr_ctx *c)
{
    sort_params *p = gr_user(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        run_pkt r = *(run_pkt *)w.mem;
        gr_commit(c, 0, 1);
        run_pkt m = {NONE, 0, 0};
        if (r.b <= p->n && p->end_of[r.b] != NONE) {          /* [a,b) + [b,c) */
            m = (run_pkt){r.a, r.b, p->end_of[r.b]};
            p->start_of[m.c] = NONE;
            p->end_of[r.b] = NONE;
        } else if (p->start_of[r.a] != NONE) {                /* [x,a) + [a,b) */
            m = (run_pkt){p->start_of[r.a], r.a, r.b};
            p->end_of[m.a] = NONE;
            p->start_of[r.a] = NONE;
        } else {
            p->end_of[r.a] = r.b;
            p->start_of[r.b] = r.a;
            continue;
        }
        gr_window o;
        gr_reserve_out(c, 0, 1, &o);
        *(run_pkt *)o.mem = m;
        gr_commit_out(c, 0, 1);
        p->merges++;
    }
}

static void test_mergesort_cycle(void)
{
    for (unsigned w = 1; w <= 4; w++) {
        sort_params p = {.n = 20011, .chunk = 250};
        p.data = malloc(p.n * sizeof(int));
        p.tmp = malloc(p.n * sizeof(int));
        p.end_of = malloc((p.n + 1) * sizeof(uint32_t));
        p.start_of = malloc((p.n + 1) * sizeof(uint32_t));
        int *ref = malloc(p.n * sizeof(int));
        uint64_t x = 88172645463325252ull;
        for (uint32_t i = 0; i < p.n; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            p.data[i] = ref[i] = (int)(x % 100000);
        }
        for (uint32_t i = 0; i <= p.n; i++) p.end_of[i] = p.start_of[i] = NONE;
        qsort(ref, p.n, sizeof(int), cmp_int);
        gr_graph *g = gr_graph_create();
        gr_queue_desc d = {.packet_bytes = sizeof(run_pkt), .capacity = 32};
        d.name = "chunks"; int qc = gr_queue(g, &d);
        d.name = "sorted"; int qs = gr_queue(g, &d);
        d.name = "merges"; int qm = gr_queue(g, &d);
        int split = gr_stage(g, &(gr_stage_desc){.name = "split", .kind = GR_THREAD, .main = split_chunks, .user = &p});
        int sort = gr_stage(g, &(gr_stage_desc){.name = "sort", .kind = GR_SHADER, .main = sort_chunk, .user = &p});
        int pair = gr_stage(g, &(gr_stage_desc){.name = "pair", .kind = GR_THREAD, .main = pair_runs, .user = &p});
        int merge = gr_stage(g, &(gr_stage_desc){.name = "merge", .kind = GR_SHADER, .main = merge_runs, .user = &p});
        gr_bind(g, split, GR_BIND_OUTPUT, qc);
        gr_bind(g, sort, GR_BIND_INPUT, qc);
        gr_bind(g, sort, GR_BIND_OUTPUT, qs);
        gr_bind(g, pair, GR_BIND_INPUT, qs);
        gr_bind(g, pair, GR_BIND_OUTPUT, qm);
        gr_bind(g, merge, GR_BIND_INPUT, qm);
        gr_bind(g, merge, GR_BIND_OUTPUT, qs);
        CHECK(run(g, w) == GR_OK);
        uint32_t chunks = (p.n + p.chunk - 1) / p.chunk;
        CHECK_MSG(p.merges == chunks - 1, "%u merges for %u chunks", p.merges, chunks);
        CHECK(memcmp(p.data, ref, p.n * sizeof(int)) == 0);
        gr_graph_destroy(g);
        free(p.data); free(p.tmp); free(p.end_of); free(p.start_of); free(ref);
    }
}

/* ---- barrier reserve and backpressure ------------------------------------------------ */

typedef struct barrier_params { uint32_t n, got; gr_status first, second; } barrier_params;

static void gen_n(gr_ctx *c)
{
    barrier_params *p = gr_user(c);
    for (uint32_t i = 0; i < p->n; i++) {
        gr_window w;
        gr_reserve_out(c, 0, 1, &w);
        *(uint32_t *)w.mem = i;
        gr_commit_out(c, 0, 1);
    }
}

static void barrier_consumer(gr_ctx *c)
{
    barrier_params *p = gr_user(c);
    gr_window w;
    p->first = gr_reserve(c, 0, GR_ALL, &w);
    p->got = w.packets;
    for (uint32_t i = 0; i < w.packets; i++)
        if (((uint32_t *)w.mem)[i] != i) p->got = 0;
    gr_commit(c, 0, w.packets);
    p->second = gr_reserve(c, 0, GR_ALL, &w);
}

static void test_barrier_reserve(void)
{
    for (unsigned w = 1; w <= 3; w++) {
        barrier_params p = {.n = 500};
        gr_graph *g = gr_graph_create();
        int q = gr_queue(g, &(gr_queue_desc){.name = "q", .packet_bytes = 4, .capacity = 600});
        int gen = gr_stage(g, &(gr_stage_desc){.name = "gen", .kind = GR_THREAD, .main = gen_n, .user = &p});
        int con = gr_stage(g, &(gr_stage_desc){.name = "barrier", .kind = GR_THREAD, .main = barrier_consumer, .user = &p});
        gr_bind(g, gen, GR_BIND_OUTPUT, q);
        gr_bind(g, con, GR_BIND_INPUT, q);
        CHECK(run(g, w) == GR_OK);
        CHECK(p.first == GR_SHORT && p.got == p.n && p.second == GR_NOMORE);
        gr_graph_destroy(g);
    }
}

static void slow_consumer(gr_ctx *c)
{
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        spin_for(*(uint32_t *)w.mem);
        gr_commit(c, 0, 1);
    }
}

static void pass_through(gr_ctx *c)
{
    *(uint32_t *)gr_output(c, 0) = *(uint32_t *)gr_input(c, NULL);
}

/* gen -> to-shader (cap 3) -> pass -> to-thread (cap 2) -> slow: stages 0, 1, 2. */
static gr_graph *backpressure_graph(barrier_params *p)
{
    gr_graph *g = gr_graph_create();
    int q1 = gr_queue(g, &(gr_queue_desc){.name = "to-shader", .packet_bytes = 4, .capacity = 3});
    int q2 = gr_queue(g, &(gr_queue_desc){.name = "to-thread", .packet_bytes = 4, .capacity = 2});
    int gen = gr_stage(g, &(gr_stage_desc){.name = "gen", .kind = GR_THREAD, .main = gen_n, .user = p});
    int sh = gr_stage(g, &(gr_stage_desc){.name = "pass", .kind = GR_SHADER, .main = pass_through});
    int con = gr_stage(g, &(gr_stage_desc){.name = "slow", .kind = GR_THREAD, .main = slow_consumer});
    gr_bind(g, gen, GR_BIND_OUTPUT, q1);
    gr_bind(g, sh, GR_BIND_INPUT, q1);
    gr_bind(g, sh, GR_BIND_OUTPUT, q2);
    gr_bind(g, con, GR_BIND_INPUT, q2);
    return g;
}

/* Peaks never exceed capacities: the most space ever reserved (exact, an upper bound of
 * the held count) and the sampled peak below it. */
static void test_backpressure(void)
{
    if (!gr_scheduler_bounded(NULL))
        SKIP("the %s scheduler has no backpressure: capacities are not bounds by design",
             gr_scheduler_default());
    for (unsigned w = 1; w <= 4; w++) {
        barrier_params p = {.n = 3000};
        gr_graph *g = backpressure_graph(&p);
        CHECK(run(g, w) == GR_OK);
        const gr_stats *st = gr_get_stats(g);
        CHECK(st != NULL);
        for (int i = 0; st && i < st->nqueues; i++)
            CHECK_MSG(st->queues[i].reserved_peak_packets <= st->queues[i].capacity &&
                      st->queues[i].peak_packets <= st->queues[i].reserved_peak_packets,
                      "queue %s peak %llu, reserved %llu, capacity %u", st->queues[i].name,
                      (unsigned long long)st->queues[i].peak_packets,
                      (unsigned long long)st->queues[i].reserved_peak_packets, st->queues[i].capacity);
        CHECK(st && st->queues[1].packets == p.n);
        gr_graph_destroy(g);
    }
}

/* A cycle's entry stays bounded: gen -> loop (cap 4) -> Shader "again" -> back into loop
 * (its backward binding) or on to "out". Only the backward binding is exempt from
 * backpressure; gen's forward binding to the same queue waits while it is full, so the
 * queue holds at most its capacity plus one pre-reserved output per running task. With
 * the exemption per queue instead of per binding, gen filled it with all its packets. */
typedef struct { uint32_t round, value; } loop_pkt;

static void gen_loop(gr_ctx *c)
{
    barrier_params *p = gr_user(c);
    for (uint32_t i = 0; i < p->n; i++) {
        gr_window w;
        gr_reserve_out(c, 0, 1, &w);
        *(loop_pkt *)w.mem = (loop_pkt){0, i};
        gr_commit_out(c, 0, 1);
    }
}

static void go_round(gr_ctx *c)
{
    loop_pkt in = *(const loop_pkt *)gr_input(c, NULL);
    int go = in.round < 2 ? 0 : 1;
    in.round++;
    *(loop_pkt *)gr_output(c, go) = in;
    gr_discard(c, 1 - go);
}

static void collect_loop(gr_ctx *c)
{
    barrier_params *p = gr_user(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        const loop_pkt *k = w.mem;
        if (k->round == 3) p->got++;
        gr_commit(c, 0, 1);
    }
}

static void test_cycle_entry_backpressure(void)
{
    if (!gr_scheduler_bounded(NULL))
        SKIP("the %s scheduler has no backpressure: capacities are not bounds by design",
             gr_scheduler_default());
    for (unsigned w = 1; w <= 4; w++) {
        barrier_params p = {.n = 2000};
        gr_graph *g = gr_graph_create();
        int loop = gr_queue(g, &(gr_queue_desc){.name = "loop", .packet_bytes = 8, .capacity = 4});
        int out = gr_queue(g, &(gr_queue_desc){.name = "out", .packet_bytes = 8, .capacity = 8});
        int gen = gr_stage(g, &(gr_stage_desc){.name = "gen", .kind = GR_THREAD, .main = gen_loop, .user = &p});
        int again = gr_stage(g, &(gr_stage_desc){.name = "again", .kind = GR_SHADER, .main = go_round});
        int col = gr_stage(g, &(gr_stage_desc){.name = "collect", .kind = GR_THREAD, .main = collect_loop,
                                               .user = &p});
        gr_bind(g, gen, GR_BIND_OUTPUT, loop);
        gr_bind(g, again, GR_BIND_INPUT, loop);
        gr_bind(g, again, GR_BIND_OUTPUT, loop);      /* backward: the way round */
        gr_bind(g, again, GR_BIND_OUTPUT, out);
        gr_bind(g, col, GR_BIND_INPUT, out);
        CHECK(run(g, w) == GR_OK);
        CHECK(p.got == p.n);
        const gr_stats *st = gr_get_stats(g);
        CHECK(st != NULL);
        if (st)
            CHECK_MSG(st->queues[loop].reserved_peak_packets <= 4 + w, "%u workers: cycle queue "
                      "peak %llu, capacity 4", w,
                      (unsigned long long)st->queues[loop].reserved_peak_packets);
        gr_graph_destroy(g);
    }
}

/* ---- 10,000 dynamic keys --------------------------------------------------------------- */

static void gen_many_keys(gr_ctx *c)
{
    sr_params *p = gr_user(c);
    for (uint32_t i = 0; i < p->values; i++) {
        gr_window w;
        gr_reserve_out_key(c, 0, 1, (uint64_t)(i % p->lanes) * 1000003u + 17, &w);
        *(uint32_t *)w.mem = i;
        gr_commit_out(c, 0, 1);
    }
}

static void reduce_many(gr_ctx *c)
{
    sr_params *p = gr_user(c);
    gr_window w;
    uint32_t lane = (uint32_t)((gr_key(c) - 17) / 1000003u), i = 0;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        if (*(uint32_t *)w.mem != lane + i * p->lanes) atomic_fetch_add(&p->bad, 1);
        i++;
        gr_commit(c, 0, 1);
    }
    if (i != p->values / p->lanes) atomic_fetch_add(&p->bad, 1);
    atomic_fetch_add(&p->lanes_seen, 1);
}

/* Under ThreadSanitizer every live fiber also has shadow mappings, and 10,000 blocked
 * instances at once exceed the kernel's mapping limit; the sanitizer run uses 2,000. */
#if defined(__SANITIZE_THREAD__)
#define MANY_KEYS 2000
#else
#define MANY_KEYS 10000
#endif

static void test_ten_thousand_keys(void)
{
    for (unsigned w = 1; w <= 4; w *= 2) {
        sr_params p = {.values = 3 * MANY_KEYS, .lanes = MANY_KEYS};
        gr_graph *g = gr_graph_create();
        int q = gr_queue(g, &(gr_queue_desc){.name = "keys", .packet_bytes = 4, .capacity = 4,
                                             .dynamic_keys = true, .max_keys = 16384});
        int gen = gr_stage(g, &(gr_stage_desc){.name = "gen", .kind = GR_THREAD, .main = gen_many_keys, .user = &p});
        int red = gr_stage(g, &(gr_stage_desc){.name = "reduce", .kind = GR_THREAD, .main = reduce_many,
                                               .user = &p, .instanced = true});
        gr_bind(g, gen, GR_BIND_OUTPUT, q);
        gr_bind(g, red, GR_BIND_INPUT, q);
        gr_launch_opts o = opts_for(w);
        o.stack_bytes = 64 * 1024;
        CHECK(gr_launch(g, &o, NULL, 0) == GR_OK && gr_wait(g) == GR_OK);
        CHECK_MSG(atomic_load(&p.bad) == 0, "%u bad", atomic_load(&p.bad));
        CHECK(atomic_load(&p.lanes_seen) == p.lanes);
        const gr_stats *st = gr_get_stats(g);
        CHECK(st && st->queues[0].subqueues == p.lanes && st->stages[red].instances == p.lanes);
        gr_graph_destroy(g);
    }
}

/* ---- statistics, journal and DOT outputs ------------------------------------------------ */

static char *slurp(FILE *f)
{
    long n = ftell(f);
    char *buf = calloc(1, (size_t)n + 1);
    rewind(f);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) buf[0] = 0;
    return buf;
}

static void test_statistics_outputs(void)
{
    barrier_params p = {.n = 3000};
    gr_graph *g = backpressure_graph(&p);
    const int gen = 0, sh = 1, q2 = 1;
    gr_launch_opts o = {.workers = 2, .journal = true};
    CHECK(gr_launch(g, &o, NULL, 0) == GR_OK && gr_wait(g) == GR_OK);
    const gr_stats *st = gr_get_stats(g);
    CHECK(st && st->stages[sh].tasks == p.n && st->queues[q2].packets == p.n);
    CHECK(st && st->stages[sh].priority > st->stages[gen].priority);    /* consumers above */
    double total = 0;
    for (unsigned i = 0; st && i < st->workers; i++)
        total += st->per_worker[i].app_ms + st->per_worker[i].queue_ms + st->per_worker[i].sched_ms +
                 st->per_worker[i].idle_ms;
    CHECK(st && total > 0 && total <= st->wall_ms * st->workers * 1.05 + 1);
    FILE *f = tmpfile();
    gr_stats_write_json(g, f);
    char *json = slurp(f);
    CHECK(strstr(json, "\"queues\"") && strstr(json, "\"to-thread\"") && strstr(json, "\"no_work_ms\""));
    free(json);
    fclose(f);
    f = tmpfile();
    CHECK(gr_journal_write(g, f) == 0);
    json = slurp(f);
    CHECK(strstr(json, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [") == json &&
          strstr(json, "\"name\": \"pass\"") && strstr(json, "\"ph\": \"X\"") &&
          strstr(json, "\"args\": {\"name\": \"worker 0\"}"));
    free(json);
    fclose(f);
    f = tmpfile();
    gr_graph_dot(g, f);
    json = slurp(f);
    CHECK(strstr(json, "digraph") && strstr(json, "to-shader") && strstr(json, "peak"));
    free(json);
    fclose(f);
    gr_graph_destroy(g);
}

/* A producer fills a capacity-8 queue at once; the consumer then sleeps before
 * draining it. The queue is full for at least the sleep, so its time-averaged depth is
 * at least 8 x sleep / run time, less the sampling's granularity: checked against half
 * the sleep, since on a loaded machine (load 16) the sampling thread can wait tens of
 * milliseconds for a core (a full sleep less 10 ms failed there once), and
 * the sampled footprint sees all 8 packets, whether the samples come from an idle
 * worker (2 workers) or, while the only worker sleeps inside the consumer, from the
 * watchdog (1 worker). */
#define FULL_SLEEP_MS 100
static void fill_eight(gr_ctx *c)
{
    gr_window w;
    for (int i = 0; i < 8; i++) {
        gr_reserve_out(c, 0, 1, &w);
        gr_commit_out(c, 0, 1);
    }
}

static void sleep_then_drain(gr_ctx *c)
{
    gr_window w;
    struct timespec ts = {0, FULL_SLEEP_MS * 1000 * 1000};
    if (gr_reserve(c, 0, 8, &w) != GR_OK) return;
    nanosleep(&ts, NULL);
    gr_commit(c, 0, 8);
    while (gr_reserve(c, 0, 1, &w) == GR_OK) gr_commit(c, 0, 1);
}

static void test_time_averaged_depth(void)
{
    for (unsigned workers = 1; workers <= 2; workers++) {
        gr_graph *g = gr_graph_create();
        int q = gr_queue(g, &(gr_queue_desc){.name = "q", .packet_bytes = 100, .capacity = 8});
        int gen = gr_stage(g, &(gr_stage_desc){.name = "fill", .kind = GR_THREAD, .main = fill_eight});
        int sink = gr_stage(g, &(gr_stage_desc){.name = "drain", .kind = GR_THREAD, .main = sleep_then_drain});
        gr_bind(g, gen, GR_BIND_OUTPUT, q);
        gr_bind(g, sink, GR_BIND_INPUT, q);
        CHECK(run(g, workers) == GR_OK);
        const gr_stats *st = gr_get_stats(g);
        CHECK(st != NULL);
        if (st) {
            CHECK(st->queues[q].peak_packets == 8);
            double least = 8.0 * (FULL_SLEEP_MS / 2) / st->wall_ms;
            CHECK_MSG(st->queues[q].avg_packets >= least && st->queues[q].avg_packets <= 8.0,
                      "%u workers: average depth %.2f, expected %.2f..8 (run %.1f ms)", workers,
                      st->queues[q].avg_packets, least, st->wall_ms);
            CHECK(st->peak_footprint_bytes == 8 * st->queues[q].packet_bytes);
        }
        gr_graph_destroy(g);
    }
}

int main(void)
{
    RUN(test_statistics_outputs);
    RUN(test_time_averaged_depth);
    RUN(test_set_reduce_keyed);
    RUN(test_set_reduce_static);
    RUN(test_every_subqueue);
    RUN(test_shader_push);
    RUN(test_inplace_reduction);
    RUN(test_inplace_reduction_coalesces);
    RUN(test_coalesce_input_checked);
    RUN(test_ordered_chain);
    RUN(test_mergesort_cycle);
    RUN(test_barrier_reserve);
    RUN(test_backpressure);
    RUN(test_cycle_entry_backpressure);
    RUN(test_ten_thousand_keys);
    return check_finish();
}
