/* Packet traversal for coherent rays: closest hit and any hit (see packet.h).
 *
 * Data flow: rt_ray[n] -> pkt (structure-of-arrays inverse directions, origin*inverse,
 * directions, per-lane t ranges; packet-wide intervals of origins and inverse directions)
 * -> per inner node: one interval test culls the node's children for the whole packet,
 * then each surviving child is checked against groups of rays starting at the packet's
 * first active group until one group enters it (that group becomes the child's first
 * active group) -> per leaf: the rays from the first active group on are tested against
 * the leaf box a group at a time; the watertight constants of rays reaching their first
 * leaf are made a group at a time; each ray inside runs the leaf test (leaf.h) ->
 * rt_hit[] or occlusion flags.
 *
 * Why this scheme (first-active-ray traversal, Wald et al. 2001, plus the interval
 * arithmetic culling of Wald, Boulos and Shirley 2007): in a coherent packet a node's
 * children are usually entered by the first group tested, so an inner node costs about
 * one slab test per child instead of one per ray, and children the packet misses are
 * rejected by a single interval test. It needs all rays to share direction signs (one
 * near/far plane choice per axis), and it pays only while they enter the same boxes.
 * Packets without the one or the other (reflections, shadow rays from reflection hits:
 * mixed signs, or origins spread over the scene) go as a stream instead
 * (bvh_traverse.h), each ray tested alone at each node its rays reach; on those, the
 * packet's wide intervals and first-active scans cost more than they save.
 *
 * The scheme is the template packet_tmp.h at two widths: 4 lanes and 4 children at a
 * time over the 4-wide nodes (SSE2), or 8 and 8 over the 8-wide nodes (AVX2, when
 * rt_bvh.isa says so; compiled with function attributes), with the same results. */
#include "raytracer/packet.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "raytracer/bvh_traverse.h"

/* Where a packet's rays lie: ray i is the rt_ray at byte i * stride of base (its tmin
 * `tmin` where tmin_given, whatever the record holds in that word). */
typedef struct rt_ray_src {
    const char *base;
    size_t stride;
    int tmin_given;
    float tmin;
} rt_ray_src;

static inline const rt_ray *ray_at(const rt_ray_src *s, int i)
{
    return (const rt_ray *)(s->base + (size_t)i * s->stride);
}

/* A packet's lanes and state, filled by TAG(pkt_init) and read by the traversal. */
typedef struct pkt {
    float ix[RT_PACKET_MAX], iy[RT_PACKET_MAX], iz[RT_PACKET_MAX];
    float oix[RT_PACKET_MAX], oiy[RT_PACKET_MAX], oiz[RT_PACKET_MAX];
    float dx[RT_PACKET_MAX], dy[RT_PACKET_MAX], dz[RT_PACKET_MAX];  /* directions */
    float tmin[RT_PACKET_MAX];  /* +inf on padding and invalid lanes: never enter a box */
    float tmax[RT_PACKET_MAX];  /* current limit: the best hit so far, -inf once done */
    rt_wtray w[RT_PACKET_MAX];      /* watertight constants, made at the first leaf */
    rt_hit best[RT_PACKET_MAX];     /* closest hit so far, from the first leaf on */
    uint64_t wready;                /* lanes whose w and best are set */
    rt_ray_src src;
    uint8_t *occluded;          /* any-hit output, NULL for closest hit */
    int n;
    float tmax_max;             /* the largest tmax of a live lane */
    float max_spread;           /* origins further apart: incoherent (set_intervals) */
    uint64_t live;              /* rays still searching (any hit) */
} __attribute__((aligned(64))) pkt;

/* The lane arrays are read and written with aligned 8-lane loads and stores. */
_Static_assert(_Alignof(pkt) % 32 == 0 && offsetof(pkt, ix) % 32 == 0 &&
                   offsetof(pkt, iy) % 32 == 0 && offsetof(pkt, iz) % 32 == 0 &&
                   offsetof(pkt, oix) % 32 == 0 && offsetof(pkt, oiy) % 32 == 0 &&
                   offsetof(pkt, oiz) % 32 == 0 && offsetof(pkt, dx) % 32 == 0 &&
                   offsetof(pkt, dy) % 32 == 0 && offsetof(pkt, dz) % 32 == 0 &&
                   offsetof(pkt, tmin) % 32 == 0 && offsetof(pkt, tmax) % 32 == 0,
               "pkt lane arrays must be 32-byte aligned");
/* load_rays reads a ray as 8 floats. */
_Static_assert(sizeof(rt_ray) == 8 * sizeof(float) && offsetof(rt_ray, tmin) == 12 &&
                   offsetof(rt_ray, dir) == 16 && offsetof(rt_ray, tmax) == 28,
               "rt_ray must be org, tmin, dir, tmax");

