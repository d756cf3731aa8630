/* The BVH is built in rounds of tasks a caller's executor may run at once
 * (raytracer/bvh_tasks.c): whatever runs them, one after another, in reverse order, or
 * on 2, 3 or 8 threads (pl_scene_data_bvh over gr_parallel), the tree is the one the
 * calling thread alone builds, node for node, with the same triangle blocks and 8-wide
 * nodes; and so is the binary tree before them, numbered the same (widths 2 to 64). Meshes: random soups of 3,000 and 50,000 triangles (one task, then rounds of
 * splits), coincident and exponentially small triangles (median splits, a deep tree),
 * fairy (173,760 triangles) and ../shared/scenes/bunny.obj when present. */
#include "gramps/gramps.h"
#include "pipelines/frame.h"
#include "raytracer/bvh_binary.h"
#include "scenes/loaders.h"
#include "tests/check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct tri_mesh {
    float *pos;
    uint32_t *idx;
    size_t nt;
} tri_mesh;

static uint32_t seed = 7;
static float frand(void)
{
    seed = seed * 1664525u + 1013904223u;
    return (float)(seed >> 8) / 16777216.0f;
}

static tri_mesh random_soup(size_t nt)
{
    tri_mesh m = {malloc(nt * 9 * sizeof(float)), malloc(nt * 3 * sizeof(uint32_t)), nt};
    for (size_t t = 0; t < nt; t++) {
        float c[3] = {frand() * 10, frand() * 10, frand() * 10};
        for (int v = 0; v < 3; v++) {
            for (int a = 0; a < 3; a++) m.pos[9 * t + 3 * v + a] = c[a] + frand() * 0.3f;
            m.idx[3 * t + v] = (uint32_t)(3 * t + v);
        }
    }
    return m;
}

/* 40 triangles of size 2^-i, then 3,000 copies of one triangle. */
static tri_mesh coincident_and_deep(void)
{
    size_t nt = 3040;
    tri_mesh m = {malloc(nt * 9 * sizeof(float)), malloc(nt * 3 * sizeof(uint32_t)), nt};
    for (size_t t = 0; t < nt; t++) {
        float s = t < 40 ? ldexpf(1.0f, -(int)t) : 1.0f;
        float v[9] = {s, 0, -1, 2 * s, 0, -1, s, s, -1};
        if (t >= 40) memcpy(v, (float[9]){-1, -1, 0, 1, -1, 0, 0, 1, 0}, sizeof v);
        memcpy(m.pos + 9 * t, v, sizeof v);
        for (int k = 0; k < 3; k++) m.idx[3 * t + k] = (uint32_t)(3 * t + k);
    }
    return m;
}

/* An executor that runs a round's tasks last first, on the calling thread. */
static void for_each_reversed(void *ctx, size_t n, void (*task)(void *, size_t), void *arg)
{
    (void)ctx;
    for (size_t i = n; i-- > 0;) task(arg, i);
}

static bool same_bvh(const rt_bvh *a, const rt_bvh *b)
{
    return a && b && a->nnodes == b->nnodes && a->nblocks == b->nblocks && a->root == b->root &&
           !memcmp(a->nodes, b->nodes, a->nnodes * sizeof *a->nodes) &&
           !memcmp(a->tris, b->tris, a->nblocks * sizeof *a->tris) &&
           a->nnodes8 == b->nnodes8 && a->root8 == b->root8 &&
           (!a->nnodes8 || !memcmp(a->nodes8, b->nodes8, a->nnodes8 * sizeof *a->nodes8)) &&
           a->stats.depth == b->stats.depth && a->stats.sah_cost == b->stats.sah_cost;
}

/* The binary tree itself, numbered as one recursive build numbers it (pre-order). */
static bool same_btree(const rt_btree *a, const rt_btree *b, size_t nt)
{
    return a->nnodes == b->nnodes && a->root == b->root && a->depth == b->depth &&
           !memcmp(a->nodes, b->nodes, a->nnodes * sizeof *a->nodes) &&
           !memcmp(a->prims, b->prims, nt * sizeof *a->prims);
}

static void check_btrees(const char *name, const float *pos, const uint32_t *idx, size_t nt)
{
    rt_build_opts o = rt_build_opts_default();
    rt_btree alone, other;
    CHECK(rt_btree_build(&alone, pos, idx, nt, &o, NULL) == 0);
    for (unsigned w = 2; w <= 64; w *= 2) {
        rt_executor ex = {for_each_reversed, NULL, w};
        CHECK(rt_btree_build(&other, pos, idx, nt, &o, &ex) == 0);
        CHECK_MSG(same_btree(&alone, &other, nt), "%s: width %u: another binary tree", name, w);
        rt_btree_free(&other);
    }
    rt_btree_free(&alone);
}

static void check_builds(const char *name, const float *pos, const uint32_t *idx, size_t nt)
{
    check_btrees(name, pos, idx, nt);
    rt_bvh *alone = rt_bvh_build(pos, idx, nt, NULL);
    CHECK_MSG(alone, "%s: built", name);
    static const unsigned widths[] = {2, 3, 16}, threads[] = {2, 3, 8};
    for (int k = 0; alone && k < 3; k++) {
        unsigned w = widths[k];
        rt_executor ex = {for_each_reversed, NULL, w};
        rt_bvh *rev = rt_bvh_build_on(pos, idx, nt, NULL, &ex);
        CHECK_MSG(same_bvh(alone, rev), "%s: width %u, tasks in reverse: another tree", name, w);
        rt_bvh_free(rev);
    }
    sc_geometry g = {.positions = (float *)pos, .indices = (uint32_t *)idx, .ntriangles = nt};
    for (int k = 0; alone && k < 3; k++) {
        unsigned t = threads[k];
        pl_scene_data d;
        pl_scene_data_init(&d, NULL, &g);
        d.build_threads = t;
        CHECK_MSG(same_bvh(alone, pl_scene_data_bvh(&d)), "%s: %u threads: another tree", name, t);
        pl_scene_data_free(&d);
    }
    rt_bvh_free(alone);
}

static void test_generated_meshes(void)
{
    tri_mesh m[3] = {random_soup(3000), random_soup(50000), coincident_and_deep()};
    const char *names[3] = {"soup 3000", "soup 50000", "coincident and deep"};
    for (int i = 0; i < 3; i++) {
        check_builds(names[i], m[i].pos, m[i].idx, m[i].nt);
        free(m[i].pos);
        free(m[i].idx);
    }
}

static void test_scene_meshes(void)
{
    const char *scenes[] = {"fairy", "../shared/scenes/bunny.obj"};
    for (int i = 0; i < 2; i++) {
        sc_scene *s;
        sc_geometry g;
        char err[SC_ERR_MAX];
        if (sc_load(scenes[i], &s, err)) {
            printf("  (skipped %s: %s)\n", scenes[i], err);
            continue;
        }
        CHECK_MSG(!sc_flatten(s, &g, err), "%s", err);
        check_builds(scenes[i], g.positions, g.indices, g.ntriangles);
        sc_geometry_free(&g);
        sc_free(s);
    }
}

int main(void)
{
    RUN(test_generated_meshes);
    RUN(test_scene_meshes);
    gr_release_parked_threads();
    return check_finish();
}
