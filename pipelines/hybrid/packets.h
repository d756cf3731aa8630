/* packets.h — the packet formats of the Extended Direct3D graph's rays and contributions
 * (pipelines/graphs/hybrid.graph), for graph files and plugin stages.
 *
 * hybrid.rays: one queue carries every ray the pixel shaders push, of every kind, so
 * that Trace fills its packets from all of them (push-coalesced: the runtime packs the
 * rays of many PS and PS2 tasks into full packets). A ray is the ray tracer's rt.rays
 * element (pipelines/raytrace/packets.h), its kind and its draw-order layer:
 *  - PLH_SHADOW: toward a light; `weight` is the light's term at the surface, which the
 *    pixel gets if nothing is in the way. Trace resolves it: when the ray is unoccluded
 *    it sends `weight` (scaled by what blended surfaces let through) to the Output
 *    Merger, and it passes no shadow ray on.
 *  - PLH_REFLECTION: a mirror ray, depth one more than its surface's;
 *  - PLH_THROUGH: the ray on through a blended surface (same depth, layers + 1).
 *    Trace fills in the closest hit of both, in place, for PS2 to shade.
 *  - PLH_BEHIND: with msaa > 1, what one sample of a blended surface of the camera
 *    ray's sees behind it, found by PS or PS2 (the sample's ray on through the surface):
 *    the camera ray through the pixel centre and its hit on what it met, the slot the
 *    sample's own, for PS2 to shade as the raster graphs shade a fragment (at the pixel
 *    centre). Trace passes it on untouched.
 *
 * hybrid.contributions: what a fragment adds to its slot (its pixel, or with msaa > 1
 * pixel * msaa + its first sample: fragments.h) in one draw-order layer. Blended surfaces
 * are blended as the raster graphs blend them (pipelines/raster/alpha.h): each blended
 * surface the camera ray meets in front of the opaque one is a layer of its own, summed
 * apart, and the Output Merger (hybrid.om) blends the layers' 8-bit colours over the
 * base layer's (the opaque surface and everything its rays bring, or the background) in
 * primitive order, each with its alpha byte. Rays carry the layer their contributions go
 * to; a ray that `begins` a layer (a camera ray, or a ray on through a layer, with one
 * sample per pixel) hands its hit the layer: a blended surface's own, else the base. */
#ifndef PIPELINES_HYBRID_PACKETS_H
#define PIPELINES_HYBRID_PACKETS_H

#include "pipelines/raytrace/packets.h"

typedef enum plh_ray_kind { PLH_SHADOW, PLH_REFLECTION, PLH_THROUGH, PLH_BEHIND, PLH_KINDS } plh_ray_kind;

/* A draw-order layer of a slot: 0 the base, p + 1 the fragment of blended primitive p,
 * with its alpha byte (255 for the base); `begins` as above. */
typedef struct plh_layer {
    uint32_t layer, alpha8, begins;
} plh_layer;

#define PLH_BASE_LAYER ((plh_layer){0, 255, 0})

/* A ray in the queue: the rt.rays element's fields (pipelines/raytrace/packets.h) but with
 * its depth, blended-layer count, kind and draw-order layer's alpha byte and `begins`
 * packed into one word (plh_ray_pack), so that an element is 80 bytes, not 96: most of
 * what the queue carries are shadow rays, each written by PS, copied into a packet and
 * read by Trace. Depth fits its 7 bits (PL_MAX_BOUNCES 64), layers its 6
 * (PLRT_MAX_LAYERS 32). */
typedef struct plh_ray {
    rt_ray ray;
    float weight[3];
    uint32_t pixel;
    rt_hit hit;
    rt_cone cone;
    uint32_t layer;                       /* plh_layer.layer */
    uint32_t bits;                        /* kind, begins, alpha8, layers, depth: PLH_BITS_* */
} plh_ray;
_Static_assert(sizeof(plh_ray) == 80, "hybrid.rays elements stay 80 bytes (16-byte aligned)");

enum { PLH_BITS_BEGINS = 2, PLH_BITS_ALPHA = 3, PLH_BITS_LAYERS = 11, PLH_BITS_DEPTH = 17 };
_Static_assert(PLH_KINDS <= 4 && PLRT_MAX_LAYERS < 64 && PL_MAX_BOUNCES < 128, "plh_ray.bits holds them");

static inline plh_ray_kind plh_ray_kind_of(const plh_ray *p)
{
    return (plh_ray_kind)(p->bits & 3u);
}

static inline plh_layer plh_ray_layer_of(const plh_ray *p)
{
    return (plh_layer){p->layer, (p->bits >> PLH_BITS_ALPHA) & 255u, (p->bits >> PLH_BITS_BEGINS) & 1u};
}

/* The packed word of a ray of `kind` carrying `layer` (depth, layers and alpha8 in range). */
static inline uint32_t plh_ray_bits(plh_ray_kind kind, plh_layer layer, uint32_t layers, uint32_t depth)
{
    return (uint32_t)kind | (layer.begins ? 1u : 0u) << PLH_BITS_BEGINS | (layer.alpha8 & 255u) << PLH_BITS_ALPHA |
           layers << PLH_BITS_LAYERS | depth << PLH_BITS_DEPTH;
}

/* r as a queue element of `kind` carrying `layer`. */
static inline plh_ray plh_ray_pack(const plrt_ray *r, plh_ray_kind kind, plh_layer layer)
{
    return (plh_ray){r->ray, {r->weight[0], r->weight[1], r->weight[2]}, r->pixel, r->hit, r->cone,
                     layer.layer, plh_ray_bits(kind, layer, r->layers, r->depth)};
}

/* Element p as the ray tracer's ray (its kind and layer: plh_ray_kind_of, plh_ray_layer_of). */
static inline plrt_ray plh_ray_unpack(const plh_ray *p)
{
    return (plrt_ray){p->ray, {p->weight[0], p->weight[1], p->weight[2]}, p->pixel, p->bits >> PLH_BITS_DEPTH,
                      p->hit, p->cone, (p->bits >> PLH_BITS_LAYERS) & 63u};
}

/* hybrid.contributions: RGB (floats, summed in fixed point by hybrid.om as rt.blend sums
 * rt.contributions) for layer `layer` of slot `index`, whose alpha byte is alpha8. */
typedef struct plh_contrib {
    uint32_t index, layer;
    float v[3];
    uint32_t alpha8;
} plh_contrib;
_Static_assert(sizeof(plh_contrib) == 24, "hybrid.contributions elements stay 24 bytes");

#endif
