/* SSE baseline, the AVX2 function target, and the width vocabulary of the kernel templates.
 *
 * Data flow: included by tri_intersect.h and through it by every traversal file; holds no
 * data. The kernels' hot helpers (slab tests, block tests, child ordering) must inline
 * into the traversal loops: a call there spills the SSE ray constants and costs more than
 * the work, and GCC at -O2 declines to inline the larger ones on its own.
 *
 * Templates (the *_tmp.h files, in the manner of llvmpipe's lp_rast_tri_tmp.h) are
 * included once per width RT_W = 4 (SSE2) or 8 (AVX2) and write their arithmetic with
 * the vector operations below: V(add) is v4_add or v8_add, VF is vf4 or vf8. Each v8_
 * operation is the same IEEE operation as its v4_ twin on twice the lanes, so a template
 * computes the same bits at both widths. */
#ifndef RAYTRACER_SIMD_H
#define RAYTRACER_SIMD_H

#if !defined(__SSE2__)
#error "raytracer/ needs SSE2 (x86-64)"
#endif
#include <immintrin.h>
#include <stdint.h>

#define RT_INLINE static inline __attribute__((always_inline))

/* The AVX2 kernels: compiled for AVX2 per function, not per file, so the library still
 * runs on any x86-64; callers check rt_bvh.isa (isa.h) first. "avx2" alone, without
 * "fma": a fused multiply-add would round differently from the SSE kernels (and -std=c11
 * keeps GCC from contracting a*b+c). RT_INLINE helpers inline into these (the baseline is
 * a subset). */
#define RT_AVX2 __attribute__((target("avx2")))
#define RT_AVX2_INLINE static inline __attribute__((always_inline, target("avx2")))

/* ---- template plumbing ------------------------------------------------------------ */

#define RT_CAT_(a, b) a##b
#define RT_CAT(a, b) RT_CAT_(a, b)
#define RT_CAT3_(a, b, c) a##b##c
#define RT_CAT3(a, b, c) RT_CAT3_(a, b, c)

/* Inside a template: TAG(name) is name4 or name8, V(op) the vector operation, VF the
 * vector type, W_INLINE / W_FN the function attributes of the width. */
#define TAG(name) RT_CAT(name, RT_W)
#define V(op) RT_CAT3(v, RT_W, _##op)
#define VF RT_CAT(vf, RT_W)
#define W_INLINE RT_CAT(RT_W_INLINE_, RT_W)
#define W_FN RT_CAT(RT_W_FN_, RT_W)
#define RT_W_INLINE_4 RT_INLINE
#define RT_W_INLINE_8 RT_AVX2_INLINE
#define RT_W_FN_4 static
#define RT_W_FN_8 static RT_AVX2

/* ---- 4 lanes, SSE2 ------------------------------------------------------------------ */

typedef __m128 vf4;
RT_INLINE vf4 v4_set1(float x) { return _mm_set1_ps(x); }
RT_INLINE vf4 v4_zero(void) { return _mm_setzero_ps(); }
RT_INLINE vf4 v4_load(const float *p) { return _mm_load_ps(p); }     /* 16-byte aligned */
RT_INLINE void v4_store(float *p, vf4 a) { _mm_store_ps(p, a); }
/* W/4 aligned runs of 4 floats, stride floats apart: here just the one at p. */
RT_INLINE vf4 v4_load_runs(const float *p, int stride)
{
    (void)stride;
    return _mm_load_ps(p);
}
RT_INLINE void v4_storeu(float *p, vf4 a) { _mm_storeu_ps(p, a); }
RT_INLINE vf4 v4_add(vf4 a, vf4 b) { return _mm_add_ps(a, b); }
RT_INLINE vf4 v4_sub(vf4 a, vf4 b) { return _mm_sub_ps(a, b); }
RT_INLINE vf4 v4_mul(vf4 a, vf4 b) { return _mm_mul_ps(a, b); }
RT_INLINE vf4 v4_div(vf4 a, vf4 b) { return _mm_div_ps(a, b); }
RT_INLINE vf4 v4_min(vf4 a, vf4 b) { return _mm_min_ps(a, b); }
RT_INLINE vf4 v4_max(vf4 a, vf4 b) { return _mm_max_ps(a, b); }
RT_INLINE vf4 v4_and(vf4 a, vf4 b) { return _mm_and_ps(a, b); }
RT_INLINE vf4 v4_or(vf4 a, vf4 b) { return _mm_or_ps(a, b); }
RT_INLINE vf4 v4_andnot(vf4 a, vf4 b) { return _mm_andnot_ps(a, b); }   /* ~a & b */
/* Comparisons: ordered (false for NaN), but neq, which is true for NaN (cmpneq). */
RT_INLINE vf4 v4_lt(vf4 a, vf4 b) { return _mm_cmplt_ps(a, b); }
RT_INLINE vf4 v4_le(vf4 a, vf4 b) { return _mm_cmple_ps(a, b); }
RT_INLINE vf4 v4_gt(vf4 a, vf4 b) { return _mm_cmpgt_ps(a, b); }
RT_INLINE vf4 v4_ge(vf4 a, vf4 b) { return _mm_cmpge_ps(a, b); }
RT_INLINE vf4 v4_eq(vf4 a, vf4 b) { return _mm_cmpeq_ps(a, b); }
RT_INLINE vf4 v4_neq(vf4 a, vf4 b) { return _mm_cmpneq_ps(a, b); }
RT_INLINE unsigned v4_mask(vf4 a) { return (unsigned)_mm_movemask_ps(a); }
/* m ? a : b per lane, m all ones or all zeros. */
RT_INLINE vf4 v4_select(vf4 m, vf4 a, vf4 b)
{
    return _mm_or_ps(_mm_and_ps(m, a), _mm_andnot_ps(m, b));
}

