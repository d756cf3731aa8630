/* mergesort.c — spawn-sync merge sort (thesis ch. 5, Sanchez §V) with its merge loop:
 *
 *   split -> leaves -> sort -> sorted -> control -> merges -> merge -> sorted (a cycle)
 *
 * The input is `values` 32-bit keys in a read-write buffer. split (Thread) cuts it into
 * leaves of `chunk` keys; sort (Shader) sorts a leaf in place and reports it on `sorted`;
 * control (Thread) keeps which nodes of the merge tree are sorted and, once both halves
 * of a node are (or its only half, at the ragged right edge), sends the node's merge;
 * merge (Shader) merges the two halves from the buffer of their level into the buffer of
 * the next (levels alternate between two buffers) and reports the node back to control.
 * A merge of more than `part` keys is split into parts of `part` output keys, each a
 * merge task that finds where its output range starts in both halves (a binary search,
 * the merge path's co-rank) and merges from there; control counts a node's parts back
 * before it counts the node sorted, so the large merges near the root run in parallel
 * (our reading of Sanchez's second loop; part = 0: one task per merge).
 * The sorted keys are those of the root's level's buffer. Sorting has one answer, so any
 * order of tasks gives the same bits as the serial sort (qsort) it is checked against. */
#include "apps/apps.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { P_VALUES, P_CHUNK, P_PART, P_SEED };
#define MS_MAX_LEVELS 40

typedef struct ms_range { uint32_t first, count; } ms_range;                 /* a leaf */
typedef struct ms_node { uint32_t level, index; } ms_node;                    /* sorted */
/* A merge part: output keys [first + k0, first + k1) of the node's merge of [first, mid)
 * and [mid, last). */
typedef struct ms_merge { ms_node node; uint32_t first, mid, last, k0, k1; } ms_merge;

typedef struct ms_state {
    uint32_t values, chunk, part, levels; /* levels: the root is at levels - 1 */
    uint32_t nodes[MS_MAX_LEVELS];        /* nodes per level */
    uint64_t seed;
    int keys[2];                          /* the two buffers levels alternate between */
    uint8_t *done[MS_MAX_LEVELS];         /* control's: which nodes are sorted */
    uint32_t *parts_left[MS_MAX_LEVELS];  /* control's: merge parts not yet reported */
} ms_state;

static uint32_t key_at(const ms_state *s, uint32_t i) { return ap_hash(s->seed, i); }

static uint32_t node_end(const ms_state *s, uint32_t level, uint32_t index)
{
    uint64_t end = ((uint64_t)index + 1) * s->chunk << level;
    return end < s->values ? (uint32_t)end : s->values;
}

static void split_main(gr_ctx *c)
{
    const ms_state *s = gr_user(c);
    for (uint32_t first = 0; first < s->values; first += s->chunk) {
        gr_window w;
        gr_reserve_out(c, 0, 1, &w);
        uint32_t left = s->values - first;
        *(ms_range *)w.mem = (ms_range){first, left < s->chunk ? left : s->chunk};
        gr_commit_out(c, 0, 1);
    }
}

