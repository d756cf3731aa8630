/* vs_reach.c — which triangles of a VS chunk reach no pixel, eight at a time, before the
 * VS copies their corners into the setup's format (geometry.c). */
#include "pipelines/raster/internal.h"

#if defined(__x86_64__)
#include <immintrin.h>

/* Corner k's coordinate (x or y array a) of triangles j..j+7. */
__attribute__((target("avx2"))) static inline __m256i corner(const int32_t *a, __m256i three_j, int k)
{
    return _mm256_i32gather_epi32((const int *)a, _mm256_add_epi32(three_j, _mm256_set1_epi32(k)), 4);
}

/* Lanes whose pixels lo..hi along one axis (coordinates a of the three corners, reach
 * lo_r..hi_r, image extent n) are empty: max(0, ceil((min - hi_r) / one)) >
 * min(n - 1, floor((max - lo_r) / one)), the setup's rounding in int32 lanes. */
__attribute__((target("avx2"))) static inline __m256i axis_empty(const int32_t *a, __m256i three_j,
                                                                 int32_t lo_r, int32_t hi_r, int n)
{
    const __m256i c0 = corner(a, three_j, 0), c1 = corner(a, three_j, 1), c2 = corner(a, three_j, 2);
    const __m256i lo = _mm256_min_epi32(_mm256_min_epi32(c0, c1), c2);
    const __m256i hi = _mm256_max_epi32(_mm256_max_epi32(c0, c1), c2);
    const int32_t round_up = (1 << RS_SUBPIXEL_BITS) - 1 - hi_r;
    __m256i p0 = _mm256_srai_epi32(_mm256_add_epi32(lo, _mm256_set1_epi32(round_up)), RS_SUBPIXEL_BITS);
    __m256i p1 = _mm256_srai_epi32(_mm256_sub_epi32(hi, _mm256_set1_epi32(lo_r)), RS_SUBPIXEL_BITS);
    p0 = _mm256_max_epi32(p0, _mm256_setzero_si256());
    p1 = _mm256_min_epi32(p1, _mm256_set1_epi32(n - 1));
    return _mm256_cmpgt_epi32(p0, p1);
}

__attribute__((target("avx2"))) static uint32_t no_pixel_avx2(const sh_vs_vertices *v, int count, int width,
                                                              int height, const rs_reach *r)
{
    uint32_t mask = 0;
    for (int j = 0; j < count; j += 8) {
        const __m256i three_j = _mm256_mullo_epi32(_mm256_add_epi32(_mm256_set1_epi32(j),
                                                                    _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)),
                                                   _mm256_set1_epi32(3));
        const __m256i empty = _mm256_or_si256(axis_empty(v->x, three_j, r->lo_x, r->hi_x, width),
                                              axis_empty(v->y, three_j, r->lo_y, r->hi_y, height));
        mask |= (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(empty)) << j;
    }
    return count < 32 ? mask & ((1u << count) - 1) : mask;
}
#endif

uint32_t plr_vs_no_pixel(const sh_vs_vertices *v, int count, int width, int height, const rs_reach *r,
                         bool avx2)
{
#if defined(__x86_64__)
    if (avx2) return no_pixel_avx2(v, count, width, height, r);
#endif
    (void)v, (void)count, (void)width, (void)height, (void)r, (void)avx2;
    return 0;
}
