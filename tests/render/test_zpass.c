/* The kernels of the sort-middle depth passes and the hybrid's primary hits:
 * - rs_depth_rect (Z-Raster, Tile-Shade) leaves, for triangles in any order and for any
 *   tile cut, the depth and primitive the draw-order pass would (rs_raster_rect +
 *   rs_depth, `less`, first wins), bit for bit, coincident, nearly coplanar and
 *   edge-sharing triangles included;
 * - rt_intersect_each (hybrid.visible) gives rt_wtray_init + rt_tri_intersect's answer
 *   bit for bit under every available ISA, rays through vertices and edges (the exact
 *   zero edge values the scalar test redoes in double) and axis-aligned rays included. */
#include "rasterizer/raster.h"
#include "raytracer/isa.h"
#include "raytracer/tri_each.h"
#include "raytracer/tri_intersect.h"
#include "tests/check.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define W 96
#define H 80
#define NTRIS 300

static uint32_t rng = 12345;
static float frand(void)
{
    rng = rng * 1664525u + 1013904223u;
    return (float)(rng >> 8) / 16777216.0f;
}

static rs_vertex vertex(float x, float y, float z, float w)
{
    rs_vertex v = {{x * w, y * w, z * w, w}, {0}};
    return v;
}

/* Random set-up triangles over the image; every fifth repeats an earlier one (the same
 * depths: ties), every eleventh nearly (depths a few ulps apart: only exact depths
 * order them) and every seventh shares an edge with its predecessor. */
static int make_triangles(rs_setup *su, uint32_t *id)
{
    rs_triangle t[NTRIS];
    int n = 0;
    for (int i = 0; i < NTRIS; i++) {
        if (i % 5 == 4) t[i] = t[i - 3];
        else if (i % 11 == 10) {                /* nearly coplanar with an earlier one */
            t[i] = t[i - 2];
            for (int k = 0; k < 3; k++) t[i].v[k].clip[2] *= 1.0f + (k == 1 ? 3e-7f : -2e-7f);
        } else {
            for (int k = 0; k < 3; k++)
                t[i].v[k] = vertex(frand() * 2.4f - 1.2f, frand() * 2.4f - 1.2f, frand() * 1.8f - 0.9f,
                                   0.5f + frand() * 2.0f);
            if (i % 7 == 6) { t[i].v[0] = t[i - 1].v[1]; t[i].v[1] = t[i - 1].v[2]; }
        }
        t[i].prim = (uint32_t)i;
        if (rs_setup_triangle(&t[i], W, H, &su[n])) id[n++] = (uint32_t)i;
    }
    return n;
}

/* The draw-order reference: triangles in id order, `less`, the first of equal depths
 * wins. Returns how many covered pixels met an equal depth (ties). */
static int reference(const rs_setup *su, const uint32_t *id, int n, float *z, uint32_t *vis)
{
    int ties = 0;
    static rs_cover cov[W * H];
    for (int i = 0; i < W * H; i++) { z[i] = FLT_MAX; vis[i] = 0; }
    for (int i = 0; i < n; i++) {
        rs_interp ip;
        rs_interp_of(&su[i], &ip);
        int m = rs_raster_rect(&su[i], 0, 0, W, H, cov);
        for (int k = 0; k < m; k++) {
            size_t at = (size_t)cov[k].y * W + cov[k].x;
            float d = rs_depth(&ip, cov[k].e0, cov[k].e1);
            if (d < z[at]) { z[at] = d; vis[at] = id[i] + 1; }
            else ties += d == z[at];
        }
    }
    return ties;
}

/* The triangles in the order given, tile by tile (tile edge `tile`), by rs_depth_rect's
 * AVX2 or baseline kernel. */
static void by_tiles(bool avx2, const rs_setup *su, const uint32_t *id, const int *order, int n,
                     int tile, float *z, uint32_t *vis)
{
    static float tz[256 * 256];
    static uint32_t tv[256 * 256];
    for (int y0 = 0; y0 < H; y0 += tile)
        for (int x0 = 0; x0 < W; x0 += tile) {
            int x1 = x0 + tile < W ? x0 + tile : W, y1 = y0 + tile < H ? y0 + tile : H;
            rs_depth_target t = {tz, tv, x0, y0, tile, NULL, 0};
            for (int i = 0; i < tile * tile; i++) { tz[i] = FLT_MAX; tv[i] = 0; }
            for (int i = 0; i < n; i++)
                rs_depth_rect(&su[order[i]], x0, y0, x1, y1, &t, id[order[i]], avx2);
            for (int y = y0; y < y1; y++)
                for (int x = x0; x < x1; x++) {
                    z[y * W + x] = tz[(y - y0) * tile + (x - x0)];
                    vis[y * W + x] = tv[(y - y0) * tile + (x - x0)];
                }
        }
}

