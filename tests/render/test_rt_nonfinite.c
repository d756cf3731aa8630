/* Non-finite rays against the ray tracer's kernels: a ray with a NaN or infinite origin
 * or direction, a zero direction, or a NaN range misses (and is never occluded) in every
 * kernel and ISA — rt_intersect1, rt_occluded1 and both packet paths — and does not
 * disturb the other rays of its packet. Scenes: one triangle, and a grid of 2048. */
#include "raytracer/bvh.h"
#include "raytracer/bvh_traverse.h"
#include "raytracer/packet.h"
#include "tests/check.h"

#include <math.h>

#define GRID 32

static rt_bvh *one_triangle(void)
{
    static const float pos[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    static const uint32_t idx[3] = {0, 1, 2};
    return rt_bvh_build(pos, idx, 1, NULL);
}

/* A GRID x GRID quad grid in z = 0 over [0,1]^2: deep enough for packets to descend. */
static rt_bvh *grid(void)
{
    static float pos[3 * (GRID + 1) * (GRID + 1)];
    static uint32_t idx[6 * GRID * GRID];
    for (int y = 0, v = 0; y <= GRID; y++)
        for (int x = 0; x <= GRID; x++, v++) {
            pos[3 * v] = (float)x / GRID;
            pos[3 * v + 1] = (float)y / GRID;
            pos[3 * v + 2] = 0;
        }
    for (int y = 0, t = 0; y < GRID; y++)
        for (int x = 0; x < GRID; x++) {
            const uint32_t a = (uint32_t)(y * (GRID + 1) + x), b = a + 1, c = a + GRID + 1, d = c + 1;
            const uint32_t q[6] = {a, b, d, a, d, c};
            for (int k = 0; k < 6; k++) idx[t++] = q[k];
        }
    return rt_bvh_build(pos, idx, 2 * GRID * GRID, NULL);
}

/* Ray k of the hostile set; k < HOSTILE. Each starts from a ray that would hit. */
#define HOSTILE 14
static rt_ray hostile_ray(int k)
{
    rt_ray r = {{0.25f, 0.25f, 2.0f}, 0.0f, {0.0f, 0.0f, -1.0f}, INFINITY};
    const float bad[2] = {NAN, INFINITY};
    switch (k) {
    case 0: case 1: r.dir[0] = bad[k]; break;
    case 2: case 3: r.dir[2] = bad[k - 2]; break;
    case 4: r.dir[0] = r.dir[1] = r.dir[2] = NAN; break;
    case 5: r.dir[2] = -INFINITY; break;
    case 6: case 7: r.org[0] = bad[k - 6]; break;
    case 8: r.org[2] = -INFINITY; break;
    case 9: r.dir[2] = 0.0f; break;                     /* zero direction */
    case 10: r.tmin = NAN; break;
    case 11: r.tmax = NAN; break;
    case 12: r.tmin = -INFINITY; r.tmax = NAN; break;
    case 13: r.org[1] = NAN; r.dir[1] = INFINITY; r.tmin = NAN; break;
    }
    return r;
}

static void check_single(const rt_bvh *bvh)
{
    for (int k = 0; k < HOSTILE; k++) {
        const rt_ray r = hostile_ray(k);
        rt_hit h;
        CHECK_MSG(rt_intersect1(bvh, &r, &h) == 0 && h.prim == RT_NO_HIT, "ray %d", k);
        CHECK_MSG(rt_occluded1(bvh, &r) == 0, "ray %d", k);
    }
}

/* Packets of 64 coherent rays, one of them hostile: the others must keep their hits. */
static void check_packets(const rt_bvh *bvh)
{
    for (int k = 0; k < HOSTILE; k++) {
        for (int lane = 0; lane < RT_PACKET_MAX; lane += 21) {
            rt_ray rays[RT_PACKET_MAX];
            for (int i = 0; i < RT_PACKET_MAX; i++)
                rays[i] = (rt_ray){{0.1f + 0.01f * (float)i, 0.3f, 2.0f}, 0.0f, {0, 0, -1}, INFINITY};
            rays[lane] = hostile_ray(k);
            rt_hit hits[RT_PACKET_MAX];
            uint8_t occ[RT_PACKET_MAX];
            rt_intersect_packet(bvh, rays, RT_PACKET_MAX, hits, NULL);
            rt_occluded_packet(bvh, rays, RT_PACKET_MAX, occ, NULL);
            for (int i = 0; i < RT_PACKET_MAX; i++) {
                rt_hit one;
                const int hit = rt_intersect1(bvh, &rays[i], &one);
                CHECK_MSG(hit == (hits[i].prim != RT_NO_HIT) && one.prim == hits[i].prim,
                          "ray %d in lane %d, lane %d", k, lane, i);
                CHECK_MSG(occ[i] == (i != lane && hit), "ray %d in lane %d, lane %d", k, lane, i);
            }
        }
    }
}

static void for_each_isa(rt_bvh *bvh, void (*check)(const rt_bvh *))
{
    static const rt_isa isas[2] = {RT_ISA_BASELINE, RT_ISA_AVX2};
    for (int i = 0; i < 2; i++)
        if (rt_bvh_set_isa(bvh, isas[i]) == 0) check(bvh);
}

static void test_single_ray_kernels(void)
{
    rt_bvh *a = one_triangle(), *b = grid();
    CHECK(a && b);
    for_each_isa(a, check_single);
    for_each_isa(b, check_single);
    rt_bvh_free(a);
    rt_bvh_free(b);
}

static void test_packet_kernels(void)
{
    rt_bvh *a = one_triangle(), *b = grid();
    CHECK(a && b);
    for_each_isa(a, check_packets);
    for_each_isa(b, check_packets);
    rt_bvh_free(a);
    rt_bvh_free(b);
}

int main(void)
{
    RUN(test_single_ray_kernels);
    RUN(test_packet_kernels);
    return check_finish();
}