/* Traversal stack entry. first counts lane groups of the width's size. */
typedef struct pentry {
    uint32_t ref;
    uint32_t parent;            /* node holding ref's box: leaves need it for their mask */
    float dist;                 /* packet-wide lower bound of the entry distance */
    uint8_t first, slot;
} pentry;

/* Padding lanes: an invalid ray (tmin > tmax), so reading never leaves the caller's array. */
static const rt_ray pad_ray = {{0, 0, 0}, INFINITY, {1, 1, 1}, -INFINITY};

/* Ray k of s from ray i on: `strided` a constant where the loads are inlined, so that an
 * rt_ray array (not strided: s->stride is sizeof(rt_ray), no tmin given) is indexed with
 * a constant stride. */
RT_INLINE const float *ray_row(const rt_ray_src *s, int i, int k, int n, int strided)
{
    if (i + k >= n) return pad_ray.org;
    if (!strided) return ((const rt_ray *)s->base)[i + k].org;
    return (const float *)(s->base + (size_t)(i + k) * s->stride);
}

/* Rays i..i+3 as structure of arrays: c[0..2] origin, c[3] tmin, c[4..6] direction,
 * c[7] tmax. A given tmin leaves padding lanes invalid: their tmax is -inf. */
RT_INLINE void load_rays4(const rt_ray_src *s, int i, int n, vf4 c[8], int strided)
{
    for (int k = 0; k < 4; k++) {
        const float *r = ray_row(s, i, k, n, strided);
        c[k] = _mm_loadu_ps(r);           /* org[0..2], tmin */
        c[4 + k] = _mm_loadu_ps(r + 4);   /* dir[0..2], tmax */
    }
    _MM_TRANSPOSE4_PS(c[0], c[1], c[2], c[3]);
    _MM_TRANSPOSE4_PS(c[4], c[5], c[6], c[7]);
    if (strided && s->tmin_given) c[3] = _mm_set1_ps(s->tmin);
}

/* Rays i..i+7 likewise: eight 8-float rows transposed. */
RT_AVX2_INLINE void load_rays8(const rt_ray_src *s, int i, int n, vf8 c[8], int strided)
{
    for (int k = 0; k < 8; k++) c[k] = _mm256_loadu_ps(ray_row(s, i, k, n, strided));
    v8_transpose8(c);
    if (strided && s->tmin_given) c[3] = _mm256_set1_ps(s->tmin);
}

#define RT_W 4
#include "raytracer/packet_tmp.h"
#undef RT_W
#define RT_W 8
#include "raytracer/packet_tmp.h"
#undef RT_W

/* Packets whose origins spread over more than this share of the scene's diagonal go as
 * streams: rays from far-apart points (shadow rays from reflection hits) enter few of the
 * same boxes, and the packet's wide intervals cull little. Chosen on frames of four
 * meshes, timing both paths on every packet (docs/performance.md). */
#define RT_PACKET_MAX_SPREAD 0.1f

static rt_hit miss(const rt_ray *r) { return (rt_hit){r->tmax, 0.0f, 0.0f, RT_NO_HIT}; }

/* Origins further apart than this go as a stream. */
static float max_spread(const rt_bvh *bvh)
{
    float d2 = 0.0f;
    for (int a = 0; a < 3; a++)
        if (bvh->hi[a] > bvh->lo[a]) d2 += (bvh->hi[a] - bvh->lo[a]) * (bvh->hi[a] - bvh->lo[a]);
    return RT_PACKET_MAX_SPREAD * sqrtf(d2);
}

/* Traces s's rays [0, n) as one packet with the kernels of bvh->isa (isa.h); returns 0,
 * having traced nothing, when the packet is incoherent. occluded must be zeroed. */
static int trace_packet(const rt_bvh *bvh, const rt_ray_src *s, int n, rt_hit *hits,
                        uint8_t *occluded, rt_packet_stats *st)
{
    pkt p;
    p.max_spread = max_spread(bvh);
    const int strided = s->stride != sizeof(rt_ray) || s->tmin_given;
    int traced;
    if (bvh->isa == RT_ISA_AVX2)
        traced = strided ? packet_trace_strided8(bvh, &p, s, n, occluded, st)
                         : packet_trace8(bvh, &p, s, n, occluded, st);
    else
        traced = strided ? packet_trace_strided4(bvh, &p, s, n, occluded, st)
                         : packet_trace4(bvh, &p, s, n, occluded, st);
    const rt_ray *rays = (const rt_ray *)s->base;   /* closest hits: rt_ray arrays only */
    for (int i = 0; traced && !occluded && i < n; i++)
        hits[i] = p.wready >> i & 1 ? p.best[i] : miss(&rays[i]);
    return traced;
}

