/* Packet traversal for coherent rays (camera rays, shadow rays toward one light).
 *
 * Data flow: up to RT_PACKET_MAX rt_ray (one GRAMPS packet's worth, e.g. an 8x8 pixel
 * tile) -> packet.c: SoA copy, interval (frustum-like) culling of each node's children
 * for the whole packet, then the first ray that really enters a child ("first active")
 * -> leaves tested ray by ray for the rays that enter the leaf's box -> rt_hit[] or
 * occlusion flags. Incoherent packets (direction signs differ, or origins spread over
 * more than a tenth of the scene) go to the stream traversal (bvh_traverse.h),
 * counted in the statistics.
 *
 * Results equal the single-ray functions exactly (same watertight test, same tie rule),
 * with the SSE kernels over the 4-wide nodes or, when rt_bvh.isa is AVX2, the AVX2 ones
 * over the 8-wide nodes (packet.c: packet_tmp.h at both widths).
 * Kernels only: no threads, no allocation, the BVH is read-only. */
#ifndef RAYTRACER_PACKET_H
#define RAYTRACER_PACKET_H

#include <stdint.h>

#include "raytracer/bvh.h"
#include "raytracer/ray.h"
#include "raytracer/trace.h"                 /* RT_PACKET_MAX */

/* Counters a caller may accumulate over many packets (pass NULL to skip them). */
typedef struct rt_packet_stats {
    uint64_t packets;           /* packet calls (per chunk of RT_PACKET_MAX rays) */
    uint64_t rays;
    uint64_t streamed_packets;  /* incoherent: traced as a stream (packet.c) */
    uint64_t node_visits;       /* inner nodes visited by a packet */
    uint64_t node_lanes;        /* rays at or after the first active ray, summed per visit */
    uint64_t leaf_visits;
    uint64_t leaf_lanes;        /* rays at or after the first active ray, per leaf visit */
    uint64_t leaf_active;       /* rays that entered the leaf box, per leaf visit */
} rt_packet_stats;

/* Closest hits of n rays (any n; chunks of RT_PACKET_MAX are traced as packets). */
void rt_intersect_packet(const rt_bvh *bvh, const rt_ray *rays, int n, rt_hit *hits,
                         rt_packet_stats *stats);

/* occluded[i] = 1 when ray i hits anything in [tmin, tmax], else 0. */
void rt_occluded_packet(const rt_bvh *bvh, const rt_ray *rays, int n, uint8_t *occluded,
                        rt_packet_stats *stats);

/* rt_occluded_packet over rays where a caller's records hold them, copying none: ray i's
 * origin, direction and tmax are the rt_ray fields (same offsets) at the start of the
 * record at byte i * stride of `records`, and its tmin is `tmin`, whatever the record
 * holds in that word (the caller's own: hybrid.shadow's rays carry their layer there). */
void rt_occluded_strided(const rt_bvh *bvh, const void *records, size_t stride, float tmin, int n,
                         uint8_t *occluded, rt_packet_stats *stats);

/* One line: packets, streamed share, average active lanes at nodes and leaves. */
void rt_packet_stats_print(const rt_packet_stats *s, const char *name, FILE *out);

#endif
