/* plr_prim_ok (pipelines/raster/packet_checks.c), which the raster stages run on every
 * set-up triangle a stage before them sent (a plugin's packets are data), against its
 * definition written out field by field: the primitive id names a scene triangle, the
 * pixel bounds lie in the image, the area is positive and every coordinate difference
 * a[k], b[k] lies in [-(2^29 - 1), 2^29 - 1]. Each difference is tried at and just past
 * both ends and at the int32 extremes, alone and with the others in range, so a lane of
 * the vector test left out, or a bound one off, fails it. */
#include "pipelines/raster/internal.h"
#include "tests/check.h"

#include <stdint.h>

#define REACH ((1 << 29) - 1)

static bool defined_ok(const plr_state *s, const plr_prim *p)
{
    const rs_setup *su = &p->su;
    bool ok = p->tri.prim < s->geo->ntriangles && su->area > 0 && su->x0 >= 0 && su->x0 <= su->x1 &&
              su->x1 < s->width && su->y0 >= 0 && su->y0 <= su->y1 && su->y1 < s->height;
    for (int k = 0; k < 3; k++)
        ok = ok && su->a[k] >= -REACH && su->a[k] <= REACH && su->b[k] >= -REACH && su->b[k] <= REACH;
    return ok;
}

static uint32_t lcg_state = 4242;
static uint32_t rnd32(void)
{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return lcg_state;
}

static plr_prim good_prim(void)
{
    plr_prim p = {0};
    p.tri.prim = 5;
    p.su.area = 1000;
    p.su.x0 = 3, p.su.x1 = 9, p.su.y0 = 2, p.su.y1 = 7;
    for (int k = 0; k < 3; k++) p.su.a[k] = 100 * (k + 1), p.su.b[k] = -50 * (k + 1);
    return p;
}

static void test_differences_at_their_bounds(void)
{
    sc_geometry geo = {0};
    geo.ntriangles = 10;
    plr_state s = {0};
    s.width = 64, s.height = 48;
    s.geo = &geo;
    const int32_t values[] = {0, REACH, -REACH, REACH + 1, -REACH - 1, INT32_MAX, INT32_MIN, 1, -1};
    int wrong = 0, refused = 0;
    for (int which = 0; which < 6; which++)
        for (size_t v = 0; v < sizeof values / sizeof values[0]; v++) {
            plr_prim p = good_prim();
            (which < 3 ? p.su.a : p.su.b)[which % 3] = values[v];
            bool got = plr_prim_ok(&s, &p), want = defined_ok(&s, &p);
            refused += !want;
            if (got != want && wrong++ < 5)
                fprintf(stderr, "  %c[%d] = %d: %d, expected %d\n", which < 3 ? 'a' : 'b', which % 3,
                        (int)values[v], got, want);
        }
    CHECK_MSG(wrong == 0, "%d single-difference cases differ from the definition", wrong);
    CHECK(refused == 6 * 4);
}

static void test_random_prims(void)
{
    sc_geometry geo = {0};
    geo.ntriangles = 1000;
    plr_state s = {0};
    s.width = 640, s.height = 480;
    s.geo = &geo;
    int wrong = 0, accepted = 0;
    for (int trial = 0; trial < 200000; trial++) {
        plr_prim p = good_prim();
        const uint32_t what = rnd32();
        if (what & 1) p.tri.prim = rnd32() % 1200;
        if (what & 2) p.su.area = (int64_t)(rnd32() % 2000) - 100;
        if (what & 4) p.su.x0 = (int)(rnd32() % 700) - 30, p.su.x1 = (int)(rnd32() % 700) - 30;
        if (what & 8) p.su.y0 = (int)(rnd32() % 520) - 20, p.su.y1 = (int)(rnd32() % 520) - 20;
        for (int k = 0; k < 3; k++) {        /* mostly near the bounds, sometimes anywhere */
            const uint32_t r = rnd32();
            const int32_t near = (int32_t)(r >> 4 & 7) - 4;
            if (r & 1) p.su.a[k] = (r & 2 ? REACH : -REACH) + near;
            if (r & 4) p.su.b[k] = (r & 8 ? REACH : -REACH) + near;
            if ((r >> 8 & 31) == 0) p.su.a[k] = (int32_t)rnd32();
        }
        const bool got = plr_prim_ok(&s, &p), want = defined_ok(&s, &p);
        accepted += want;
        wrong += got != want;
    }
    CHECK_MSG(wrong == 0, "%d random triangles differ from the definition", wrong);
    CHECK(accepted > 1000);                  /* both answers are exercised */
}

int main(void)
{
    RUN(test_differences_at_their_bounds);
    RUN(test_random_prims);
    return check_finish();
}