/* An incoherent packet as a stream: the stream kernels take an rt_ray array, so rays
 * in a caller's records are copied into one first. */
static void trace_stream(const rt_bvh *bvh, const rt_ray_src *s, int n, rt_hit *hits, uint8_t *occluded)
{
    rt_ray copy[RT_PACKET_MAX];
    const rt_ray *rays = (const rt_ray *)s->base;
    if (s->stride != sizeof(rt_ray) || s->tmin_given) {
        for (int i = 0; i < n; i++) copy[i] = *ray_at(s, i);
        for (int i = 0; s->tmin_given && i < n; i++) copy[i].tmin = s->tmin;
        rays = copy;
    }
    if (occluded) rt_occluded_stream(bvh, rays, n, occluded);
    else rt_intersect_stream(bvh, rays, n, hits);
}

static void chunk(const rt_bvh *bvh, const rt_ray_src *s, int n, rt_hit *hits,
                  uint8_t *occluded, rt_packet_stats *st)
{
    st->packets++;
    st->rays += (uint64_t)n;
    if (occluded) memset(occluded, 0, (size_t)n);
    if (bvh->root == RT_EMPTY_REF) {
        for (int i = 0; hits && i < n; i++) hits[i] = miss(&((const rt_ray *)s->base)[i]);
        return;
    }
    if (trace_packet(bvh, s, n, hits, occluded, st)) return;
    st->streamed_packets++;
    trace_stream(bvh, s, n, hits, occluded);
}

void rt_intersect_packet(const rt_bvh *bvh, const rt_ray *rays, int n, rt_hit *hits,
                         rt_packet_stats *stats)
{
    rt_packet_stats local = {0};
    rt_packet_stats *st = stats ? stats : &local;
    for (int i = 0; i < n; i += RT_PACKET_MAX) {
        const int m = n - i < RT_PACKET_MAX ? n - i : RT_PACKET_MAX;
        const rt_ray_src s = {(const char *)(rays + i), sizeof *rays, 0, 0.0f};
        chunk(bvh, &s, m, hits + i, NULL, st);
    }
}

/* Occlusion flags of the rays of s [0, n), in chunks of RT_PACKET_MAX. */
static void occluded_chunks(const rt_bvh *bvh, const rt_ray_src *s, int n, uint8_t *occluded,
                            rt_packet_stats *stats)
{
    rt_packet_stats local = {0};
    rt_packet_stats *st = stats ? stats : &local;
    for (int i = 0; i < n; i += RT_PACKET_MAX) {
        const int m = n - i < RT_PACKET_MAX ? n - i : RT_PACKET_MAX;
        const rt_ray_src at = {s->base + (size_t)i * s->stride, s->stride, s->tmin_given, s->tmin};
        chunk(bvh, &at, m, NULL, occluded + i, st);
    }
}

void rt_occluded_packet(const rt_bvh *bvh, const rt_ray *rays, int n, uint8_t *occluded,
                        rt_packet_stats *stats)
{
    occluded_chunks(bvh, &(rt_ray_src){(const char *)rays, sizeof *rays, 0, 0.0f}, n, occluded, stats);
}

void rt_occluded_strided(const rt_bvh *bvh, const void *records, size_t stride, float tmin, int n,
                         uint8_t *occluded, rt_packet_stats *stats)
{
    occluded_chunks(bvh, &(rt_ray_src){records, stride, 1, tmin}, n, occluded, stats);
}

void rt_packet_stats_print(const rt_packet_stats *s, const char *name, FILE *out)
{
    const double pk = s->packets ? (double)s->packets : 1.0;
    const double nv = s->node_visits ? (double)s->node_visits : 1.0;
    const double lv = s->leaf_visits ? (double)s->leaf_visits : 1.0;
    fprintf(out,
            "packets %s: %llu packets of %.1f rays, %.1f%% traced as streams; per packet %.1f node "
            "and %.1f leaf visits; lanes from first active: %.1f at nodes, %.1f at leaves; "
            "rays entering a visited leaf: %.1f (%.0f%% of those lanes)\n",
            name ? name : "", (unsigned long long)s->packets, (double)s->rays / pk,
            100.0 * (double)s->streamed_packets / pk, (double)s->node_visits / pk,
            (double)s->leaf_visits / pk, (double)s->node_lanes / nv,
            (double)s->leaf_lanes / lv, (double)s->leaf_active / lv,
            s->leaf_lanes ? 100.0 * (double)s->leaf_active / (double)s->leaf_lanes : 0.0);
}
