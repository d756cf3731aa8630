/* Binned SAH splits of ranges of primitive references (Wald 2007, "On fast construction
 * of SAH-based bounding volume hierarchies"): one split at a time (rt_build_split) or a
 * whole subtree (rt_build_subtree), for the build's task rounds (bvh_tasks.c).
 *
 * Data flow: positions/indices -> primitive references (box + id) -> binning and
 * in-place partition of a range -> rt_bnode(s) of the binary tree (bvh_binary.h). No
 * threads here; calls on disjoint ranges may run at once (each partitions through its
 * own part of the scratch array).
 *
 * Determinism: every choice is a pure function of the set of references in the range
 * (boxes and bin counts are minima, maxima and sums; first best split in axis then bin
 * order; ties in fallback sorts and leaf order broken by primitive id), so the same
 * input always gives the same tree, whatever order the references are in. Costs count
 * triangle blocks of 4, as traversal tests them. */
#include "raytracer/bvh_split.h"

#include <emmintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Past this depth splits become object medians, which bounds the depth (and so the
 * traversal stacks) by RT_FORCE_MEDIAN_DEPTH + log2(n) whatever the geometry. */
#define RT_FORCE_MEDIAN_DEPTH 48

/* A primitive reference: its box as two SSE vectors (32 bytes, two per cache line while
 * partitioning). Lane 3 of lo carries the primitive id's bits, lane 3 of hi is 0. */
typedef struct pref {
    __m128 lo, hi;
} pref;

typedef struct sbox {
    __m128 lo, hi;
} sbox;

/* Bins of all three axes, filled in one pass over the references. */
typedef struct binset {
    sbox box[3][RT_MAX_BINS];
    uint32_t n[3][RT_MAX_BINS];
} binset;

typedef struct split {
    int axis, pos;          /* left side: bins [0, pos) on axis */
    float cost;             /* sum of area * blocks of the two sides */
} split;

struct rt_build_refs {
    pref *refs;
    pref *tmp;              /* partition scratch, as long as refs: a range uses its own part */
    size_t n;
};

typedef struct builder {    /* one subtree's build */
    rt_build_refs *r;
    rt_bnode *nodes;
    size_t nnodes;
    const rt_build_opts *o;
    int depth;
} builder;

typedef struct bounds {     /* a range's box and its centroid box (centroids doubled) */
    sbox box, cent;
} bounds;

/* Plain compares: fminf/fmaxf follow C's NaN rules and compile to libm calls. */
static inline float minf(float a, float b) { return a < b ? a : b; }
static inline float maxf(float a, float b) { return a > b ? a : b; }

static uint32_t pref_id(const pref *p)
{
    uint32_t id;
    float lanes[4];
    _mm_storeu_ps(lanes, p->lo);
    memcpy(&id, &lanes[3], sizeof id);
    return id;
}

/* Doubled centroid, lane 3 cleared so the id bits never enter arithmetic. */
static inline __m128 centroid2(const pref *p)
{
    const __m128 xyz = _mm_castsi128_ps(_mm_set_epi32(0, -1, -1, -1));
    return _mm_add_ps(_mm_and_ps(p->lo, xyz), p->hi);
}

static void sbox_empty(sbox *b)
{
    b->lo = _mm_set1_ps(INFINITY);
    b->hi = _mm_set1_ps(-INFINITY);
}

static inline void sbox_grow(sbox *b, __m128 lo, __m128 hi)
{
    b->lo = _mm_min_ps(b->lo, lo);
    b->hi = _mm_max_ps(b->hi, hi);
}

/* Half surface area dx*dy + dy*dz + dz*dx, without leaving the SSE registers. */
static inline float sbox_area(const sbox *b)
{
    const __m128 d = _mm_sub_ps(b->hi, b->lo);
    const __m128 p = _mm_mul_ps(d, _mm_shuffle_ps(d, d, _MM_SHUFFLE(3, 0, 2, 1)));
    return _mm_cvtss_f32(_mm_add_ss(_mm_add_ss(p, _mm_shuffle_ps(p, p, 1)),
                                    _mm_shuffle_ps(p, p, 2)));
}

static uint32_t blocks_of(uint32_t n) { return (n + 3) / 4; }

