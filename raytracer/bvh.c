/* BVH build entry point: options, timing, the build pipeline and freeing.
 *
 * Data flow: positions/indices -> rt_btree_build (bvh_tasks.c and bvh_build.c, binned
 * SAH in rounds of tasks the caller's executor may run at once) ->
 * rt_btree_collapse (bvh_collapse.c, 4-wide nodes + triangle blocks) -> with AVX2,
 * rt_btree_collapse8 (bvh_collapse.c, 8-wide nodes over the same blocks) -> statistics
 * (bvh_stats.c) -> rt_bvh for bvh_traverse.c and packet.c. */
#include "raytracer/bvh.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "raytracer/bvh_binary.h"


rt_build_opts rt_build_opts_default(void)
{
    return (rt_build_opts){.bins = 32, .max_leaf = 8, .trav_cost = 1.0f, .isect_cost = 1.0f};
}

static rt_build_opts sanitize(const rt_build_opts *in)
{
    rt_build_opts o = in ? *in : rt_build_opts_default();
    if (o.bins < 4) o.bins = 4;
    if (o.bins > RT_MAX_BINS) o.bins = RT_MAX_BINS;
    if (o.max_leaf < 1) o.max_leaf = 1;
    if (o.max_leaf > 4 * RT_LEAF_MAX_BLOCKS) o.max_leaf = 4 * RT_LEAF_MAX_BLOCKS;
    if (!(o.trav_cost >= 0.0f)) o.trav_cost = 1.0f;
    if (!(o.isect_cost > 0.0f)) o.isect_cost = 1.0f;
    return o;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void scene_bounds(rt_bvh *bvh, const float *pos, const uint32_t *idx, size_t n)
{
    for (int a = 0; a < 3; a++) {
        bvh->lo[a] = INFINITY;
        bvh->hi[a] = -INFINITY;
    }
    for (size_t i = 0; i < 3 * n; i++) {
        const float *p = pos + 3 * (size_t)idx[i];
        for (int a = 0; a < 3; a++) {
            /* compares, not fminf/fmaxf: those are libm calls without -ffast-math */
            bvh->lo[a] = p[a] < bvh->lo[a] ? p[a] : bvh->lo[a];
            bvh->hi[a] = p[a] > bvh->hi[a] ? p[a] : bvh->hi[a];
        }
    }
}

rt_bvh *rt_bvh_build(const float *positions, const uint32_t *indices, size_t ntriangles,
                     const rt_build_opts *opts)
{
    return rt_bvh_build_on(positions, indices, ntriangles, opts, NULL);
}

rt_bvh *rt_bvh_build_on(const float *positions, const uint32_t *indices, size_t ntriangles,
                        const rt_build_opts *opts, const rt_executor *ex)
{
    const double t0 = now_ms();
    const rt_build_opts o = sanitize(opts);
    rt_bvh *bvh = calloc(1, sizeof *bvh);
    if (!bvh) return NULL;
    bvh->root = RT_EMPTY_REF;
    bvh->root8 = RT_EMPTY_REF;
    bvh->isa = rt_isa_best();
    bvh->ntriangles = ntriangles;
    scene_bounds(bvh, positions, indices, ntriangles);
    double ms8 = 0.0;
    if (ntriangles > 0) {
        rt_btree bt;
        if (rt_btree_build(&bt, positions, indices, ntriangles, &o, ex) != 0) {
            rt_bvh_free(bvh);
            return NULL;
        }
        /* The 8-wide nodes only for the AVX2 kernels; they share the 4-wide leaves. */
        const int wide8 = bvh->isa == RT_ISA_AVX2;
        uint32_t *leaf_refs = wide8 ? malloc(bt.nnodes * sizeof *leaf_refs) : NULL;
        int rc = wide8 && !leaf_refs
                     ? -1
                     : rt_btree_collapse(&bt, positions, indices, bvh, leaf_refs);
        if (rc == 0 && wide8) {
            const double t8 = now_ms();
            rc = rt_btree_collapse8(&bt, leaf_refs, bvh);
            ms8 = now_ms() - t8;
        }
        free(leaf_refs);
        rt_btree_free(&bt);
        if (rc != 0) {
            rt_bvh_free(bvh);
            return NULL;
        }
    }
    rt_bvh_compute_stats(bvh, &o);
    bvh->stats.build8_ms = ms8;
    bvh->stats.build_ms = now_ms() - t0;
    return bvh;
}

void rt_bvh_free(rt_bvh *bvh)
{
    if (!bvh) return;
    free(bvh->nodes);
    free(bvh->nodes8);
    free(bvh->tris);
    free(bvh);
}

int rt_bvh_set_isa(rt_bvh *bvh, rt_isa isa)
{
    if (!rt_isa_available(isa)) return -1;
    /* An empty scene needs no nodes of either width. */
    if (isa == RT_ISA_AVX2 && bvh->root8 == RT_EMPTY_REF && bvh->root != RT_EMPTY_REF)
        return -1;
    bvh->isa = isa;
    return 0;
}

const rt_bvh_stats *rt_bvh_get_stats(const rt_bvh *bvh) { return &bvh->stats; }
