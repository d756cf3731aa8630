/* set_reduce_keyed.c — the thesis' set-reduce-keyed regression test (Sugerman 2010,
 * appendix A) as plugin stages, run by examples/graphs/set-reduce-keyed.graph:
 *
 *   srk.generate -> pairs -> srk.route -> values (dynamic-keyed set) -> srk.reduce[key]
 *        -> sums -> srk.sink
 *
 * srk.generate (Thread) emits the values 0 .. count-1, value i under lane i % keys, as
 * (key, value) pairs; the key of lane j is the sparse number srk_key(j), so the queue set
 * maps sparse keys to subqueues as a real program's would. srk.route (Shader) pushes each
 * value into the `values` queue set by its key (gr_push_key), creating subqueues on first
 * use. srk.reduce (Thread, instanced: one instance per subqueue) sums its key's values,
 * checking each belongs there, and sends (key, count, sum). srk.sink (Thread) collects the
 * sums, checks every lane against the closed form and, after the run, prints
 *   lane J key K: N values, sum S
 * per lane and a total. A wrong routing or sum fails the run (gr_assert).
 *
 * The thesis' reducer reserves its whole subqueue at once ("reduce-huge"); this one reads
 * a packet at a time, so no subqueue needs room for its key's whole input.
 *
 * Build, in the source tree or against an installed copy:
 *   cc -shared -fPIC $(pkg-config --cflags gramps-render) set_reduce_keyed.c -o set_reduce_keyed.so
 * Runs under gramps-run (no frame object: the stages keep everything in their own state). */
#include "compose/compose.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define HDR 8                             /* Collection header: count, pad (8-byte elements) */

typedef struct srk_pair { uint64_t key, value; } srk_pair;          /* srk.pairs element */
typedef struct srk_sum { uint64_t key, count, sum; } srk_sum;       /* srk.sums packet */

static void *elems(void *packet) { return (char *)packet + HDR; }

/* Lane j's key: sparse, never 0. */
static uint64_t srk_key(uint32_t lane) { return (uint64_t)lane * 1000003u + 17u; }

/* The lane of a key, or UINT32_MAX for a key that is no lane's. */
static uint32_t srk_lane(uint64_t key, uint32_t keys)
{
    uint64_t lane = (key - 17u) / 1000003u;
    return key >= 17u && lane < keys && srk_key((uint32_t)lane) == key ? (uint32_t)lane : UINT32_MAX;
}

/* The parameters every stage shares, and the sink's tallies. */
typedef struct srk_state {
    uint32_t count, keys, packet;         /* values, lanes, elements per output packet */
    uint64_t *lane_count, *lane_sum;      /* the sink's, per lane */
} srk_state;

static void srk_free(void *p)
{
    srk_state *s = p;
    if (!s) return;
    free(s->lane_count);
    free(s->lane_sum);
    free(s);
}

/* Values v < count with v % keys == lane: how many, and their sum (closed form). */
static uint64_t expected_count(const srk_state *s, uint32_t lane)
{
    return lane < s->count ? (s->count - lane + s->keys - 1) / s->keys : 0;
}

static uint64_t expected_sum(const srk_state *s, uint32_t lane)
{
    uint64_t n = expected_count(s, lane);
    return n * lane + (uint64_t)s->keys * (n ? n * (n - 1) / 2 : 0);
}

static void *srk_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    srk_state *s = calloc(1, sizeof *s);
    if (!s) { snprintf(err, CP_ERR_MAX, "out of memory"); return NULL; }
    s->count = (uint32_t)cp_int(i, "count");
    s->keys = (uint32_t)cp_int(i, "keys");
    return s;
}

static void *generate_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    srk_state *s = srk_create(i, err);
    if (s) s->packet = cp_port_elements(i, "out");
    return s;
}

static void *sink_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    srk_state *s = srk_create(i, err);
    if (!s) return NULL;
    s->lane_count = calloc(s->keys, sizeof *s->lane_count);
    s->lane_sum = calloc(s->keys, sizeof *s->lane_sum);
    if (s->lane_count && s->lane_sum) return s;
    srk_free(s);
    snprintf(err, CP_ERR_MAX, "out of memory");
    return NULL;
}

/* ---- generate: value v under lane v % keys, `packet` pairs per packet ------------------ */

static void generate_main(gr_ctx *c)
{
    const srk_state *s = gr_user(c);
    for (uint32_t v = 0; v < s->count;) {
        gr_window w;
        gr_reserve_out(c, 0, 1, &w);
        srk_pair *p = elems(w.mem);
        uint32_t n = 0;
        for (; n < s->packet && v < s->count; n++, v++) p[n] = (srk_pair){srk_key(v % s->keys), v};
        gr_set_count(w.mem, n);
        gr_commit_out(c, 0, 1);
    }
}

/* ---- route: each value to its key's subqueue ------------------------------------------ */

static void route_main(gr_ctx *c)
{
    void *in = gr_input(c, NULL);
    const srk_pair *p = elems(in);
    for (uint32_t i = 0; i < gr_count(in); i++) gr_push_key(c, 0, p[i].key, &p[i].value);
}

