/* BVH statistics: node and leaf counts, depth, leaf fill, SAH cost and memory, for build
 * reports and benchmarks.
 *
 * Data flow: a finished rt_bvh (bvh_collapse.c) -> walks of the 4-wide
 * tree and, when built, the 8-wide one -> rt_bvh.stats -> rt_bvh_print_stats for tools
 * and bench programs. */
#include "raytracer/bvh.h"

#include "raytracer/bvh_binary.h"
#include "raytracer/ray.h"

typedef struct walk {
    const rt_bvh *bvh;
    const rt_build_opts *o;
    rt_bvh_stats *s;
    double area_sum_inner;  /* sum of inner node areas */
    double area_blocks;     /* sum of leaf area * blocks */
} walk;

static void child_box(const rt_node4 *nd, int i, float lo[3], float hi[3])
{
    for (int a = 0; a < 3; a++) {
        lo[a] = nd->b[2 * a][i];
        hi[a] = nd->b[2 * a + 1][i];
    }
}

static void walk_leaf(walk *w, uint32_t ref, float area)
{
    const uint32_t first = rt_leaf_first(ref), nb = rt_leaf_blocks(ref);
    for (uint32_t b = first; b < first + nb; b++)
        for (int k = 0; k < 4; k++)
            if (w->bvh->tris[b].prim[k] != RT_NO_HIT) w->s->avg_leaf_size += 1.0;
    w->s->leaves++;
    w->area_blocks += (double)area * nb;
}

static void walk_node(walk *w, uint32_t node, float area, int depth)
{
    const rt_node4 *nd = &w->bvh->nodes[node];
    w->s->inner_nodes++;
    w->area_sum_inner += area;
    if (depth > w->s->depth) w->s->depth = depth;
    for (int i = 0; i < 4; i++) {
        const uint32_t ref = nd->child[i];
        if (ref == RT_EMPTY_REF) continue;
        float lo[3], hi[3];
        child_box(nd, i, lo, hi);
        const float a = rt_half_area(lo, hi);
        if (rt_ref_is_leaf(ref)) walk_leaf(w, ref, a);
        else walk_node(w, ref, a, depth + 1);
    }
}

/* The 8-wide tree: node count, depth and the inner-node area sum for its SAH cost (its
 * leaves are the 4-wide tree's, so their share of the cost is the same). */
typedef struct walk8 {
    const rt_bvh *bvh;
    size_t nodes;
    int depth;
    double area_sum_inner;
} walk8;

static void walk_node8(walk8 *w, uint32_t node, float area, int depth)
{
    const rt_node8 *nd = &w->bvh->nodes8[node];
    w->nodes++;
    w->area_sum_inner += area;
    if (depth > w->depth) w->depth = depth;
    for (int i = 0; i < 8; i++) {
        const uint32_t ref = nd->child[i];
        if (ref == RT_EMPTY_REF || rt_ref_is_leaf(ref)) continue;
        float lo[3], hi[3];
        for (int a = 0; a < 3; a++) {
            lo[a] = nd->b[2 * a][i];
            hi[a] = nd->b[2 * a + 1][i];
        }
        walk_node8(w, ref, rt_half_area(lo, hi), depth + 1);
    }
}

void rt_bvh_compute_stats(rt_bvh *bvh, const rt_build_opts *o)
{
    rt_bvh_stats *s = &bvh->stats;
    *s = (rt_bvh_stats){0};
    s->triangles = bvh->ntriangles;
    s->tri4_blocks = bvh->nblocks;
    s->memory8_bytes = bvh->nnodes8 * sizeof *bvh->nodes8;
    s->memory_bytes = sizeof *bvh + bvh->nnodes * sizeof *bvh->nodes +
                      bvh->nblocks * sizeof *bvh->tris + s->memory8_bytes;
    if (bvh->root == RT_EMPTY_REF) return;
    walk w = {bvh, o, s, 0.0, 0.0};
    const float root_area = rt_half_area(bvh->lo, bvh->hi);
    walk_node(&w, bvh->root, root_area, 1);
    const size_t used = (size_t)s->avg_leaf_size;
    s->block_fill = bvh->nblocks ? (double)used / (4.0 * (double)bvh->nblocks) : 0.0;
    s->avg_leaf_size = s->leaves ? (double)used / (double)s->leaves : 0.0;
    /* Expected cost of a random ray that hits the root box (areas relative to it). */
    if (root_area > 0.0f)
        s->sah_cost = (o->trav_cost * w.area_sum_inner + o->isect_cost * w.area_blocks) /
                      root_area;
    if (bvh->root8 == RT_EMPTY_REF) return;
    walk8 w8 = {bvh, 0, 0, 0.0};
    walk_node8(&w8, bvh->root8, root_area, 1);
    s->inner_nodes8 = w8.nodes;
    s->depth8 = w8.depth;
    if (root_area > 0.0f)
        s->sah_cost8 = (o->trav_cost * w8.area_sum_inner + o->isect_cost * w.area_blocks) /
                       root_area;
}

/* One line (callers prefix it, e.g. with "# " in bench output). */
void rt_bvh_print_stats(const rt_bvh_stats *s, const char *name, FILE *out)
{
    fprintf(out,
            "bvh %s: %zu triangles, %zu nodes, %zu leaves, depth %d, %.2f tris/leaf, "
            "%zu blocks (%.0f%% full), SAH %.2f, %.2f MiB, built in %.2f ms",
            name ? name : "", s->triangles, s->inner_nodes, s->leaves, s->depth,
            s->avg_leaf_size, s->tri4_blocks, 100.0 * s->block_fill, s->sah_cost,
            (double)s->memory_bytes / (1024.0 * 1024.0), s->build_ms);
    if (s->inner_nodes8)    /* both already counted in the MiB and ms above */
        fprintf(out, "; 8-wide: %zu nodes, depth %d, SAH %.2f, %.2f MiB, %.2f ms",
                s->inner_nodes8, s->depth8, s->sah_cost8,
                (double)s->memory8_bytes / (1024.0 * 1024.0), s->build8_ms);
    fputc('\n', out);
}
