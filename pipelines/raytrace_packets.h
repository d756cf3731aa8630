/* raytrace_packets.h — the packet formats of the ray-tracing stages, for graph files and
 * for plugin stages that read or make them (examples/plugins/ao.c).
 *
 * Every format but rt.tile is a Collection with a 16-byte header (element count first)
 * so elements stay 16-byte aligned. A ray carries its pixel, depth and weight; a
 * contribution is (pixel, RGB in PL_FIXED_ONE fixed point), summed by rt.blend in
 * integers, so the image is the same whatever order contributions arrive in. */
#ifndef PIPELINES_RAYTRACE_PACKETS_H
#define PIPELINES_RAYTRACE_PACKETS_H

#include "pipelines/frame.h"
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

#endif
