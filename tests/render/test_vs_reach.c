/* plr_vs_setups_of (pipelines/raster/vs_reach.c), the VS's setup four triangles at a
 * time, against rs_setup_projected_reach: the setups equal its, field for field, and its
 * no_pixel bits say which triangles reach no pixel: for every
 * triangle with a nonzero area its bit is set exactly when the setup fails, under the
 * pixel centre's reach and wider and narrower ones, for chunks of 1 to 32 triangles
 * (no bit past the chunk's count), on random small triangles about the image's edges
 * (where the clamping decides) and larger ones. Without AVX2 it makes nothing. */
#include "pipelines/raster/internal.h"
#include "raytracer/isa.h"
#include "tests/check.h"

#include <stdint.h>
#include <string.h>

static uint32_t lcg_state = 31337;
static uint32_t rnd32(void)
{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return lcg_state >> 8;
}

/* A coordinate near the image's span 0..n pixels (subpixels), often near an edge. */
static int32_t coordinate(int n, int spread)
{
    const int one = 1 << RS_SUBPIXEL_BITS;
    const int32_t anchor = (rnd32() & 1) ? (int32_t)(rnd32() % (uint32_t)(n + 4)) - 2 : (int32_t)(rnd32() & 1) * n;
    return anchor * one + (int32_t)(rnd32() % (uint32_t)(2 * spread + 1)) - spread;
}

static void random_chunk(sh_vs_vertices *v, int count, int width, int height)
{
    for (int j = 0; j < count; j++) {
        const int spread = (rnd32() & 3) ? 300 : 4000;
        const int32_t cx = coordinate(width, 600), cy = coordinate(height, 600);
        for (int k = 0; k < 3; k++) {
            v->x[3 * j + k] = cx + (int32_t)(rnd32() % (uint32_t)(2 * spread + 1)) - spread;
            v->y[3 * j + k] = cy + (int32_t)(rnd32() % (uint32_t)(2 * spread + 1)) - spread;
        }
    }
}

static bool setup_fails(const sh_vs_vertices *v, int j, int width, int height, const rs_reach *r, bool *flat)
{
    rs_screen_vertex sv[3];
    for (int k = 0; k < 3; k++) sv[k] = (rs_screen_vertex){v->x[3 * j + k], v->y[3 * j + k], 0.5f, 1.0f, true};
    *flat = (sv[1].x - sv[0].x) * (sv[2].y - sv[0].y) == (sv[2].x - sv[0].x) * (sv[1].y - sv[0].y);
    rs_setup su;
    return !rs_setup_projected_reach((const rs_screen_vertex *const[3]){&sv[0], &sv[1], &sv[2]}, width, height,
                                     r, &su);
}

/* The no-pixel bits of a chunk (0 when the setups are not made: no AVX2). */
static uint32_t no_pixel(const sh_vs_vertices *v, int count, int width, int height, const rs_reach *r, bool avx2)
{
    plr_vs_setups s;
    return plr_vs_setups_of(v, count, width, height, r, avx2, &s) ? s.no_pixel : 0;
}

static void test_matches_setup(void)
{
    if (!rt_isa_available(RT_ISA_AVX2)) SKIP("no AVX2 on this CPU");
    const rs_reach reaches[] = {rs_centre_reach, {32, 224, 96, 160}, {0, 255, 0, 255}, {128, 128, 0, 16}};
    const int sizes[][2] = {{37, 23}, {64, 64}, {1, 1}};
    int wrong = 0, rejected = 0, kept = 0, past_count = 0;
    for (int round = 0; round < 400; round++) {
        const rs_reach *r = &reaches[round % 4];
        const int width = sizes[round % 3][0], height = sizes[round % 3][1];
        const int count = 1 + round % 32;
        sh_vs_vertices v;
        random_chunk(&v, 32, width, height);
        const uint32_t bits = no_pixel(&v, count, width, height, r, true);
        past_count += count < 32 && (bits >> count) != 0;
        for (int j = 0; j < count; j++) {
            bool flat;
            const bool fails = setup_fails(&v, j, width, height, r, &flat), bit = bits >> j & 1;
            if (flat) continue;               /* the setup fails it for its area */
            wrong += bit != fails;
            rejected += bit;
            kept += !fails;
        }
    }
    CHECK_MSG(wrong == 0, "%d triangles' bits differ from the setup's answer", wrong);
    CHECK(past_count == 0);
    CHECK(rejected > 500 && kept > 500);      /* both answers are exercised */
}

/* plr_vs_setup_take's rs_setup is rs_setup_projected_reach's, field for field, for every
 * triangle the setup keeps (both windings, clamped bounds, every reach), and the vector
 * setups' area is the setup's signed area. */
static void test_setups_match_scalar(void)
{
    if (!rt_isa_available(RT_ISA_AVX2)) SKIP("no AVX2 on this CPU");
    const rs_reach reaches[] = {rs_centre_reach, {32, 224, 96, 160}, {0, 255, 0, 255}};
    int wrong = 0, compared = 0;
    for (int round = 0; round < 300; round++) {
        const rs_reach *r = &reaches[round % 3];
        const int width = 64 + round % 7, height = 48 + round % 5, count = 1 + round % 32;
        sh_vs_vertices v;
        random_chunk(&v, 32, width, height);
        for (int i = 0; i < 3 * count; i++) {
            v.z[i] = (float)(rnd32() % 1000) / 1000.0f;
            v.inv_w[i] = 1.0f + (float)(rnd32() % 100);
            v.clip[3][i] = 1.0f;
        }
        plr_vs_setups setups;
        CHECK(plr_vs_setups_of(&v, count, width, height, r, true, &setups));
        for (int j = 0; j < count; j++) {
            rs_screen_vertex sv[3];
            for (int k = 0; k < 3; k++)
                sv[k] = (rs_screen_vertex){v.x[3 * j + k], v.y[3 * j + k], v.z[3 * j + k], v.inv_w[3 * j + k], true};
            rs_setup want, got;
            memset(&want, 0, sizeof want);
            memset(&got, 0, sizeof got);
            if (!rs_setup_projected_reach((const rs_screen_vertex *const[3]){&sv[0], &sv[1], &sv[2]}, width,
                                          height, r, &want))
                continue;
            const int64_t area = (sv[1].x - sv[0].x) * (sv[2].y - sv[0].y) - (sv[2].x - sv[0].x) * (sv[1].y - sv[0].y);
            plr_vs_setup_take(&setups, &v, j, &got);
            wrong += memcmp(&want, &got, sizeof want) != 0 || setups.area[j] != area ||
                     (setups.no_pixel >> j & 1);
            compared++;
        }
    }
    CHECK_MSG(wrong == 0, "%d of %d set-up triangles differ from the scalar setup", wrong, compared);
    CHECK(compared > 1000);
}

static void test_baseline_sets_none(void)
{
    sh_vs_vertices v;
    random_chunk(&v, 32, 16, 16);
    CHECK(no_pixel(&v, 32, 16, 16, &rs_centre_reach, false) == 0);
}

int main(void)
{
    RUN(test_matches_setup);
    RUN(test_setups_match_scalar);
    RUN(test_baseline_sets_none);
    return check_finish();
}
