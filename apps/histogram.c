/* histogram.c — MapReduce's image histogram (Phoenix; thesis ch. 5, Sanchez §V), with a
 * combiner or reduce-only:
 *
 *   split -> chunks -> map -> pairs -> combine (in place) -> combined -> reduce
 *   split -> chunks -> map -> pairs -> reduce                  (combine = 0)
 *
 * The input is `values` pixel values in [0, bins), skewed towards low bins (a product of
 * two hashes), in a read-only buffer. split (Thread) cuts it into chunks of `chunk`
 * values; map (Shader) counts its chunk and outputs a packet of (bin, count) pairs, one
 * per bin it saw; combine (Shader, in-place, coalescing its input: gr_stage_desc.
 * coalesce_input) gets several map packets joined into one, as many as fit in a packet
 * of 4 x bins pairs, merges the pairs that share a bin and forwards the packet, so
 * reduce (Thread) reads fewer packets and adds fewer pairs; reduce sums every pair into
 * the histogram. With combine = 2 (the default) combine recirculates its results
 * (gr_stage_desc.recirculate, the thesis' full parallel reduction): they join and go
 * round again until one packet of at most `bins` pairs remains, the only one reduce
 * reads. Integer sums: any order gives the same histogram. */
#include "apps/apps.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { P_VALUES, P_BINS, P_CHUNK, P_COMBINE, P_SEED };
#define HG_MAX_BINS 4096
#define HG_PACKET_BINS 4                  /* a pair packet holds 4 x bins pairs */

typedef struct hg_chunk { uint32_t first, count; } hg_chunk;
typedef struct hg_pair { uint32_t bin, count; } hg_pair;
typedef struct hg_pairs { uint32_t count, pad; hg_pair p[]; } hg_pairs;   /* a Collection */

typedef struct hg_state {
    uint32_t values, bins, chunk;
    uint64_t seed;
    int input;                            /* buffer id of the uint16 values */
    uint64_t *histogram;                  /* reduce's result */
    uint64_t pairs_reduced;               /* reduce's: the pairs it added */
    uint64_t packets_reduced;             /* and the packets they came in */
} hg_state;

static uint16_t hg_value(const hg_state *s, uint32_t i)
{
    uint32_t h = ap_hash(s->seed, i);
    return (uint16_t)((h & 0xffff) % s->bins * ((h >> 16) % s->bins) / s->bins);
}

static void split_main(gr_ctx *c)
{
    const hg_state *s = gr_user(c);
    for (uint32_t first = 0; first < s->values; first += s->chunk) {
        gr_window w;
        gr_reserve_out(c, 0, 1, &w);
        uint32_t left = s->values - first;
        *(hg_chunk *)w.mem = (hg_chunk){first, left < s->chunk ? left : s->chunk};
        gr_commit_out(c, 0, 1);
    }
}

static void map_main(gr_ctx *c)
{
    const hg_state *s = gr_user(c);
    const hg_chunk *k = gr_input(c, NULL);
    const uint16_t *v = gr_buf(c, 0, NULL);
    uint32_t counts[HG_MAX_BINS] = {0};
    for (uint32_t i = k->first; i < k->first + k->count; i++) counts[v[i]]++;
    hg_pairs *out = gr_output(c, 0);
    out->count = 0;
    for (uint32_t b = 0; b < s->bins; b++)
        if (counts[b]) out->p[out->count++] = (hg_pair){b, counts[b]};
}

static int by_bin(const void *a, const void *b)
{
    uint32_t x = ((const hg_pair *)a)->bin, y = ((const hg_pair *)b)->bin;
    return (x > y) - (x < y);
}

/* Merges the packet's pairs that share a bin: sorted by bin, runs summed. */
static void combine_main(gr_ctx *c)
{
    hg_pairs *in = gr_input(c, NULL);
    qsort(in->p, in->count, sizeof *in->p, by_bin);
    uint32_t n = 0;
    for (uint32_t i = 0; i < in->count; i++) {
        if (n && in->p[n - 1].bin == in->p[i].bin) in->p[n - 1].count += in->p[i].count;
        else in->p[n++] = in->p[i];
    }
    in->count = n;
}

static void reduce_main(gr_ctx *c)
{
    hg_state *s = gr_user(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        const hg_pairs *pk = w.mem;
        gr_assert(c, pk->count <= HG_PACKET_BINS * s->bins);
        s->pairs_reduced += pk->count;
        s->packets_reduced++;
        for (uint32_t i = 0; i < pk->count; i++) {
            gr_assert(c, pk->p[i].bin < s->bins);
            s->histogram[pk->p[i].bin] += pk->p[i].count;
        }
        gr_commit(c, 0, 1);
    }
}

static gr_queue_desc pairs_queue(const char *name, uint32_t bins)
{
    return (gr_queue_desc){.name = name, .kind = GR_COLLECTION, .header_bytes = 8,
                           .element_bytes = sizeof(hg_pair), .elements = HG_PACKET_BINS * bins,
                           .capacity = 64};
}

static void hg_destroy(void *p)
{
    hg_state *s = p;
    if (s) free(s->histogram);
    free(s);
}

