/* The packet path's private state, shared by the SSE traversal (packet.c) and the AVX2 one
 * (packet8.c). Not part of the library's interface.
 *
 * Data flow: packet.c fills a pkt from the caller's rays (structure-of-arrays lanes and
 * packet-wide intervals), then runs the traversal of rt_bvh.isa over it: packet.c's own
 * over the 4-wide nodes, or rt_packet_traverse8 over the 8-wide ones; both leave the
 * results in best[] / occluded[]. */
#ifndef RAYTRACER_PACKET_INTERNAL_H
#define RAYTRACER_PACKET_INTERNAL_H

#include "raytracer/bvh_traverse.h"
#include "raytracer/packet.h"

typedef struct pkt {
    float ix[RT_PACKET_MAX], iy[RT_PACKET_MAX], iz[RT_PACKET_MAX];
    float oix[RT_PACKET_MAX], oiy[RT_PACKET_MAX], oiz[RT_PACKET_MAX];
    float dx[RT_PACKET_MAX], dy[RT_PACKET_MAX], dz[RT_PACKET_MAX];  /* directions (AVX2
                                traversal only: its watertight constants, 8 at a time) */
    float tmin[RT_PACKET_MAX];  /* +inf on padding and invalid lanes: never enter a box */
    float tmax[RT_PACKET_MAX];  /* current limit: the best hit so far, -inf once done */
    rt_wtray w[RT_PACKET_MAX];      /* watertight constants, made at the first leaf */
    rt_hit best[RT_PACKET_MAX];     /* closest hit so far, from the first leaf on */
    uint64_t wready;                /* lanes whose w and best are set */
    const rt_ray *rays;
    uint8_t *occluded;          /* any-hit output, NULL for closest hit */
    int n;
    int ngroups;                /* groups of 4 lanes filled (even for the AVX2 traversal) */
    int near[3];                /* near plane per axis, shared by all rays */
    __m128 ilo[3], ihi[3];      /* inverse direction interval per axis */
    __m128 onear[3], ofar[3];   /* origin bound that minimises entry / maximises exit */
    __m128 tmin_min;
    float tmax_max;
    uint64_t live;              /* rays still searching (any hit) */
} __attribute__((aligned(64))) pkt;

/* Traversal stack entry. first counts lane groups: of 4 lanes in packet.c, of 8 in
 * packet8.c. */
typedef struct pentry {
    uint32_t ref;
    uint32_t parent;            /* node holding ref's box: leaves need it for their mask */
    float dist;                 /* packet-wide lower bound of the entry distance */
    uint8_t first, slot;
} pentry;

/* The AVX2 counterpart of packet.c's pkt_init (packet8.c): fills p from rays[0..n) 8 lanes
 * at a time, in whole groups of 8, with the directions too. Returns 0 when the packet
 * must be traced ray by ray (direction signs differ). AVX2 only, like the next. */
int rt_packet_init8(pkt *p, const rt_ray *rays, int n, uint8_t *occluded);

/* The AVX2 traversal over rt_bvh.nodes8 (packet8.c): callers must have checked
 * bvh->isa == RT_ISA_AVX2 and filled p with rt_packet_init8. */
void rt_packet_traverse8(const rt_bvh *bvh, pkt *p, rt_packet_stats *st);

#endif
