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

typedef struct plh_ray {
    plrt_ray r;
    uint32_t kind;                        /* plh_ray_kind */
    plh_layer layer;                      /* 96 bytes: elements stay 16-byte aligned */
} plh_ray;
_Static_assert(sizeof(plh_ray) == 96, "hybrid.rays elements stay 96 bytes");

/* hybrid.contributions: RGB (floats, summed in fixed point by hybrid.om as rt.blend sums
 * rt.contributions) for layer `layer` of slot `index`, whose alpha byte is alpha8. */
typedef struct plh_contrib {
    uint32_t index, layer;
    float v[3];
    uint32_t alpha8;
} plh_contrib;
_Static_assert(sizeof(plh_contrib) == 24, "hybrid.contributions elements stay 24 bytes");

#endif
