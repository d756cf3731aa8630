/* packets.h — the packet formats of the ray-tracing stages, for graph files and
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
#include "raytracer/trace.h"
#include "raytracer/ray.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#define PLRT_HDR 16

typedef struct plrt_tile { int x0, y0, x1, y1; } plrt_tile;                  /* rt.tile */
typedef struct plrt_sample { uint32_t pixel; float px, py; uint32_t pad; } plrt_sample; /* rt.samples */

/* rt.rays: a ray and, once Intersect has filled it in place, its hit. Camera rays
 * start with hit.prim = PLRT_UNTRACED, past any mesh's triangles (that many would take
 * 48 GB of indices), which Shade refuses: a graph that skips Intersect fails by name
 * instead of shading garbage. */
#define PLRT_UNTRACED (RT_NO_HIT - 1)
/* `cone` is the ray's footprint (raytracer/ray.h: rt_cone), which picks the texture level
 * of detail at its hit; `layers` counts the blended surfaces the ray has gone through
 * since its camera ray or reflection began (a ray that continues through an
 * SC_ALPHA_BLEND surface keeps its depth and gets layers + 1; at most PLRT_MAX_LAYERS).
 * Both live in what was padding: the element stays 80 bytes. */
#define PLRT_MAX_LAYERS 32
typedef struct plrt_ray {
    rt_ray ray;
    float weight[3];
    uint32_t pixel, depth;
    rt_hit hit;
    rt_cone cone;
    uint32_t layers;                      /* 80 bytes: elements stay 16-byte aligned */
} plrt_ray;
_Static_assert(sizeof(plrt_ray) == 80, "rt.rays elements stay 80 bytes");

/* The spread of the camera rays' cones for frame f (raytracer/ray.h: per unit of t):
 * one pixel's side on the image plane at distance 1 along the view axis, 2 tan(fovy /
 * 2) / height (Ray Tracing Gems ch. 20, eq. 30, without its arctangent), whatever the
 * samples per pixel. */
static inline float plrt_camera_spread(const pl_frame *f)
{
    return 2.0f * f->camera.half_h / (float)f->height;
}

/* rt.shadow-rays: a ray toward a light and what the light adds if it is unoccluded. */
typedef struct plrt_shadow { rt_ray ray; float color[3]; uint32_t pixel; } plrt_shadow;

/* rt.sample-runs: the samples of one rt.samples packet, as the Tiler cuts them: `count`
 * samples of `tile` from sample `first` of its 8x8 block at (bx, by) on. A tile's samples
 * go block by block (row-major, clipped to the tile), pixel by pixel (row-major) within
 * a block and sample by sample within a pixel; a run may go on into the next blocks. */
typedef struct plrt_sample_run { plrt_tile tile; int bx, by; uint32_t first, count; } plrt_sample_run;
#define PLRT_BLOCK 8

/* rt.contributions: a pixel and the RGB to add to it. rt.blend turns each value into
 * fixed point (plrt_to_fixed, sums.h) and sums integers: the same float always gives the same
 * integer, and integer sums do not depend on the order, so neither does the image.
 * Floats rather than fixed point keep the packets half as large (16 bytes an element):
 * they cross from the workers that shade to those that blend. */
typedef struct plrt_contrib { uint32_t pixel; float v[3]; } plrt_contrib;

static inline void *plrt_elems(void *packet) { return (char *)packet + PLRT_HDR; }

static inline void plrt_set_contrib(plrt_contrib *k, uint32_t pixel, const float rgb[3])
{
    *k = (plrt_contrib){pixel, {rgb[0], rgb[1], rgb[2]}};
}

/* Contributions go to a queue set with one rt.blend instance per subqueue; its size is a
 * power of two, 2^n. The `span` pixel indices of the frame's region (from `first`, its
 * top-left pixel's, through its bottom-right pixel's) are cut into 2^n contiguous bands
 * of nearly equal size (by a multiply and shift, not a division per contribution); a
 * pixel's subqueue is its band's. So every contribution to a pixel reaches the same
 * instance, instances add into disjoint pixels and need no locks, and each clears and
 * encodes its own band, a contiguous stretch of rows. A packet's pixels (an 8x8 block,
 * or runs of neighbours) mostly share a band: one push per packet.
 * A plain queue (no set) has mask 0: everything goes to key 0, which it ignores. */
typedef struct plrt_blend_keys {
    uint32_t first, span, mask;
    uint32_t shift;                       /* a contribution's pixel is its index >> shift:
                                             0, or log2(msaa) for the hybrid's per-sample
                                             sums (pixel * msaa + slot) */
    uint64_t scale;                       /* 2^32 bands / span, rounded down */
} plrt_blend_keys;

/* The keys for frame f's region and an output bound to a set of `subqueues` (0: a plain
 * queue), shift 0; false when that is not a power of two. */
GR_API bool plrt_blend_keys_of(const pl_frame *f, uint32_t subqueues, plrt_blend_keys *k);

/* A task's contributions, gathered to be pushed in runs of one key (gr_push_key_n): one
 * push per run instead of one per contribution. A task makes at most one per ray of its
 * input packet, so RT_PACKET_MAX of them. */
typedef struct plrt_contribs { uint32_t n; plrt_blend_keys keys; plrt_contrib k[RT_PACKET_MAX]; } plrt_contribs;

/* Empties b for those keys (not `= {0}`: that would clear all 2 KiB per task). */
static inline void plrt_contribs_start(plrt_contribs *b, const plrt_blend_keys *keys)
{
    b->n = 0;
    b->keys = *keys;
}

static inline void plrt_add_contrib(plrt_contribs *b, uint32_t pixel, const float rgb[3])
{
    plrt_set_contrib(&b->k[b->n++], pixel, rgb);
}

/* Pushes them to output `output`, each run of equal keys at once (a packet's pixels are
 * neighbours, so runs are long), and empties b. */
GR_API void plrt_push_contribs(gr_ctx *c, int output, plrt_contribs *b);

/* For a batch (gr_stage_desc.set_pushes): the keys the contributions of the n elements
 * at `elements` (`stride` bytes apart, each with its pixel at byte `pixel_at`) go to, at
 * most one contribution per element; how many keys, or GR_SET_PUSHES_UNKNOWN when more
 * than GR_SET_PUSHES_MAX. */
GR_API uint32_t plrt_contrib_pushes(const plrt_blend_keys *keys, const void *elements, size_t stride,
                                    size_t pixel_at, uint32_t n, gr_set_push *pushes);

#endif
