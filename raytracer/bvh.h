/* BVH4 over a triangle soup: the acceleration structure every traversal kernel reads.
 *
 * Data flow: world-space geometry (plain arrays, e.g. the scene module's sc_geometry
 * positions/indices) -> rt_bvh_build() [bvh_build.c: binned-SAH binary tree ->
 * bvh_collapse.c: 4-wide nodes + triangle blocks in leaf order] -> rt_bvh, read-only and
 * shareable between threads -> bvh_traverse.c (single rays), packet.c (packets).
 *
 * Layout, chosen for SSE node tests: a node holds the boxes of its 4 children as
 * structure-of-arrays planes (one __m128 per plane: lo_x, hi_x, lo_y, hi_y, lo_z, hi_z),
 * 128 bytes, 64-byte aligned (two cache lines, fetched together). Leaves are runs of
 * rt_tri4 blocks (4 triangles each, tri_intersect.h). Child boxes are widened by a tiny
 * margin (2^-16 of the scene's coordinate range) so float error in slab tests can never
 * cull a box whose triangle the watertight test would hit: that keeps traversal exact
 * against brute force and keeps watertightness through the hierarchy.
 *
 * On CPUs with AVX2 (isa.h) the build also collapses the same binary tree into 8-wide
 * nodes (rt_node8: one __m256 per plane, 256 bytes; bvh_collapse.c makes both widths)
 * whose leaf references point at the same rt_tri4 blocks, for the AVX2 kernels (the
 * 8-wide instances of bvh_traverse_tmp.h and packet_tmp.h): one 8-box test per step does
 * twice the work of a 4-box one for about the same cost, and the tree has half the
 * levels. */
#ifndef RAYTRACER_BVH_H
#define RAYTRACER_BVH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "raytracer/isa.h"
#include "raytracer/tri_intersect.h"

/* Child reference: an inner node index, or RT_LEAF_BIT | block << 3 | (nblocks - 1). */
#define RT_LEAF_BIT 0x80000000u
#define RT_EMPTY_REF 0xffffffffu      /* unused child slot (its box is empty) */
#define RT_LEAF_MAX_BLOCKS 8
#define RT_MAX_BINS 64

static inline int rt_ref_is_leaf(uint32_t ref) { return (ref & RT_LEAF_BIT) != 0; }
static inline uint32_t rt_leaf_first(uint32_t ref) { return (ref & ~RT_LEAF_BIT) >> 3; }
static inline uint32_t rt_leaf_blocks(uint32_t ref) { return (ref & 7u) + 1; }
static inline uint32_t rt_leaf_ref(uint32_t first, uint32_t nblocks)
{
    return RT_LEAF_BIT | first << 3 | (nblocks - 1);
}

/* Indices into rt_node4.b and rt_node8.b: the six bounding planes of the children. */
enum { RT_LO_X, RT_HI_X, RT_LO_Y, RT_HI_Y, RT_LO_Z, RT_HI_Z };

typedef struct rt_node4 {
    float b[6][4];          /* b[plane][child] */
    uint32_t child[4];
    uint32_t pad[4];        /* pads the node to 128 bytes */
} __attribute__((aligned(64))) rt_node4;

/* The 8-wide node of the AVX2 kernels: children are rt_node8 indices or the same leaf
 * references (into rt_bvh.tris) as rt_node4's, with the same box margin. */
typedef struct rt_node8 {
    float b[6][8];          /* b[plane][child] */
    uint32_t child[8];
    uint32_t pad[8];        /* pads the node to 256 bytes (four cache lines) */
} __attribute__((aligned(64))) rt_node8;

typedef struct rt_build_opts {
    int bins;               /* SAH bins per axis, 4..RT_MAX_BINS (default 32) */
    int max_leaf;           /* most triangles per leaf, 1..4*RT_LEAF_MAX_BLOCKS (default 8) */
    float trav_cost;        /* SAH cost of a node visit (default 1) */
    float isect_cost;       /* SAH cost of a 4-triangle block test (default 1) */
} rt_build_opts;

typedef struct rt_bvh_stats {
    size_t triangles;
    size_t inner_nodes;     /* 4-wide nodes */
    size_t leaves;
    size_t tri4_blocks;
    int depth;              /* inner nodes on the longest root-to-leaf path */
    double avg_leaf_size;   /* triangles per leaf */
    double block_fill;      /* used lanes / lanes in the triangle blocks */
    double sah_cost;        /* with the build's trav_cost and isect_cost */
    size_t memory_bytes;    /* nodes (both widths) + triangle blocks + the rt_bvh itself */
    double build_ms;        /* wall time of rt_bvh_build */
    /* The 8-wide nodes (all 0 when they were not built; see rt_bvh.nodes8). */
    size_t inner_nodes8;
    int depth8;             /* 8-wide inner nodes on the longest root-to-leaf path */
    double sah_cost8;       /* same leaves, 8-wide nodes */
    size_t memory8_bytes;   /* the 8-wide nodes alone (included in memory_bytes) */
    double build8_ms;       /* wall time of their collapse (included in build_ms) */
} rt_bvh_stats;

