/* packets.h — the packet formats of the Extended Direct3D graph's rays and contributions
 * (pipelines/graphs/hybrid.graph), for graph files and plugin stages.
 *
 * hybrid.shadow-rays: the pixel shaders' shadow rays (PLH_SHADOW), toward a light, each
 * carrying the light's term at the surface, which the pixel gets if nothing is in the
 * way. Most of the rays the shaders push are these, so they travel in a queue of their
 * own as 48-byte elements (plh_shadow), packed into full packets from every PS and PS2
 * task (push-coalesced), to hybrid.shadow, which tests them where they lie in its input
 * packet and sends the lit ones' terms (scaled by what blended surfaces let through) to
 * the Output Merger.
 *
 * hybrid.rays: every other ray the pixel shaders push, of every kind, in one queue, so
 * that Trace fills its packets from all of them. A ray is the ray tracer's rt.rays
 * element (pipelines/raytrace/packets.h), its kind and its draw-order layer:
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

#include <stddef.h>

/* The kinds of rays the pixel shaders push (counted per kind); a hybrid.rays element is
 * never a PLH_SHADOW: those are hybrid.shadow-rays'. */
typedef enum plh_ray_kind { PLH_SHADOW, PLH_REFLECTION, PLH_THROUGH, PLH_BEHIND, PLH_KINDS } plh_ray_kind;

/* A draw-order layer of a slot: 0 the base, p + 1 the fragment of blended primitive p,
 * with its alpha byte (255 for the base); `begins` as above. */
typedef struct plh_layer {
    uint32_t layer, alpha8, begins;
} plh_layer;

#define PLH_BASE_LAYER ((plh_layer){0, 255, 0})

/* A hybrid.shadow-rays element: an rt_ray's origin, direction and tmax at an rt_ray's
 * offsets (so the occlusion kernel reads it in place: rt_occluded_strided), the word of
 * its tmin, which every shadow ray starts at 0 (PLH_SHADOW_TMIN), holding the draw-order
 * layer the light's term goes to, then that term and the slot. The layer's alpha byte
 * does not travel: the surface's own term brings it to the Output Merger (its shadow
 * rays' terms come as PLH_ALPHA_LATER). */
typedef struct plh_shadow {
    float org[3];
    uint32_t layer;                       /* plh_layer.layer (begins is 0: the surface's) */
    float dir[3], tmax;
    float weight[3];
    uint32_t slot;                        /* the pixel, or fragments.h's slot */
} plh_shadow;
_Static_assert(sizeof(plh_shadow) == 48 && offsetof(plh_shadow, org) == offsetof(rt_ray, org) &&
                   offsetof(plh_shadow, dir) == offsetof(rt_ray, dir) &&
                   offsetof(plh_shadow, tmax) == offsetof(rt_ray, tmax),
               "hybrid.shadow-rays elements are 48 bytes, their ray at rt_ray's offsets");

/* The start of every shadow ray's interval (shaders/ray_shading.c offsets its origin
 * off the surface instead). */
#define PLH_SHADOW_TMIN 0.0f

/* r as a shadow ray element carrying `weight` to layer `layer` of `slot`. */
static inline plh_shadow plh_shadow_of(const rt_ray *r, const float weight[3], uint32_t slot, uint32_t layer)
{
    return (plh_shadow){{r->org[0], r->org[1], r->org[2]}, layer, {r->dir[0], r->dir[1], r->dir[2]}, r->tmax,
                        {weight[0], weight[1], weight[2]}, slot};
}

/* Its ray, for the single-ray kernels. */
static inline rt_ray plh_shadow_ray(const plh_shadow *s)
{
    return (rt_ray){{s->org[0], s->org[1], s->org[2]}, PLH_SHADOW_TMIN, {s->dir[0], s->dir[1], s->dir[2]}, s->tmax};
}

/* A hybrid.rays element: the rt.rays element's fields (pipelines/raytrace/packets.h) but
 * with its depth, blended-layer count, kind and draw-order layer's alpha byte and
 * `begins` packed into one word (plh_ray_pack), so that an element is 80 bytes, not 96.
 * Depth fits its 7 bits (PL_MAX_BOUNCES 64), layers its 6 (PLRT_MAX_LAYERS 32). */
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
 * rt.contributions) for layer `layer` of slot `index`, whose alpha byte is alpha8, or
 * PLH_ALPHA_LATER from a shadow ray: its surface's own term brings the byte (every
 * surface sends one to its layer, whatever its lights). */
#define PLH_ALPHA_LATER 256u
typedef struct plh_contrib {
    uint32_t index, layer;
    float v[3];
    uint32_t alpha8;
} plh_contrib;
_Static_assert(sizeof(plh_contrib) == 24, "hybrid.contributions elements stay 24 bytes");

#endif