static void test_depth_rect_any_order(void)
{
    static rs_setup su[NTRIS];
    static uint32_t id[NTRIS];
    static float zr[W * H], z[W * H];
    static uint32_t vr[W * H], v[W * H];
    int order[NTRIS];
    int n = make_triangles(su, id);
    int ties = reference(su, id, n, zr, vr), covered = 0;
    CHECK(ties > 100);
    for (int i = 0; i < W * H; i++) covered += vr[i] != 0;
    CHECK(covered > W * H / 2);
    const int tiles[] = {8, 16, 24, 256};
    for (int round = 0; round < 8; round++) {
        for (int i = 0; i < n; i++) order[i] = i;
        if (round == 1)
            for (int i = 0; i < n; i++) order[i] = n - 1 - i;   /* later ties first */
        else if (round > 1)
            for (int i = n - 1; i > 0; i--) {
                int j = (int)(frand() * (float)(i + 1)) % (i + 1), tmp = order[i];
                order[i] = order[j];
                order[j] = tmp;
            }
        for (int avx2 = 0; avx2 <= (int)rt_isa_available(RT_ISA_AVX2); avx2++) {
            by_tiles(avx2, su, id, order, n, tiles[round % 4], z, v);
            CHECK_MSG(memcmp(z, zr, sizeof z) == 0, "round %d, avx2 %d: depths", round, avx2);
            CHECK_MSG(memcmp(v, vr, sizeof v) == 0, "round %d, avx2 %d: primitives", round, avx2);
        }
    }
}

/* A triangle over a 64x64 tile at depths around `depth` (clip z / w = 2 depth - 1). */
static rs_triangle tile_triangle(float depth, float size)
{
    rs_triangle t;
    float cx = frand() * 64.0f, cy = frand() * 64.0f;
    for (int k = 0; k < 3; k++) {
        float x = cx + (frand() - 0.5f) * size, y = cy + (frand() - 0.5f) * size;
        float w = 0.5f + frand(), d = depth * (1.0f + (frand() - 0.5f) * 1e-3f);
        t.v[k] = vertex(x / 32.0f - 1.0f, 1.0f - y / 32.0f, 2.0f * d - 1.0f, w);
    }
    t.prim = 0;
    return t;
}

/* The AVX2 kernel and the baseline leave the same depths, primitives, won lists and
 * counts, at depths where the AVX2 kernel's plane depth settles the float (mid-range)
 * and where it cannot (depths near 0, whose float steps are finer than its slack, so
 * every pixel takes the exact path), for tiny (rectangles of at most four pixels across:
 * the kernel that computes four depths a row, and rows they miss), small, tile-sized
 * and much larger triangles (whose edge values overflow int32 over the tile: the
 * four-lane int64 kernel). */
static void test_depth_rect_kernels_agree(void)
{
    if (!rt_isa_available(RT_ISA_AVX2)) { printf("  skip: avx2 not available\n"); return; }
    static const float depths[] = {0.5f, 0.97f, 3e-8f, 0.0f};
    static float z[2][64 * 64];
    static uint32_t vis[2][64 * 64];
    static int32_t won[2][64 * 64];
    for (size_t d = 0; d < sizeof depths / sizeof *depths; d++) {
        for (int k = 0; k < 2; k++)
            for (int i = 0; i < 64 * 64; i++) { z[k][i] = FLT_MAX; vis[k][i] = 0; }
        int same = 0, tests = 0;
        for (int i = 0; i < 3000; i++) {
            static const float sizes[] = {70.0f, 6.0f, 2.5f, 6.0f, 600.0f, 3.5f};
            rs_triangle t = tile_triangle(depths[d], sizes[i % 6]);
            rs_setup su;
            if (!rs_setup_triangle(&t, 64, 64, &su)) continue;
            int x0 = (int)(frand() * 8), y0 = (int)(frand() * 8);   /* odd rectangles too */
            int n[2], nwon[2];
            for (int k = 0; k < 2; k++) {
                rs_depth_target tg = {z[k], vis[k], 0, 0, 64, won[k], 0};
                n[k] = rs_depth_rect(&su, x0, y0, 64 - x0 / 2, 61, &tg, (uint32_t)i % 97, k == 1);
                nwon[k] = tg.nwon;
            }
            tests++;
            same += n[0] == n[1] && nwon[0] == nwon[1] &&
                    memcmp(won[0], won[1], (size_t)nwon[0] * sizeof **won) == 0;
        }
        CHECK_MSG(same == tests, "depth %g: %d of %d triangles differ", depths[d], tests - same, tests);
        CHECK_MSG(memcmp(z[0], z[1], sizeof z[0]) == 0 && memcmp(vis[0], vis[1], sizeof vis[0]) == 0,
                  "depth %g: buffers differ", depths[d]);
    }
}