/* Integer bit patterns as a float vector (lane selects of small integers), and back. */
RT_INLINE vf4 v4_set1_bits(int x) { return _mm_castsi128_ps(_mm_set1_epi32(x)); }
RT_INLINE void v4_store_bits(int32_t *p, vf4 a) { _mm_storeu_si128((__m128i *)p, _mm_castps_si128(a)); }
/* Smallest and largest lane. */
RT_INLINE float v4_hmin(vf4 v)
{
    v = _mm_min_ps(v, _mm_shuffle_ps(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm_cvtss_f32(_mm_min_ps(v, _mm_shuffle_ps(v, v, _MM_SHUFFLE(2, 3, 0, 1))));
}
RT_INLINE float v4_hmax(vf4 v)
{
    v = _mm_max_ps(v, _mm_shuffle_ps(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm_cvtss_f32(_mm_max_ps(v, _mm_shuffle_ps(v, v, _MM_SHUFFLE(2, 3, 0, 1))));
}

/* ---- 8 lanes, AVX2 ------------------------------------------------------------------ */

typedef __m256 vf8;
RT_AVX2_INLINE vf8 v8_set1(float x) { return _mm256_set1_ps(x); }
RT_AVX2_INLINE vf8 v8_zero(void) { return _mm256_setzero_ps(); }
RT_AVX2_INLINE vf8 v8_load(const float *p) { return _mm256_load_ps(p); }   /* 32-byte aligned */
RT_AVX2_INLINE void v8_store(float *p, vf8 a) { _mm256_store_ps(p, a); }
RT_AVX2_INLINE vf8 v8_load_runs(const float *p, int stride)
{
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_load_ps(p)), _mm_load_ps(p + stride), 1);
}
RT_AVX2_INLINE void v8_storeu(float *p, vf8 a) { _mm256_storeu_ps(p, a); }
RT_AVX2_INLINE vf8 v8_add(vf8 a, vf8 b) { return _mm256_add_ps(a, b); }
RT_AVX2_INLINE vf8 v8_sub(vf8 a, vf8 b) { return _mm256_sub_ps(a, b); }
RT_AVX2_INLINE vf8 v8_mul(vf8 a, vf8 b) { return _mm256_mul_ps(a, b); }
RT_AVX2_INLINE vf8 v8_div(vf8 a, vf8 b) { return _mm256_div_ps(a, b); }
RT_AVX2_INLINE vf8 v8_min(vf8 a, vf8 b) { return _mm256_min_ps(a, b); }
RT_AVX2_INLINE vf8 v8_max(vf8 a, vf8 b) { return _mm256_max_ps(a, b); }
RT_AVX2_INLINE vf8 v8_and(vf8 a, vf8 b) { return _mm256_and_ps(a, b); }
RT_AVX2_INLINE vf8 v8_or(vf8 a, vf8 b) { return _mm256_or_ps(a, b); }
RT_AVX2_INLINE vf8 v8_andnot(vf8 a, vf8 b) { return _mm256_andnot_ps(a, b); }
RT_AVX2_INLINE vf8 v8_lt(vf8 a, vf8 b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
RT_AVX2_INLINE vf8 v8_le(vf8 a, vf8 b) { return _mm256_cmp_ps(a, b, _CMP_LE_OQ); }
RT_AVX2_INLINE vf8 v8_gt(vf8 a, vf8 b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
RT_AVX2_INLINE vf8 v8_ge(vf8 a, vf8 b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
RT_AVX2_INLINE vf8 v8_eq(vf8 a, vf8 b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
RT_AVX2_INLINE vf8 v8_neq(vf8 a, vf8 b) { return _mm256_cmp_ps(a, b, _CMP_NEQ_UQ); }
RT_AVX2_INLINE unsigned v8_mask(vf8 a) { return (unsigned)_mm256_movemask_ps(a); }
RT_AVX2_INLINE vf8 v8_select(vf8 m, vf8 a, vf8 b) { return _mm256_blendv_ps(b, a, m); }
RT_AVX2_INLINE vf8 v8_set1_bits(int x) { return _mm256_castsi256_ps(_mm256_set1_epi32(x)); }
RT_AVX2_INLINE void v8_store_bits(int32_t *p, vf8 a)
{
    _mm256_storeu_si256((__m256i *)p, _mm256_castps_si256(a));
}
RT_AVX2_INLINE float v8_hmin(vf8 v)
{
    return v4_hmin(_mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1)));
}
RT_AVX2_INLINE float v8_hmax(vf8 v)
{
    return v4_hmax(_mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1)));
}

/* Eight rows of eight floats become columns: v[k][j] <- v[j][k]. */
RT_AVX2_INLINE void v8_transpose8(vf8 v[8])
{
    vf8 t[8], u[8];
    for (int k = 0; k < 8; k += 2) {
        t[k] = _mm256_unpacklo_ps(v[k], v[k + 1]);
        t[k + 1] = _mm256_unpackhi_ps(v[k], v[k + 1]);
    }
    for (int k = 0; k < 8; k += 4) {
        u[k] = _mm256_shuffle_ps(t[k], t[k + 2], 0x44);
        u[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], 0xee);
        u[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0x44);
        u[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0xee);
    }
    for (int k = 0; k < 4; k++) {
        v[k] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x20);
        v[k + 4] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x31);
    }
}

#endif