static void range_bounds(const pref *r, size_t n, bounds *bd)
{
    sbox_empty(&bd->box);
    sbox_empty(&bd->cent);
    for (size_t i = 0; i < n; i++) {
        const __m128 c = centroid2(&r[i]);
        sbox_grow(&bd->box, r[i].lo, r[i].hi);
        sbox_grow(&bd->cent, c, c);
    }
}

/* Bin coordinates of a centroid on all axes: (c - cmin) * scale, clamped to the bins.
 * Binning and partitioning both call this, so they always agree. */
static inline __m128i bin_coords(__m128 c, __m128 cmin, __m128 scale, __m128 top)
{
    const __m128 f = _mm_mul_ps(_mm_sub_ps(c, cmin), scale);
    return _mm_cvttps_epi32(_mm_min_ps(_mm_max_ps(f, _mm_setzero_ps()), top));
}

typedef struct binner {
    __m128 cmin, scale, top;
    float cmin1[4], scale1[4];  /* the same, per axis, for one-axis lookups */
} binner;

static binner make_binner(const bounds *bd, int nbins)
{
    float lo[4], hi[4], sc[4] = {0, 0, 0, 0};
    _mm_storeu_ps(lo, bd->cent.lo);
    _mm_storeu_ps(hi, bd->cent.hi);
    for (int a = 0; a < 3; a++)
        if (hi[a] > lo[a]) sc[a] = (float)nbins * 0.99999f / (hi[a] - lo[a]);
    lo[3] = 0.0f;
    binner bn = {_mm_loadu_ps(lo), _mm_loadu_ps(sc), _mm_set1_ps((float)(nbins - 1)),
                 {0}, {0}};
    memcpy(bn.cmin1, lo, sizeof lo);
    memcpy(bn.scale1, sc, sizeof sc);
    return bn;
}

static void binset_clear(binset *b, int nbins)
{
    for (int a = 0; a < 3; a++)
        for (int i = 0; i < nbins; i++) {
            sbox_empty(&b->box[a][i]);
            b->n[a][i] = 0;
        }
}

static inline void bin_one(binset *b, const binner *bn, const pref *p)
{
    int k[4];
    _mm_storeu_si128((__m128i *)k, bin_coords(centroid2(p), bn->cmin, bn->scale, bn->top));
    for (int a = 0; a < 3; a++) {
        sbox_grow(&b->box[a][k[a]], p->lo, p->hi);
        b->n[a][k[a]]++;
    }
}

/* Two bin sets, even and odd references, so consecutive references landing in the same
 * bin do not form one long chain of dependent min/max through memory. */
static void bin_range(const pref *r, size_t n, const binner *bn, int nbins, binset b[2])
{
    binset_clear(&b[0], nbins);
    binset_clear(&b[1], nbins);
    size_t i = 0;
    for (; i + 1 < n; i += 2) {
        bin_one(&b[0], bn, &r[i]);
        bin_one(&b[1], bn, &r[i + 1]);
    }
    if (i < n) bin_one(&b[0], bn, &r[i]);
    for (int a = 0; a < 3; a++)
        for (int k = 0; k < nbins; k++) {
            sbox_grow(&b[0].box[a][k], b[1].box[a][k].lo, b[1].box[a][k].hi);
            b[0].n[a][k] += b[1].n[a][k];
        }
}

/* Best split of one axis: sweep the bins from the right storing suffix areas, then
 * from the left. Only splits with both sides non-empty count; the first best wins. */
static void sweep_axis(const binset *b, int nbins, int axis, split *best)
{
    float rarea[RT_MAX_BINS];
    uint32_t rcount[RT_MAX_BINS];
    sbox acc;
    uint32_t n = 0;
    sbox_empty(&acc);
    for (int i = nbins - 1; i > 0; i--) {
        sbox_grow(&acc, b->box[axis][i].lo, b->box[axis][i].hi);
        n += b->n[axis][i];
        rarea[i] = n ? sbox_area(&acc) : 0.0f;
        rcount[i] = n;
    }
    sbox_empty(&acc);
    n = 0;
    for (int i = 1; i < nbins; i++) {
        sbox_grow(&acc, b->box[axis][i - 1].lo, b->box[axis][i - 1].hi);
        n += b->n[axis][i - 1];
        if (n == 0 || rcount[i] == 0) continue;
        const float cost = sbox_area(&acc) * (float)blocks_of(n) +
                           rarea[i] * (float)blocks_of(rcount[i]);
        if (cost < best->cost) {
            best->cost = cost;
            best->axis = axis;
            best->pos = i;
        }
    }
}