static void add_stages(gr_graph *g, hg_state *s, int64_t combine)
{
    int chunks = gr_queue(g, &(gr_queue_desc){.name = "chunks", .packet_bytes = sizeof(hg_chunk),
                                              .capacity = 64});
    gr_queue_desc pd = pairs_queue("pairs", s->bins), cd = pairs_queue("combined", s->bins);
    int pairs = gr_queue(g, &pd), combined = combine ? gr_queue(g, &cd) : pairs;
    int split = gr_stage(g, &(gr_stage_desc){.name = "split", .kind = GR_THREAD, .main = split_main, .user = s});
    int map = gr_stage(g, &(gr_stage_desc){.name = "map", .kind = GR_SHADER, .main = map_main, .user = s});
    int reduce = gr_stage(g, &(gr_stage_desc){.name = "reduce", .kind = GR_THREAD, .main = reduce_main, .user = s});
    gr_bind(g, split, GR_BIND_OUTPUT, chunks);
    gr_bind(g, map, GR_BIND_INPUT, chunks);
    gr_bind_buffer(g, map, s->input);
    gr_bind(g, map, GR_BIND_OUTPUT, pairs);
    if (combine) {
        int comb = gr_stage(g, &(gr_stage_desc){.name = "combine", .kind = GR_SHADER, .main = combine_main,
                                                .user = s, .coalesce_input = true,
                                                .recirculate = combine == 2});
        gr_bind(g, comb, GR_BIND_INPUT, pairs);
        gr_bind(g, comb, GR_BIND_INPLACE, combined);
    }
    gr_bind(g, reduce, GR_BIND_INPUT, combined);
}

static void *hg_build(gr_graph *g, const int64_t *v, char err[AP_MSG_MAX])
{
    hg_state *s = calloc(1, sizeof *s);
    uint16_t *input = s ? malloc((size_t)v[P_VALUES] * sizeof *input) : NULL;
    if (s) s->histogram = calloc((size_t)v[P_BINS], sizeof *s->histogram);
    if (!input || !s->histogram) {
        free(input);
        hg_destroy(s);
        snprintf(err, AP_MSG_MAX, "histogram: out of memory for %" PRId64 " values", v[P_VALUES]);
        return NULL;
    }
    s->values = (uint32_t)v[P_VALUES];
    s->bins = (uint32_t)v[P_BINS];
    s->chunk = (uint32_t)v[P_CHUNK];
    s->seed = (uint64_t)v[P_SEED];
    for (uint32_t i = 0; i < s->values; i++) input[i] = hg_value(s, i);
    s->input = gr_buffer(g, "pixels", (size_t)s->values * sizeof *input, input, false);
    free(input);
    add_stages(g, s, v[P_COMBINE]);
    if (*gr_error(g)) {
        snprintf(err, AP_MSG_MAX, "histogram: %s", gr_error(g));
        hg_destroy(s);
        return NULL;
    }
    return s;
}

static int hg_check(void *p, gr_graph *g, char line[AP_MSG_MAX])
{
    (void)g;
    const hg_state *s = p;
    uint64_t *serial = calloc(s->bins, sizeof *serial);
    if (!serial) { snprintf(line, AP_MSG_MAX, "histogram: out of memory for the check"); return -1; }
    for (uint32_t i = 0; i < s->values; i++) serial[hg_value(s, i)]++;
    uint32_t top = 0, bad = s->bins;
    for (uint32_t b = 0; b < s->bins; b++) {
        if (serial[b] != s->histogram[b] && bad == s->bins) bad = b;
        if (serial[b] > serial[top]) top = b;
    }
    if (bad < s->bins)
        snprintf(line, AP_MSG_MAX, "histogram: bin %" PRIu32 " holds %" PRIu64 ", the serial "
                 "histogram %" PRIu64, bad, s->histogram[bad], serial[bad]);
    else
        snprintf(line, AP_MSG_MAX, "histogram: %" PRIu32 " values into %" PRIu32 " bins, the "
                 "fullest bin %" PRIu32 " with %" PRIu64 ", %" PRIu64 " pairs reduced from %"
                 PRIu64 " packet%s; equal to the serial histogram", s->values, s->bins, top,
                 serial[top], s->pairs_reduced, s->packets_reduced,
                 s->packets_reduced == 1 ? "" : "s");
    free(serial);
    return bad < s->bins ? -1 : 0;
}

static const ap_param hg_params[] = {
    [P_VALUES] = {"values", 1 << 20, 1, 1 << 28, "pixel values to count"},
    [P_BINS] = {"bins", 256, 1, HG_MAX_BINS, "histogram bins"},
    [P_CHUNK] = {"chunk", 4096, 1, 1 << 24, "values per map task"},
    [P_COMBINE] = {"combine", 2, 0, 2, "2: combine merges map packets and recirculates its results down to one packet; "
                   "1: combine merges map packets and forwards each result to reduce; 0: reduce-only"},
    [P_SEED] = {"seed", 1, 0, INT32_MAX, "the input's hash seed"},
};

const ap_app ap_histogram = {
    "histogram", "MapReduce image histogram: map counts chunks, combine merges pairs, reduce sums",
    hg_params, 5, hg_build, hg_check, hg_destroy};
