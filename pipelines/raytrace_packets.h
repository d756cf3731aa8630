/* raytrace_packets.h — the packet formats of the ray-tracing stages, for graph files and
 * for plugin stages that read or make them (examples/plugins/ao.c).
 *
 * Every format but rt.tile is a Collection with a 16-byte header (element count first)
 * so elements stay 16-byte aligned. A ray carries its pixel, depth and weight; a
 * contribution is (pixel, RGB in PL_FIXED_ONE fixed point), summed by rt.blend in
 * integers, so the image is the same whatever order contributions arrive in and
 * whichever Blend instance adds them. */
#ifndef PIPELINES_RAYTRACE_PACKETS_H
#define PIPELINES_RAYTRACE_PACKETS_H

#include "gramps/gramps.h"
#include "pipelines/frame.h"
#include "raytracer/packet.h"
#include "raytracer/ray.h"

#include <emmintrin.h>

#define RTP_HDR 16

typedef struct rtp_tile { int x0, y0, x1, y1; } rtp_tile;                  /* rt.tile */
typedef struct rtp_sample { uint32_t pixel; float px, py; uint32_t pad; } rtp_sample; /* rt.samples */

/* rt.rays: a ray and, once Intersect has filled it in place, its hit. */
typedef struct rtp_ray {
    rt_ray ray;
    float weight[3];
    uint32_t pixel, depth;
    rt_hit hit;
    uint32_t pad[3];                      /* 80 bytes: elements stay 16-byte aligned */
} rtp_ray;

/* rt.shadow-rays: a ray toward a light and what the light adds if it is unoccluded. */
typedef struct rtp_shadow { rt_ray ray; float color[3]; uint32_t pixel; } rtp_shadow;

/* rt.sample-runs: the samples of one rt.samples packet, as the Tiler cuts them: `count`
 * samples of `tile` from sample `first` of its 8x8 block at (bx, by) on. A tile's samples
 * go block by block (row-major, clipped to the tile), pixel by pixel (row-major) within
 * a block and sample by sample within a pixel; a run may go on into the next blocks. */
typedef struct rtp_sample_run { rtp_tile tile; int bx, by; uint32_t first, count; } rtp_sample_run;
#define RTP_BLOCK 8

/* rt.contributions: converted to fixed point where they are made, so Blend only adds. */
typedef struct rtp_contrib { uint32_t pixel, pad; int64_t v[3]; } rtp_contrib;

static inline void *rtp_elems(void *packet) { return (char *)packet + RTP_HDR; }

/* The fixed point of a float, rounded to nearest even: what llrint gives (glibc's x86-64
 * llrint is this instruction), without the library call. A contribution is clamped to
 * +-RTP_CONTRIB_MAX (NaN counts as 0) so Blend's int64 sums cannot overflow: 2^16 * 2^24
 * per contribution leaves room for 2^23 contributions to one pixel, more than --spp 4096
 * x (--bounces 64 + 1) x (lights + 1) can make. A pixel is white at 1. */
#define RTP_CONTRIB_MAX 65536.0
static inline int64_t rtp_to_fixed(float x)
{
    double d = (double)x;
    if (!(d >= -RTP_CONTRIB_MAX && d <= RTP_CONTRIB_MAX))   /* out of range or NaN: rare */
        d = d > 0 ? RTP_CONTRIB_MAX : d < 0 ? -RTP_CONTRIB_MAX : 0.0;
    return _mm_cvtsd_si64(_mm_set_sd(d * PL_FIXED_ONE));
}

static inline void rtp_set_contrib(rtp_contrib *k, uint32_t pixel, const float rgb[3])
{
    k->pixel = pixel;
    k->pad = 0;
    for (int ch = 0; ch < 3; ch++) k->v[ch] = rtp_to_fixed(rgb[ch]);
}

/* Contributions go to a queue set with one rt.blend instance per subqueue; its size is a
 * power of two, 2^n. A pixel's subqueue is that of its run of 8 consecutive pixels,
 * runs dealt round-robin: every contribution to a pixel reaches the same instance, so
 * instances add into disjoint pixels and need no locks. Neighbouring runs go to
 * different instances, so a region's work spreads over all of them; for a width that
 * is a multiple of 8 x 2^n, an 8x8 block is one subqueue's (one full packet).
 * A plain queue (no set) has mask 0: everything goes to key 0, which it ignores. */
static inline uint64_t rtp_blend_key(uint32_t pixel, uint32_t mask) { return (pixel >> 3) & mask; }

/* The key mask for an output bound to a set of `subqueues` (0: a plain queue); false
 * when that is not a power of two. */
static inline bool rtp_blend_mask(uint32_t subqueues, uint32_t *mask)
{
    *mask = subqueues ? subqueues - 1 : 0;
    return (subqueues & (subqueues - 1)) == 0;
}

/* A task's contributions, gathered to be pushed in runs of one key (gr_push_key_n): one
 * push per run instead of one per contribution. A task makes at most one per ray of its
 * input packet, so RT_PACKET_MAX of them. */
typedef struct rtp_contribs { uint32_t n, mask; rtp_contrib k[RT_PACKET_MAX]; } rtp_contribs;

/* Empties b for keys of that mask (not `= {0}`: that would clear all 2 KiB per task). */
static inline void rtp_contribs_start(rtp_contribs *b, uint32_t mask)
{
    b->n = 0;
    b->mask = mask;
}

static inline void rtp_add_contrib(rtp_contribs *b, uint32_t pixel, const float rgb[3])
{
    rtp_set_contrib(&b->k[b->n++], pixel, rgb);
}

/* Pushes them to output `output`, each run of equal keys at once (a packet's pixels are
 * neighbours, so runs are long), and empties b. */
static inline void rtp_push_contribs(gr_ctx *c, int output, rtp_contribs *b)
{
    for (uint32_t i = 0, j; i < b->n; i = j) {
        uint64_t key = rtp_blend_key(b->k[i].pixel, b->mask);
        for (j = i + 1; j < b->n && rtp_blend_key(b->k[j].pixel, b->mask) == key; j++) {}
        gr_push_key_n(c, output, key, &b->k[i], j - i);
    }
    b->n = 0;
}

#endif