static split find_split(const pref *r, size_t n, const binner *bn, int nbins)
{
    split best = {-1, 0, INFINITY};
    binset bins[2];
    float sc[4];
    _mm_storeu_ps(sc, bn->scale);
    bin_range(r, n, bn, nbins, bins);
    for (int axis = 0; axis < 3; axis++)
        if (sc[axis] > 0.0f) sweep_axis(&bins[0], nbins, axis, &best);
    return best;
}

/* bin_coords for one axis, with the same operations on scalars (same results). */
static inline int bin_on_axis(const pref *p, const binner *bn, int axis)
{
    const float *lo = (const float *)&p->lo, *hi = (const float *)&p->hi;
    const __m128 c = _mm_set_ss(lo[axis] + hi[axis]);
    const __m128 f = _mm_mul_ss(_mm_sub_ss(c, _mm_set_ss(bn->cmin1[axis])),
                                _mm_set_ss(bn->scale1[axis]));
    return _mm_cvttss_si32(_mm_min_ss(_mm_max_ss(f, _mm_setzero_ps()), bn->top));
}

/* Partition by bin through a scratch buffer; returns the size of the left side. Each
 * reference is written to both ends and only one cursor moves: no branch on the side,
 * whose outcome is a coin toss the predictor would miss half the time. */
static size_t partition(pref *r, size_t n, const split *s, const binner *bn, pref *tmp)
{
    size_t l = 0, rr = n - 1;
    for (size_t i = 0; i < n; i++) {
        const size_t left = bin_on_axis(&r[i], bn, s->axis) < s->pos;
        tmp[l] = r[i];
        tmp[rr] = r[i];
        l += left;
        rr -= 1 - left;
    }
    memcpy(r, tmp, n * sizeof *r);
    return l;
}

static int cmp_id(const void *pa, const void *pb)
{
    const uint32_t a = pref_id(pa), b = pref_id(pb);
    return (a > b) - (a < b);
}

#define CMP_AXIS(name, axis)                                                       \
    static int name(const void *pa, const void *pb)                                \
    {                                                                              \
        float ca[4], cb[4];                                                        \
        _mm_storeu_ps(ca, centroid2(pa));                                          \
        _mm_storeu_ps(cb, centroid2(pb));                                          \
        if (ca[axis] != cb[axis]) return (ca[axis] > cb[axis]) - (ca[axis] < cb[axis]); \
        return cmp_id(pa, pb);                                                     \
    }
CMP_AXIS(cmp_x, 0)
CMP_AXIS(cmp_y, 1)
CMP_AXIS(cmp_z, 2)

/* Fallback split when binning cannot separate the range (coincident centroids) or the
 * tree got too deep: sort by centroid on the widest axis, ids breaking ties, and halve. */
static size_t median_split(pref *r, size_t n, const bounds *bd)
{
    float lo[4], hi[4];
    _mm_storeu_ps(lo, bd->cent.lo);
    _mm_storeu_ps(hi, bd->cent.hi);
    int axis = 0;
    for (int a = 1; a < 3; a++)
        if (hi[a] - lo[a] > hi[axis] - lo[axis]) axis = a;
    int (*cmp[3])(const void *, const void *) = {cmp_x, cmp_y, cmp_z};
    qsort(r, n, sizeof *r, cmp[axis]);
    return n / 2;
}

static void make_leaf(pref *r, size_t begin, size_t n, rt_bnode *node)
{
    /* Ascending ids inside a leaf: a fixed order whatever the partition did. */
    qsort(r, n, sizeof *r, cmp_id);
    node->first = (uint32_t)begin;
    node->count = (uint32_t)n;
}

