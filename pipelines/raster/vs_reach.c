/* vs_reach.c — a VS chunk's triangles set up four at a time (AVX2): their pixel bounds,
 * which tell the ones that reach no pixel before the VS copies anything of them, their
 * area and edges (geometry.c). */
#include "pipelines/raster/internal.h"

#if defined(__x86_64__)
#include <immintrin.h>

/* Four int32 lanes widened to int64. */
__attribute__((target("avx2"))) static inline __m256i wide(__m128i a) { return _mm256_cvtepi32_epi64(a); }

/* The low 32 bits of four int64 lanes (a compare's mask narrowed). */
__attribute__((target("avx2"))) static inline __m128i narrow(__m256i a)
{
    return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(a, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6)));
}

/* Edge i from corner j to corner k, as rs_make_edge: a = -dy, b = dx, c = dy x_j - dx y_j,
 * bias 0 on a top or left edge (dy 2^32 - dx < 0), else -1; products of int32 values
 * below 2^29 and 2^28, exact in int64. */
__attribute__((target("avx2"))) static inline void edge4(const __m128i x[3], const __m128i y[3], int i, int j,
                                                         int k, plr_vs_setups *out, int t)
{
    const __m128i dx = _mm_sub_epi32(x[k], x[j]), dy = _mm_sub_epi32(y[k], y[j]);
    _mm_storeu_si128((__m128i *)&out->a[i][t], _mm_sub_epi32(_mm_setzero_si128(), dy));
    _mm_storeu_si128((__m128i *)&out->b[i][t], dx);
    const __m256i c = _mm256_sub_epi64(_mm256_mul_epi32(wide(dy), wide(x[j])), _mm256_mul_epi32(wide(dx), wide(y[j])));
    _mm256_storeu_si256((__m256i *)&out->c[i][t], c);
    const __m256i order = _mm256_sub_epi64(_mm256_slli_epi64(wide(dy), 32), wide(dx));
    const __m128i top_left = narrow(_mm256_cmpgt_epi64(_mm256_setzero_si256(), order));
    _mm_storeu_si128((__m128i *)&out->bias[i][t], _mm_xor_si128(top_left, _mm_set1_epi32(-1)));
}

/* Pixel bounds along one axis of corners c (reach lo_r..hi_r, image extent n): pixels p
 * one of whose points p * one + lo_r .. p * one + hi_r can lie inside, max(0, ceil((min -
 * hi_r) / one)) .. min(n - 1, floor((max - lo_r) / one)), the setup's rounding in int32
 * lanes. Returns the lanes where they are empty. */
__attribute__((target("avx2"))) static inline __m128i bounds4(const __m128i c[3], int32_t lo_r, int32_t hi_r, int n,
                                                              int32_t *lo_out, int32_t *hi_out)
{
    const __m128i lo = _mm_min_epi32(_mm_min_epi32(c[0], c[1]), c[2]);
    const __m128i hi = _mm_max_epi32(_mm_max_epi32(c[0], c[1]), c[2]);
    const int32_t round_up = (1 << RS_SUBPIXEL_BITS) - 1 - hi_r;
    const __m128i p0 = _mm_max_epi32(_mm_srai_epi32(_mm_add_epi32(lo, _mm_set1_epi32(round_up)), RS_SUBPIXEL_BITS),
                                     _mm_setzero_si128());
    const __m128i p1 = _mm_min_epi32(_mm_srai_epi32(_mm_sub_epi32(hi, _mm_set1_epi32(lo_r)), RS_SUBPIXEL_BITS),
                                     _mm_set1_epi32(n - 1));
    _mm_storeu_si128((__m128i *)lo_out, p0);
    _mm_storeu_si128((__m128i *)hi_out, p1);
    return _mm_cmpgt_epi32(p0, p1);
}

/* Triangles t..t+3: the area of the corners as given, the bounds (of any order), then
 * the oriented triangle's edges (corners 1 and 2 swapped where the area is negative).
 * Returns the four bits of the triangles whose bounds are empty. */
__attribute__((target("avx2"))) static uint32_t setups4(const sh_vs_vertices *v, int t, int width, int height,
                                                        const rs_reach *r, plr_vs_setups *out)
{
    const __m128i at = _mm_add_epi32(_mm_set1_epi32(3 * t), _mm_setr_epi32(0, 3, 6, 9));
    __m128i x[3], y[3];
    for (int k = 0; k < 3; k++) {
        x[k] = _mm_i32gather_epi32((const int *)v->x, _mm_add_epi32(at, _mm_set1_epi32(k)), 4);
        y[k] = _mm_i32gather_epi32((const int *)v->y, _mm_add_epi32(at, _mm_set1_epi32(k)), 4);
    }
    const __m256i area = _mm256_sub_epi64(
        _mm256_mul_epi32(wide(_mm_sub_epi32(x[1], x[0])), wide(_mm_sub_epi32(y[2], y[0]))),
        _mm256_mul_epi32(wide(_mm_sub_epi32(x[2], x[0])), wide(_mm_sub_epi32(y[1], y[0]))));
    _mm256_storeu_si256((__m256i *)&out->area[t], area);
    const __m128i empty = _mm_or_si128(bounds4(x, r->lo_x, r->hi_x, width, &out->x0[t], &out->x1[t]),
                                       bounds4(y, r->lo_y, r->hi_y, height, &out->y0[t], &out->y1[t]));
    const __m128i swap = narrow(_mm256_cmpgt_epi64(_mm256_setzero_si256(), area));
    const __m128i x1 = _mm_blendv_epi8(x[1], x[2], swap), y1 = _mm_blendv_epi8(y[1], y[2], swap);
    x[2] = _mm_blendv_epi8(x[2], x[1], swap);
    y[2] = _mm_blendv_epi8(y[2], y[1], swap);
    x[1] = x1;
    y[1] = y1;
    edge4(x, y, 0, 1, 2, out, t);
    edge4(x, y, 1, 2, 0, out, t);
    edge4(x, y, 2, 0, 1, out, t);
    return (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(empty));
}
#endif

bool plr_vs_setups_of(const sh_vs_vertices *v, int count, int width, int height, const rs_reach *r,
                      bool avx2, plr_vs_setups *out)
{
#if defined(__x86_64__)
    if (!avx2) return false;
    /* lanes past count read corners below SH_VS_MAX (8 steps of four triangles of three)
     * and mean nothing */
    _Static_assert(PLR_VS_CHUNK % 4 == 0 && PLR_VS_CHUNK <= 32, "a chunk is whole steps of four, its bits a word");
    uint32_t empty = 0;
    for (int t = 0; t < count; t += 4) empty |= setups4(v, t, width, height, r, out) << t;
    out->no_pixel = count < 32 ? empty & ((1u << count) - 1) : empty;
    return true;
#else
    (void)v, (void)count, (void)width, (void)height, (void)r, (void)avx2, (void)out;
    return false;
#endif
}
