/* Binary BVH, the intermediate product of the build.
 *
 * Data flow: positions/indices -> rt_btree_build() (binned SAH, bvh_build.c, in task
 * rounds: bvh_tasks.c) -> rt_btree
 * -> rt_btree_collapse() (bvh_collapse.c) -> the 4-wide rt_bvh that traversal reads, and
 * on AVX2 machines also rt_btree_collapse8() (bvh_collapse.c) -> its 8-wide nodes.
 * Building binary first and collapsing keeps the SAH sweep simple and lets the collapse
 * pick, per wide node, which grandchildren to pull up (largest surface area first). */
#ifndef RAYTRACER_BVH_BINARY_H
#define RAYTRACER_BVH_BINARY_H

#include <stddef.h>
#include <stdint.h>

#include "raytracer/bvh.h"

typedef struct rt_bnode {
    float lo[3], hi[3];
    uint32_t left, right;   /* children, inner nodes only */
    uint32_t first, count;  /* leaves: range in rt_btree.prims; count == 0 for inner */
} rt_bnode;

typedef struct rt_btree {
    rt_bnode *nodes;
    size_t nnodes;
    uint32_t *prims;        /* primitive ids in leaf order, ascending within a leaf */
    uint32_t root;
    int depth;
} rt_btree;

/* Returns 0, or -1 when out of memory. n must be > 0. ex runs the build's independent
 * tasks (bvh_tasks.c), or is NULL; the tree does not depend on it. */
int rt_btree_build(rt_btree *bt, const float *positions, const uint32_t *indices, size_t n,
                   const rt_build_opts *o, const rt_executor *ex);
void rt_btree_free(rt_btree *bt);

/* Fills bvh->nodes, bvh->tris and bvh->root from the binary tree. Returns 0 or -1.
 * leaf_refs may be NULL, or bt->nnodes entries: each binary leaf's slot gets its leaf
 * reference (its run of blocks in bvh->tris), for rt_btree_collapse8. */
int rt_btree_collapse(const rt_btree *bt, const float *positions, const uint32_t *indices,
                      rt_bvh *bvh, uint32_t *leaf_refs);

/* Fills bvh->nodes8, bvh->nnodes8 and bvh->root8 from the binary tree, with the leaf
 * references rt_btree_collapse recorded (same blocks). Returns 0 or -1. */
int rt_btree_collapse8(const rt_btree *bt, const uint32_t *leaf_refs, rt_bvh *bvh);

/* The shared rules of both collapses (bvh_collapse.c). rt_btree_gather picks up to max
 * binary nodes to become the children of one wide node: it starts from bn's two children
 * and opens the inner child with the largest surface area until max are reached or only
 * leaves remain; returns the count. rt_box_margin is the box widening (see bvh.h) for a
 * scene with bounds lo, hi. */
int rt_btree_gather(const rt_btree *bt, const rt_bnode *bn, uint32_t *kids, int max);
float rt_box_margin(const float lo[3], const float hi[3]);
void *rt_alloc_tree_array(size_t bytes);

/* Fills bvh->stats (node, leaf and block counts, SAH cost) once the tree is built
 * (bvh_stats.c). */
void rt_bvh_compute_stats(rt_bvh *bvh, const rt_build_opts *o);

/* Surface area (half of it: the constant factor cancels in every SAH ratio). */
static inline float rt_half_area(const float lo[3], const float hi[3])
{
    const float dx = hi[0] - lo[0], dy = hi[1] - lo[1], dz = hi[2] - lo[2];
    return dx * dy + dy * dz + dz * dx;
}

#endif