/* ---- reduce: one instance per key -------------------------------------------------------- */

static void reduce_main(gr_ctx *c)
{
    const srk_state *s = gr_user(c);
    uint64_t key = gr_key(c), lane = srk_lane(key, s->keys), count = 0, sum = 0;
    gr_assert(c, lane != UINT32_MAX);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        const uint64_t *v = elems(w.mem);
        for (uint32_t i = 0; i < gr_count(w.mem); i++) {
            gr_assert(c, v[i] % s->keys == lane);     /* routed to its own key's subqueue */
            sum += v[i];
        }
        count += gr_count(w.mem);
        gr_commit(c, 0, 1);
    }
    gr_reserve_out(c, 0, 1, &w);
    *(srk_sum *)w.mem = (srk_sum){key, count, sum};
    gr_commit_out(c, 0, 1);
}

/* ---- sink: every lane once, checked against the closed form ------------------------------ */

static void sink_main(gr_ctx *c)
{
    srk_state *s = gr_user(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        const srk_sum *r = w.mem;
        uint32_t lane = srk_lane(r->key, s->keys);
        gr_assert(c, lane != UINT32_MAX && s->lane_count[lane] == 0);
        s->lane_count[lane] = r->count;
        s->lane_sum[lane] = r->sum;
        gr_commit(c, 0, 1);
    }
    for (uint32_t j = 0; j < s->keys; j++)
        gr_assert(c, s->lane_count[j] == expected_count(s, j) && s->lane_sum[j] == expected_sum(s, j));
}

/* After a successful run (every lane checked): the result, lane by lane. */
static void sink_finish(void *state, void *frame)
{
    (void)frame;
    const srk_state *s = state;
    uint64_t count = 0, sum = 0;
    printf("set-reduce-keyed: %" PRIu32 " values over %" PRIu32 " keys\n", s->count, s->keys);
    for (uint32_t j = 0; j < s->keys; j++) {
        printf("lane %" PRIu32 " key %" PRIu64 ": %" PRIu64 " values, sum %" PRIu64 "\n", j,
               srk_key(j), s->lane_count[j], s->lane_sum[j]);
        count += s->lane_count[j];
        sum += s->lane_sum[j];
    }
    printf("total: %" PRIu64 " values, sum %" PRIu64 "\n", count, sum);
}

/* ---- the registry ------------------------------------------------------------------------ */

static const cp_format formats[] = {
    {"srk.pairs", "(key, value) pairs", GR_COLLECTION, 0, HDR, sizeof(srk_pair), 64, 4096},
    {"srk.values", "values of one key", GR_COLLECTION, 0, HDR, sizeof(uint64_t), 64, 4096},
    {"srk.sums", "a key's value count and sum", GR_OPAQUE, sizeof(srk_sum), 0, 0, 0, 0},
};

static const cp_param params[] = {
    {"count", CP_INT, "10000", 0, 100000000, "values 0 .. count-1"},
    {"keys", CP_INT, "6", 1, 65536, "lanes (distinct keys); value v goes to lane v % keys"}};

static const cp_port generate_ports[] = {{"out", GR_BIND_OUTPUT, "srk.pairs", NULL}};
static const cp_port route_ports[] = {
    {"in", GR_BIND_INPUT, "srk.pairs", NULL},
    {"out", GR_BIND_PUSH, "srk.values", "a queue set with dynamic_keys = true"}};
static const cp_port reduce_ports[] = {
    {"in", GR_BIND_INPUT, "srk.values", "the keyed queue set: one instance per key"},
    {"out", GR_BIND_OUTPUT, "srk.sums", NULL}};
static const cp_port sink_ports[] = {{"in", GR_BIND_INPUT, "srk.sums", NULL}};

static const cp_stage_type stages[] = {
    {"srk.generate", "values 0 .. count-1 as (key of lane v % keys, v)", GR_THREAD, false,
     generate_ports, 1, params, 2, generate_main, generate_create, NULL, srk_free, NULL, 0},
    {"srk.route", "pushes each value into the queue set by its key", GR_SHADER, false,
     route_ports, 2, NULL, 0, route_main, NULL, NULL, NULL, NULL, 0},
    {"srk.reduce", "sums one key's values (instanced per key)", GR_THREAD, true, reduce_ports,
     2, params, 2, reduce_main, srk_create, NULL, srk_free, NULL, 0},
    {"srk.sink", "checks every key's sum and prints them after the run", GR_THREAD, false,
     sink_ports, 1, params, 2, sink_main, sink_create, sink_finish, srk_free, NULL, 0},
};

static int register_stages(cp_registry *r, char err[CP_ERR_MAX])
{
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++)
        if (cp_register_format(r, &formats[i], err)) return -1;
    for (size_t i = 0; i < sizeof stages / sizeof *stages; i++)
        if (cp_register_stage(r, &stages[i], err)) return -1;
    return 0;
}

const cp_plugin gramps_plugin = {CP_API_VERSION, "set-reduce-keyed", register_stages};
