/* rasterizer/samples: rs_sample_row_take's AVX2 kernels (eight samples a step on int32
 * edge values, four on int64 for rows whose values do not fit) give the baseline's held
 * depths (bit for bit), owners, ties and result, at 4 and 8 samples, on random small and
 * huge triangles, with held depths that the triangle's samples beat, lose to and equal
 * (ties), rows of odd and even length. A wrong lane (a sample's depth, coverage or tie
 * given to its neighbour) fails it. */
#include "raytracer/isa.h"
#include "rasterizer/samples.h"
#include "tests/check.h"

#include <float.h>
#include <stdint.h>
#include <string.h>

#define W 96
#define MAXN 80

static uint32_t rng_state = 777;

static uint32_t next_u32(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

static int64_t coord(int64_t span) { return (int64_t)(next_u32() % (uint32_t)span) - span / 4; }

/* A random triangle set up with the pattern's reach; false when it covers nothing. */
static bool random_triangle(const rs_samples *p, bool huge, rs_setup *s)
{
    const int64_t span = huge ? (int64_t)1 << 27 : (int64_t)(next_u32() % 24 + 2) * 256;
    const int64_t cx = (int64_t)(next_u32() % W) * 256, cy = (int64_t)(next_u32() % W) * 256;
    rs_screen_vertex v[3];
    for (int k = 0; k < 3; k++)
        v[k] = (rs_screen_vertex){cx + coord(span), cy + coord(span), (float)(next_u32() % 1000) / 1000.0f,
                                  1.0f, true};
    const rs_screen_vertex *pv[3] = {&v[0], &v[1], &v[2]};
    return rs_setup_projected_reach(pv, W, W, &p->reach, s);
}

/* Held depths for row y from x0: each sample beaten, unbeatable, or equal to the
 * triangle's depth there (a tie); owners random. */
static void random_held(const rs_setup *s, const rs_depth_plane *z, const rs_samples *p, int x0, int y,
                        int n, float *held, uint32_t *owner)
{
    rs_edge01 e;
    rs_edge01_of(s, &e);
    for (int j = 0; j < n; j++)
        for (int k = 0; k < p->count; k++) {
            const uint32_t r = next_u32() % 4;
            float d = rs_sample_depth(&e, z, p, k, x0 + j, y);
            held[j * p->count + k] = r == 0 ? FLT_MAX : r == 1 ? -1.0f : r == 2 ? d : d + 1e-3f;
            owner[j * p->count + k] = next_u32() % 5;
        }
}

static int compare_rows(int count, bool huge)
{
    const rs_samples *p = rs_sample_pattern(count);
    int bad = 0;
    for (int t = 0; t < 300; t++) {
        rs_setup s;
        if (!random_triangle(p, huge, &s)) continue;
        rs_interp ip;
        rs_interp_of(&s, &ip);
        rs_depth_plane z;
        rs_depth_plane_of(&ip, &z);
        rs_sample_walk w;
        rs_sample_walk_of(&s, p, &z, &w);
        for (int y = s.y0; y <= s.y1 && y < s.y0 + 8; y++) {
            const int x0 = s.x0, n = s.x1 - s.x0 + 1 < MAXN ? s.x1 - s.x0 + 1 : MAXN;
            float held[2][MAXN * RS_MAX_SAMPLES];
            uint32_t owner[2][MAXN * RS_MAX_SAMPLES];
            uint8_t tie[2][MAXN];
            random_held(&s, &z, p, x0, y, n, held[0], owner[0]);
            memcpy(held[1], held[0], sizeof held[0]);
            memcpy(owner[1], owner[0], sizeof owner[0]);
            rs_sample_walk_bound(&s, &w, x0, y, x0 + n, y + 1);   /* int32 lanes where they fit */
            int64_t e[3];
            rs_centre_edges(&s, x0, y, e);
            bool r0 = rs_sample_row_take(&s, &w, &z, e, n, held[0], owner[0], 9, tie[0], false);
            bool r1 = rs_sample_row_take(&s, &w, &z, e, n, held[1], owner[1], 9, tie[1], true);
            const size_t m = (size_t)n * (size_t)count;
            if (r0 != r1 || memcmp(held[0], held[1], m * sizeof(float)) ||
                memcmp(owner[0], owner[1], m * sizeof(uint32_t)) || memcmp(tie[0], tie[1], (size_t)n)) {
                if (bad++ < 3) fprintf(stderr, "  %dx %s triangle %d row %d (%d pixels) differs\n", count,
                                       huge ? "huge" : "small", t, y, n);
            }
            /* the four pixels left of the bounds: no sample there, and the pixel after them
             * (the triangle's first, which may be covered) is not the row's to touch */
            float held_left[5 * RS_MAX_SAMPLES];
            uint32_t owner_left[5 * RS_MAX_SAMPLES] = {0};
            uint8_t tie_left[5];
            for (int k = 0; k < 5 * RS_MAX_SAMPLES; k++) held_left[k] = FLT_MAX;
            rs_sample_walk_bound(&s, &w, x0 - 4, y, x0 + 1, y + 1);
            rs_centre_edges(&s, x0 - 4, y, e);
            if (rs_sample_row_take(&s, &w, &z, e, 4, held_left, owner_left, 9, tie_left, true) ||
                held_left[4 * count] != FLT_MAX || owner_left[4 * count] != 0) {
                if (bad++ < 3) fprintf(stderr, "  %dx %s triangle %d row %d: a row left of it took samples\n", count,
                                       huge ? "huge" : "small", t, y);
            }
        }
    }
    return bad;
}

static void test_avx2_rows_match_baseline(void)
{
    if (rt_isa_best() != RT_ISA_AVX2) {
        printf("skip test_avx2_rows_match_baseline: the CPU has no AVX2 (or GRAMPS_ISA=baseline)\n");
        return;
    }
    for (int count = 4; count <= 8; count += 4)
        for (int huge = 0; huge < 2; huge++)
            CHECK_MSG(compare_rows(count, huge) == 0, "%dx %s: AVX2 rows differ from the baseline", count,
                      huge ? "huge" : "small");
}

int main(void)
{
    RUN(test_avx2_rows_match_baseline);
    return check_finish();
}