/* An any-hit filter (alpha-tested and single-sided materials): accept returns 0 for a
 * hit the traversal must pass through, as if the triangle were not there: triangle
 * prim at barycentrics (u, v) (leaf.h's convention), for a ray from org. The kernels
 * call it for every hit they would otherwise keep, closest-hit and any-hit alike, so
 * rt_intersect1 returns the closest accepted hit and rt_occluded1 ignores rejected
 * ones. NULL (rt_bvh.filter, the default): every hit counts, and the kernels run as
 * without this field. accept must be a pure function of its arguments (the same answer
 * on every thread and in every order). */
typedef struct rt_hit_filter {
    int (*accept)(const struct rt_hit_filter *f, uint32_t prim, float u, float v,
                  const float org[3]);
} rt_hit_filter;

typedef struct rt_bvh {
    rt_node4 *nodes;
    size_t nnodes;
    rt_tri4 *tris;          /* triangle blocks in leaf order */
    size_t nblocks;
    uint32_t root;          /* an inner node index, or RT_EMPTY_REF for an empty scene */
    rt_node8 *nodes8;       /* 8-wide nodes, or NULL when not built (no AVX2) */
    size_t nnodes8;
    uint32_t root8;         /* the 8-wide root, or RT_EMPTY_REF */
    rt_isa isa;             /* kernels rt_intersect1 / rt_occluded1 and the packet
                               functions run (rt_isa_best()) */
    size_t ntriangles;
    float lo[3], hi[3];     /* bounds of every triangle (lo > hi when empty) */
    rt_bvh_stats stats;
    const rt_hit_filter *filter;   /* NULL unless the scene needs one (not owned) */
} rt_bvh;

/* The nodes and root of each width, for the templates (TAG(rt_nodes), TAG(rt_root)). */
static inline const rt_node4 *rt_nodes4(const rt_bvh *b) { return b->nodes; }
static inline const rt_node8 *rt_nodes8(const rt_bvh *b) { return b->nodes8; }
static inline uint32_t rt_root4(const rt_bvh *b) { return b->root; }
static inline uint32_t rt_root8(const rt_bvh *b) { return b->root8; }

/* Default options, for callers that want to change one field. */
rt_build_opts rt_build_opts_default(void);

/* How a caller runs the build's independent tasks, since the ray tracer makes no
 * threads: for_each(ctx, n, task, arg) calls task(arg, i) once for every i < n, at once
 * on several threads if it likes, and returns when all have returned; width is how many
 * it runs at once (the build cuts its work into tasks by it). */
typedef struct rt_executor {
    void (*for_each)(void *ctx, size_t n, void (*task)(void *arg, size_t i), void *arg);
    void *ctx;
    unsigned width;
} rt_executor;

/* Builds the BVH of ntriangles triangles (indices[3i..3i+2] into positions, 3 floats a
 * vertex); triangle i gets primitive id i. Deterministic: identical input gives an
 * identical tree, node for node, whatever the executor. opts may be NULL for the
 * defaults. Returns NULL when out of memory. Degenerate triangles are kept (they never
 * hit). The 8-wide nodes are built when rt_isa_best() is RT_ISA_AVX2 (so
 * GRAMPS_ISA=baseline gives the baseline's memory and build time too), and rt_bvh.isa
 * is set to that choice. rt_bvh_build runs on the calling thread alone; rt_bvh_build_on
 * runs the binary build's tasks through ex (NULL: the calling thread). */
rt_bvh *rt_bvh_build(const float *positions, const uint32_t *indices, size_t ntriangles,
                     const rt_build_opts *opts);
rt_bvh *rt_bvh_build_on(const float *positions, const uint32_t *indices, size_t ntriangles,
                        const rt_build_opts *opts, const rt_executor *ex);
void rt_bvh_free(rt_bvh *bvh);

/* Selects the kernels rt_intersect1 / rt_occluded1 and the packet functions (packet.h)
 * use on this BVH (tests, benchmarks).
 * Returns 0, or -1 (and changes nothing) when the CPU lacks isa or the BVH was built
 * without its nodes. Not while other threads trace against bvh. */
int rt_bvh_set_isa(rt_bvh *bvh, rt_isa isa);

/* Tree statistics (computed at build time). */
const rt_bvh_stats *rt_bvh_get_stats(const rt_bvh *bvh);
void rt_bvh_print_stats(const rt_bvh_stats *s, const char *name, FILE *out);

#endif