static int by_key(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void sort_main(gr_ctx *c)
{
    const ms_state *s = gr_user(c);
    const ms_range *r = gr_input(c, NULL);
    uint32_t *keys = gr_buf(c, 0, NULL);
    qsort(keys + r->first, r->count, sizeof *keys, by_key);
    *(ms_node *)gr_output(c, 0) = (ms_node){0, r->first / s->chunk};
}

/* How many of the first k keys of the merge of a[0, na) and b[0, nb) come from a (ties
 * go to a first, as the merge takes them). */
static uint32_t co_rank(const uint32_t *a, uint32_t na, const uint32_t *b, uint32_t nb, uint32_t k)
{
    uint32_t lo = k > nb ? k - nb : 0, hi = k < na ? k : na;
    while (lo < hi) {
        uint32_t i = lo + (hi - lo) / 2;
        if (a[i] <= b[k - i - 1]) lo = i + 1;
        else hi = i;
    }
    return lo;
}

static void merge_main(gr_ctx *c)
{
    const ms_merge *m = gr_input(c, NULL);
    const uint32_t *from = gr_buf(c, (m->node.level - 1) % 2, NULL);
    uint32_t *to = gr_buf(c, m->node.level % 2, NULL);
    const uint32_t *a = from + m->first, *b = from + m->mid;
    uint32_t na = m->mid - m->first, nb = m->last - m->mid;
    uint32_t i0 = co_rank(a, na, b, nb, m->k0), i1 = co_rank(a, na, b, nb, m->k1);
    uint32_t i = m->first + i0, j = m->mid + (m->k0 - i0), k = m->first + m->k0;
    uint32_t i_end = m->first + i1, j_end = m->mid + (m->k1 - i1);
    while (i < i_end && j < j_end) to[k++] = from[j] < from[i] ? from[j++] : from[i++];
    while (i < i_end) to[k++] = from[i++];
    while (j < j_end) to[k++] = from[j++];
    *(ms_node *)gr_output(c, 0) = m->node;
}

/* The number of parts a merge of n keys is split into. */
static uint32_t parts_of(const ms_state *s, uint32_t n)
{
    return s->part && n > s->part ? (n + s->part - 1) / s->part : 1;
}

/* Marks node n sorted; 1 when it is the root, else sends its parent's merge when its
 * sibling is sorted too or has no sibling. */
static int node_sorted(gr_ctx *c, ms_state *s, ms_node n)
{
    gr_assert(c, n.level < s->levels && n.index < s->nodes[n.level] && !s->done[n.level][n.index]);
    if (n.level > 0 && --s->parts_left[n.level][n.index] > 0) return 0;   /* more parts to come */
    if (n.level == s->levels - 1) return 1;
    s->done[n.level][n.index] = 1;
    uint32_t left = n.index & ~1u, right = left + 1;
    if (!s->done[n.level][left] || (right < s->nodes[n.level] && !s->done[n.level][right])) return 0;
    uint32_t first = (uint32_t)(((uint64_t)left * s->chunk) << n.level);
    ms_merge m = {{n.level + 1, left / 2}, first, node_end(s, n.level, left),
                  node_end(s, n.level + 1, left / 2), 0, 0};
    uint32_t total = m.last - m.first, parts = parts_of(s, total);
    s->parts_left[m.node.level][m.node.index] = parts;
    for (uint32_t p = 0; p < parts; p++) {
        gr_window w;
        gr_reserve_out(c, 0, 1, &w);
        m.k0 = (uint32_t)((uint64_t)total * p / parts);
        m.k1 = (uint32_t)((uint64_t)total * (p + 1) / parts);
        *(ms_merge *)w.mem = m;
        gr_commit_out(c, 0, 1);
    }
    return 0;
}

static void control_main(gr_ctx *c)
{
    ms_state *s = gr_user(c);
    gr_window w;
    int root = 0;
    while (!root) {
        gr_assert(c, gr_reserve(c, 0, 1, &w) == GR_OK);
        root = node_sorted(c, s, *(const ms_node *)w.mem);
        gr_commit(c, 0, 1);
    }
}

static void add_stages(gr_graph *g, ms_state *s)
{
    int leaves = gr_queue(g, &(gr_queue_desc){.name = "leaves", .packet_bytes = sizeof(ms_range)});
    int sorted = gr_queue(g, &(gr_queue_desc){.name = "sorted", .packet_bytes = sizeof(ms_node)});
    int merges = gr_queue(g, &(gr_queue_desc){.name = "merges", .packet_bytes = sizeof(ms_merge)});
    int split = gr_stage(g, &(gr_stage_desc){.name = "split", .kind = GR_THREAD, .main = split_main, .user = s});
    int sort = gr_stage(g, &(gr_stage_desc){.name = "sort", .kind = GR_SHADER, .main = sort_main, .user = s});
    int control = gr_stage(g, &(gr_stage_desc){.name = "control", .kind = GR_THREAD, .main = control_main, .user = s});
    int merge = gr_stage(g, &(gr_stage_desc){.name = "merge", .kind = GR_SHADER, .main = merge_main, .user = s});
    gr_bind(g, split, GR_BIND_OUTPUT, leaves);
    gr_bind(g, sort, GR_BIND_INPUT, leaves);
    gr_bind(g, sort, GR_BIND_OUTPUT, sorted);
    gr_bind_buffer(g, sort, s->keys[0]);
    gr_bind(g, control, GR_BIND_INPUT, sorted);
    gr_bind(g, control, GR_BIND_OUTPUT, merges);
    gr_bind(g, merge, GR_BIND_INPUT, merges);
    gr_bind(g, merge, GR_BIND_OUTPUT, sorted);
    gr_bind_buffer(g, merge, s->keys[0]);
    gr_bind_buffer(g, merge, s->keys[1]);
}

static void ms_destroy(void *p)
{
    ms_state *s = p;
    if (!s) return;
    for (int l = 0; l < MS_MAX_LEVELS; l++) {
        free(s->done[l]);
        free(s->parts_left[l]);
    }
    free(s);
}

/* The merge tree: leaves at level 0, each level half the nodes (rounded up) to one. */
static int plan_tree(ms_state *s)
{
    uint32_t n = (s->values + s->chunk - 1) / s->chunk;
    for (s->levels = 0;; n = (n + 1) / 2) {
        s->nodes[s->levels] = n;
        s->done[s->levels] = calloc(n, 1);
        s->parts_left[s->levels] = calloc(n, sizeof **s->parts_left);
        if (!s->done[s->levels] || !s->parts_left[s->levels++]) return -1;
        if (n == 1) return 0;
    }
}

static void *ms_build(gr_graph *g, const int64_t *v, char err[AP_MSG_MAX])
{
    ms_state *s = calloc(1, sizeof *s);
    uint32_t *keys = s ? malloc((size_t)v[P_VALUES] * sizeof *keys) : NULL;
    if (s) *s = (ms_state){.values = (uint32_t)v[P_VALUES], .chunk = (uint32_t)v[P_CHUNK],
                           .part = (uint32_t)v[P_PART], .seed = (uint64_t)v[P_SEED]};
    if (!keys || plan_tree(s)) {
        free(keys);
        ms_destroy(s);
        snprintf(err, AP_MSG_MAX, "mergesort: out of memory for %" PRId64 " values", v[P_VALUES]);
        return NULL;
    }
    for (uint32_t i = 0; i < s->values; i++) keys[i] = key_at(s, i);
    s->keys[0] = gr_buffer(g, "keys", (size_t)s->values * sizeof *keys, keys, true);
    s->keys[1] = gr_buffer(g, "keys-odd-levels", (size_t)s->values * sizeof *keys, NULL, true);
    free(keys);
    add_stages(g, s);
    if (*gr_error(g)) {
        snprintf(err, AP_MSG_MAX, "mergesort: %s", gr_error(g));
        ms_destroy(s);
        return NULL;
    }
    return s;
}

static int ms_check(void *p, gr_graph *g, char line[AP_MSG_MAX])
{
    const ms_state *s = p;
    const uint32_t *keys = gr_buffer_data(g, s->keys[(s->levels - 1) % 2]);
    uint32_t *serial = malloc((size_t)s->values * sizeof *serial);
    if (!serial) { snprintf(line, AP_MSG_MAX, "mergesort: out of memory for the check"); return -1; }
    for (uint32_t i = 0; i < s->values; i++) serial[i] = key_at(s, i);
    qsort(serial, s->values, sizeof *serial, by_key);
    uint32_t bad = s->values;
    for (uint32_t i = 0; i < s->values && bad == s->values; i++)
        if (keys[i] != serial[i]) bad = i;
    if (bad < s->values)
        snprintf(line, AP_MSG_MAX, "mergesort: key %" PRIu32 " is %" PRIu32 ", the serial sort's %" PRIu32,
                 bad, keys[bad], serial[bad]);
    else
        snprintf(line, AP_MSG_MAX, "mergesort: %" PRIu32 " keys in %" PRIu32 " leaves, %" PRIu32
                 " merge levels; equal to the serial sort", s->values, s->nodes[0], s->levels - 1);
    free(serial);
    return bad < s->values ? -1 : 0;
}

static const ap_param ms_params[] = {
    [P_VALUES] = {"values", 1 << 20, 1, 1 << 28, "keys to sort"},
    [P_CHUNK] = {"chunk", 4096, 1, 1 << 28, "keys per leaf sort task"},
    [P_PART] = {"part", 65536, 0, 1 << 28, "output keys per merge task (a larger merge is split); 0: one task per merge"},
    [P_SEED] = {"seed", 1, 0, INT32_MAX, "the keys' hash seed"},
};

const ap_app ap_mergesort = {
    "mergesort", "merge sort: leaves sorted in parallel, a control stage sends merges in a loop",
    ms_params, 4, ms_build, ms_check, ms_destroy};
