/* packets.h — the packet format of the Extended Direct3D graph's rays
 * (pipelines/graphs/hybrid.graph), for graph files and plugin stages.
 *
 * hybrid.rays: one queue carries every ray the pixel shaders push, of every kind, so
 * that Trace fills its packets from all of them (push-coalesced: the runtime packs the
 * rays of many PS and PS2 tasks into full packets). A ray is the ray tracer's rt.rays
 * element (pipelines/raytrace/packets.h) and its kind:
 *  - PLH_SHADOW: toward a light; `weight` is the light's term at the surface, which the
 *    pixel gets if nothing is in the way. Trace resolves it: when the ray is unoccluded
 *    it sends `weight` (scaled by what blended surfaces let through) to the Output
 *    Merger, and it passes no shadow ray on.
 *  - PLH_REFLECTION: a mirror ray, depth one more than its surface's;
 *  - PLH_THROUGH: the ray on through a blended surface (same depth, layers + 1).
 *    Trace fills in the closest hit of both, in place, for PS2 to shade. */
#ifndef PIPELINES_HYBRID_PACKETS_H
#define PIPELINES_HYBRID_PACKETS_H

#include "pipelines/raytrace/packets.h"

typedef enum plh_ray_kind { PLH_SHADOW, PLH_REFLECTION, PLH_THROUGH, PLH_KINDS } plh_ray_kind;

typedef struct plh_ray {
    plrt_ray r;
    uint32_t kind;                        /* plh_ray_kind */
    uint32_t pad[3];                      /* 96 bytes: elements stay 16-byte aligned */
} plh_ray;
_Static_assert(sizeof(plh_ray) == 96, "hybrid.rays elements stay 96 bytes");

#endif
