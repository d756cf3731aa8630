/* bvh_split.h — internal: the binned SAH build's steps over ranges of primitive
 * references (bvh_build.c), which the build's task rounds (bvh_tasks.c) schedule.
 * Calls on disjoint ranges may run at once; nothing here makes threads. */
#ifndef RAYTRACER_BVH_SPLIT_H
#define RAYTRACER_BVH_SPLIT_H

#include "raytracer/bvh_binary.h"

#include <stddef.h>
#include <stdint.h>

/* Every triangle's reference (its box and id), in a range partitioned in place as the
 * build goes, and the scratch partitions use. NULL when out of memory. */
typedef struct rt_build_refs rt_build_refs;
rt_build_refs *rt_build_refs_new(const float *positions, const uint32_t *indices, size_t n);
void rt_build_refs_free(rt_build_refs *r);
/* The ids in their final order (the leaves' ranges index it). */
void rt_build_refs_prims(const rt_build_refs *r, uint32_t *prims);

/* The node over references [begin, end) at `depth`: its box, and either 0 with the node
 * made a leaf, or the size of the left part, the range partitioned in place. */
size_t rt_build_split(rt_build_refs *r, const rt_build_opts *o, size_t begin, size_t end,
                      int depth, rt_bnode *node);

/* The whole subtree over [begin, end) into nodes[] (room for 2n - 1), in pre-order with
 * its root first and child indices relative to nodes; returns how many nodes, and the
 * deepest depth reached in *max_depth. */
size_t rt_build_subtree(rt_build_refs *r, const rt_build_opts *o, size_t begin, size_t end,
                        int depth, rt_bnode *nodes, int *max_depth);

#endif