/* One triangle per ray; the rays' targets are inside, on edges, on vertices or beside.
 * From origin `org`: placed along each axis, on either side, the rays' dominant axis and
 * its sign (the test's per-ray axis order) take every value. */
static void make_rays(rt_each_rays *r, float *pos, uint32_t *idx, int n, int kind, const float org[3])
{
    r->n = n;
    for (int k = 0; k < 3; k++) r->org[k] = org[k];
    r->tmin = 0.0f;
    r->tmax = INFINITY;
    for (int i = 0; i < n; i++) {
        float *p = pos + 9 * i;
        for (int k = 0; k < 9; k++) p[k] = frand() * 2.0f - 1.0f;
        if (kind == 3) p[2] = p[5] = p[8] = 0.0f;                /* a z = 0 plane */
        for (int k = 0; k < 3; k++) idx[3 * i + k] = (uint32_t)(3 * i + k);
        r->prim[i] = (uint32_t)i;
        float a = frand(), b = frand() * (1.0f - a), target[3];
        if (kind == 1) { b = 1.0f - a; }                           /* on the edge b-c */
        if (kind == 2) { a = (float)(i % 2); b = 0.0f; }           /* on a vertex */
        for (int k = 0; k < 3; k++)
            target[k] = (1.0f - a - b) * p[k] + a * p[3 + k] + b * p[6 + k] + (kind == 4 ? 0.7f : 0.0f);
        for (int k = 0; k < 3; k++) r->dir[k][i] = target[k] - r->org[k];
        if (kind == 3 && i % 3 == 0) { r->dir[0][i] = 0.0f; r->dir[1][i] = 0.0f; r->dir[2][i] = -1.0f; }
        if (kind == 3 && i % 3 == 1) { r->dir[0][i] = r->dir[2][i]; }   /* ties of |x| and |z| */
    }
}

static void test_intersect_each_matches_scalar(void)
{
    static float pos[9 * RT_EACH_MAX];
    static uint32_t idx[3 * RT_EACH_MAX];
    rt_each_rays r;
    static const float origins[6][3] = {{0.25f, -0.5f, 3.0f}, {0.25f, -0.5f, -3.0f}, {3.0f, 0.3f, -0.2f},
                                        {-3.0f, 0.3f, -0.2f}, {0.1f, 3.0f, 0.4f}, {0.1f, -3.0f, 0.4f}};
    int hits = 0, misses = 0, differ = 0;
    for (int isa = RT_ISA_BASELINE; isa <= RT_ISA_AVX2; isa++) {
        if (!rt_isa_available((rt_isa)isa)) { printf("  skip: %s not available\n", rt_isa_name((rt_isa)isa)); continue; }
        for (int round = 0; round < 600; round++) {
            int n = 1 + round % RT_EACH_MAX;
            make_rays(&r, pos, idx, n, round % 5, origins[round / 5 % 6]);
            float t[RT_EACH_MAX], u[RT_EACH_MAX], v[RT_EACH_MAX];
            uint8_t hit[RT_EACH_MAX];
            rt_intersect_each_isa((rt_isa)isa, pos, idx, &r, t, u, v, hit);
            for (int i = 0; i < n; i++) {
                const float d[3] = {r.dir[0][i], r.dir[1][i], r.dir[2][i]};
                rt_wtray w;
                float rt, ru, rv;
                rt_wtray_init(&w, r.org, d);
                int rh = rt_tri_intersect(&w, pos + 9 * i, pos + 9 * i + 3, pos + 9 * i + 6,
                                          r.tmin, r.tmax, &rt, &ru, &rv);
                differ += hit[i] != rh || (rh && (memcmp(&t[i], &rt, 4) || memcmp(&u[i], &ru, 4) ||
                                                  memcmp(&v[i], &rv, 4)));
                hits += rh;
                misses += !rh;
            }
        }
    }
    CHECK_MSG(differ == 0, "%d of %d rays differ from the scalar test", differ, hits + misses);
    CHECK(hits > 1000 && misses > 100);
}

int main(void)
{
    RUN(test_depth_rect_any_order);
    RUN(test_depth_rect_kernels_agree);
    RUN(test_intersect_each_matches_scalar);
    return check_finish();
}
