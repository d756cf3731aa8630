/* plh_sum (pipelines/hybrid/internal.h), the hybrid's fixed-point add of a colour to a
 * slot's sums without branches, adds exactly what plrt_to_fixed (pipelines/raytrace/
 * sums.h) gives channel by channel, which the ray tracer's and om's sums use: NaN as 0,
 * infinities and values past +-PLRT_CONTRIB_MAX clamped, halves rounded alike, and
 * 100,000 pseudo-random values over the range. */
#include "pipelines/hybrid/internal.h"
#include "tests/check.h"

#include <math.h>
#include <stdint.h>

static bool same_as_scalar(const float rgb[3])
{
    int64_t sums[6] = {1, 2, 3, 4, 5, 6};
    plh_sum(sums, 1, rgb);
    bool ok = sums[0] == 1 && sums[1] == 2 && sums[2] == 3;
    for (int ch = 0; ch < 3; ch++) ok = ok && sums[3 + ch] == 4 + ch + plrt_to_fixed(rgb[ch]);
    return ok;
}

static void test_special_values(void)
{
    const float half = 0.5f / (float)PL_FIXED_ONE;       /* rounds to even */
    const float v[] = {0.0f, -0.0f, 1.0f, -1.0f, NAN, -NAN, INFINITY, -INFINITY, 65536.0f,
                       -65536.0f, 65537.0f, -1e30f, 1e30f, half, 3 * half, -half, 1e-30f,
                       0.7310586f, 0.1f};
    const int n = (int)(sizeof v / sizeof *v);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            const float rgb[3] = {v[i], v[j], v[(i + j) % n]};
            CHECK_MSG(same_as_scalar(rgb), "(%g, %g, %g)", rgb[0], rgb[1], rgb[2]);
        }
}

static void test_random_values(void)
{
    uint64_t x = 0x9e3779b97f4a7c15u;
    int bad = 0;
    for (int i = 0; i < 100000; i++) {
        float rgb[3];
        for (int ch = 0; ch < 3; ch++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            const float unit = (float)(x >> 40) / (float)(1u << 24);
            rgb[ch] = (unit - 0.25f) * (i % 3 ? 4.0f : 200000.0f);
        }
        bad += !same_as_scalar(rgb);
    }
    CHECK_MSG(bad == 0, "%d of 100000 differ", bad);
}

int main(void)
{
    RUN(test_special_values);
    RUN(test_random_values);
    return check_finish();
}