/* Where to split r[0, n): the size of the left part, or 0 for a leaf. */
static size_t choose_split(const rt_build_opts *o, pref *r, size_t n, const bounds *bd,
                           int depth, pref *tmp)
{
    const int may_leaf = n <= (size_t)o->max_leaf;
    if (n == 1) return 0;
    /* One block's worth: any split costs a node visit plus at least one block test on
     * each side it is entered from, so with trav_cost >= isect_cost a leaf always wins. */
    if (may_leaf && n <= 4 && o->trav_cost >= o->isect_cost) return 0;
    if (depth < RT_FORCE_MEDIAN_DEPTH) {
        /* Small ranges get fewer bins: more bins than references cannot find more
         * splits, and clearing and sweeping the bins would dominate near the leaves. */
        const int nbins = n / 2 < (size_t)o->bins ? (n < 8 ? 4 : (int)n / 2) : o->bins;
        const binner bn = make_binner(bd, nbins);
        const split s = find_split(r, n, &bn, nbins);
        if (s.axis >= 0) {
            const float area = sbox_area(&bd->box);
            const float split_cost =
                o->trav_cost + (area > 0.0f ? o->isect_cost * s.cost / area : 0.0f);
            if (may_leaf && o->isect_cost * (float)blocks_of((uint32_t)n) <= split_cost)
                return 0;
            return partition(r, n, &s, &bn, tmp);
        }
    }
    /* No usable binned split (coincident centroids) or too deep. */
    return may_leaf ? 0 : median_split(r, n, bd);
}

size_t rt_build_split(rt_build_refs *rf, const rt_build_opts *o, size_t begin, size_t end,
                      int depth, rt_bnode *node)
{
    pref *r = rf->refs + begin;
    const size_t n = end - begin;
    bounds bd;
    range_bounds(r, n, &bd);
    float lo[4], hi[4];
    _mm_storeu_ps(lo, bd.box.lo);
    _mm_storeu_ps(hi, bd.box.hi);
    *node = (rt_bnode){0};
    memcpy(node->lo, lo, sizeof node->lo);
    memcpy(node->hi, hi, sizeof node->hi);
    const size_t nleft = choose_split(o, r, n, &bd, depth, rf->tmp + begin);
    if (nleft == 0) make_leaf(r, begin, n, node);
    return nleft;
}

/* Nodes in pre-order: each node before its left subtree, that before its right one. */
static uint32_t build_rec(builder *b, size_t begin, size_t end, int depth)
{
    const uint32_t node = (uint32_t)b->nnodes++;
    if (depth > b->depth) b->depth = depth;
    const size_t nleft = rt_build_split(b->r, b->o, begin, end, depth, &b->nodes[node]);
    if (nleft == 0) return node;
    const uint32_t left = build_rec(b, begin, begin + nleft, depth + 1);
    const uint32_t right = build_rec(b, begin + nleft, end, depth + 1);
    b->nodes[node].left = left;
    b->nodes[node].right = right;
    return node;
}

size_t rt_build_subtree(rt_build_refs *r, const rt_build_opts *o, size_t begin, size_t end,
                        int depth, rt_bnode *nodes, int *max_depth)
{
    builder b = {r, nodes, 0, o, depth};
    build_rec(&b, begin, end, depth);
    *max_depth = b.depth;
    return b.nnodes;
}

static void make_refs(pref *refs, const float *pos, const uint32_t *idx, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float lo[4], hi[4];
        const float *v0 = pos + 3 * (size_t)idx[3 * i];
        const float *v1 = pos + 3 * (size_t)idx[3 * i + 1];
        const float *v2 = pos + 3 * (size_t)idx[3 * i + 2];
        for (int a = 0; a < 3; a++) {
            lo[a] = minf(minf(v0[a], v1[a]), v2[a]);
            hi[a] = maxf(maxf(v0[a], v1[a]), v2[a]);
        }
        const uint32_t id = (uint32_t)i;
        memcpy(&lo[3], &id, sizeof id);
        hi[3] = 0.0f;
        refs[i].lo = _mm_loadu_ps(lo);
        refs[i].hi = _mm_loadu_ps(hi);
    }
}

rt_build_refs *rt_build_refs_new(const float *positions, const uint32_t *indices, size_t n)
{
    rt_build_refs *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->n = n;
    r->refs = aligned_alloc(32, n * sizeof *r->refs);
    r->tmp = aligned_alloc(32, n * sizeof *r->tmp);
    if (!r->refs || !r->tmp) {
        rt_build_refs_free(r);
        return NULL;
    }
    make_refs(r->refs, positions, indices, n);
    return r;
}

void rt_build_refs_prims(const rt_build_refs *r, uint32_t *prims)
{
    for (size_t i = 0; i < r->n; i++) prims[i] = pref_id(&r->refs[i]);
}

void rt_build_refs_free(rt_build_refs *r)
{
    if (!r) return;
    free(r->refs);
    free(r->tmp);
    free(r);
}
