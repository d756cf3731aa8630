/* texture_sample_packet.c — the sampler eight lanes at a time (see the header). Every
 * vector step below names the scalar step of texture_sample_body.h it repeats per lane. */
#include "shaders/texture_sample_packet.h"

#include "shaders/texture_sample_body.h"

#include <stdint.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* Every lane through the scalar sampler. */
static void sample_scalar(const sc_texture *t, const sc_sampler *s, const float *u, const float *v,
                          const float *lod, int n, int channels, float *const rgba[4])
{
    for (int i = 0; i < n; i++) {
        float c[4];
        sh_texture_sample_inline(t, s, u[i], v[i], lod[i], c);
        for (int k = 0; k < channels; k++) rgba[k][i] = c[k];
    }
}

#if defined(__x86_64__)

#define AVX2_INLINE static inline __attribute__((target("avx2"), always_inline))

/* Per level: its size and where its texels are, as a texel index from level 0's first
 * texel (32 bits: vector_covers checks that every level's texels are within reach). */
typedef struct level_table {
    int32_t width[SC_MAX_MIP_LEVELS], height[SC_MAX_MIP_LEVELS], offset[SC_MAX_MIP_LEVELS];
    const int *base;
} level_table;

/* What a call samples with: the sampler, whether every side of every level is a power of
 * two, and the channel count. Passed by value into the inlined kernels, so a literal mode
 * (sample_avx2's common case) resolves each of their branches at compile time. */
typedef struct sample_mode {
    sc_filter filter;
    sc_wrap wrap_u, wrap_v;
    bool pow2;
    int channels;
} sample_mode;

static bool is_pow2(int n) { return (n & (n - 1)) == 0; }

/* Level l's first texel as a texel index from level 0's (the levels may be separate
 * allocations: the difference of the addresses as integers). */
static int64_t level_offset(const sc_texture *t, int l)
{
    return ((int64_t)(uintptr_t)t->levels[l].rgba - (int64_t)(uintptr_t)t->levels[0].rgba) / 4;
}

/* t's level table; the return: whether every side of every level is a power of two. */
static bool level_table_of(const sc_texture *t, level_table *lt)
{
    memset(lt, 0, sizeof *lt);            /* level_entry8 reads past the last level */
    bool pow2 = true;
    for (int l = 0; l < t->nlevels; l++) {
        lt->width[l] = t->levels[l].width;
        lt->height[l] = t->levels[l].height;
        lt->offset[l] = (int32_t)level_offset(t, l);
        pow2 = pow2 && is_pow2(lt->width[l]) && is_pow2(lt->height[l]);
    }
    lt->base = (const int *)t->levels[0].rgba;
    return pow2;
}

/* ts_reduce per lane: non-finite -> +0; repeat [0, 1), mirror [0, 2), clamp [-1, 2]. */
AVX2_INLINE __m256 reduce8(__m256 c, sc_wrap w)
{
    const __m256 finite = _mm256_cmp_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), c),
                                        _mm256_set1_ps(INFINITY), _CMP_LT_OQ);
    __m256 r;
    if (w == SC_WRAP_REPEAT) {
        r = _mm256_sub_ps(c, _mm256_floor_ps(c));
        r = _mm256_and_ps(r, _mm256_cmp_ps(r, _mm256_set1_ps(1.0f), _CMP_LT_OQ));
    } else if (w == SC_WRAP_MIRROR) {
        r = _mm256_sub_ps(c, _mm256_mul_ps(_mm256_set1_ps(2.0f),
                                           _mm256_floor_ps(_mm256_mul_ps(c, _mm256_set1_ps(0.5f)))));
        __m256 keep = _mm256_and_ps(_mm256_cmp_ps(r, _mm256_set1_ps(2.0f), _CMP_LT_OQ),
                                    _mm256_cmp_ps(r, _mm256_setzero_ps(), _CMP_GE_OQ));
        r = _mm256_and_ps(r, keep);
    } else {
        r = _mm256_blendv_ps(c, _mm256_set1_ps(-1.0f), _mm256_cmp_ps(c, _mm256_set1_ps(-1.0f), _CMP_LT_OQ));
        r = _mm256_blendv_ps(r, _mm256_set1_ps(2.0f), _mm256_cmp_ps(r, _mm256_set1_ps(2.0f), _CMP_GT_OQ));
    }
    return _mm256_and_ps(r, finite);
}

/* ts_address_any per lane for repeat and mirror on sides n that are powers of two: in two's
 * complement i & (n - 1) is i mod n for every int i, and i & (2n - 1) is i mod 2n. */
AVX2_INLINE __m256i address8_pow2(__m256i i, __m256i n, sc_wrap w)
{
    const __m256i one = _mm256_set1_epi32(1);
    if (w == SC_WRAP_REPEAT) return _mm256_and_si256(i, _mm256_sub_epi32(n, one));
    const __m256i n2_last = _mm256_sub_epi32(_mm256_add_epi32(n, n), one);
    const __m256i m = _mm256_and_si256(i, n2_last);
    return _mm256_blendv_epi8(_mm256_sub_epi32(n2_last, m), m, _mm256_cmpgt_epi32(n, m));
}

/* ts_address per lane on sides n: one compare-and-step for repeat and mirror, where the
 * reduced coordinates put every index; a lane outside that range (none from reduce8's
 * coordinates) takes ts_address_any. */
AVX2_INLINE __m256i address8(__m256i i, __m256i n, sc_wrap w, bool pow2)
{
    const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi32(1);
    const __m256i last = _mm256_sub_epi32(n, one);
    if (w == SC_WRAP_CLAMP) return _mm256_min_epi32(_mm256_max_epi32(i, zero), last);
    if (pow2) return address8_pow2(i, n, w);
    __m256i r, outside;
    if (w == SC_WRAP_REPEAT) {
        __m256i below = _mm256_cmpgt_epi32(zero, i), above = _mm256_cmpgt_epi32(i, last);
        r = _mm256_sub_epi32(_mm256_add_epi32(i, _mm256_and_si256(n, below)), _mm256_and_si256(n, above));
        outside = _mm256_or_si256(_mm256_cmpgt_epi32(zero, r), _mm256_cmpgt_epi32(r, last));
    } else {
        const __m256i n2 = _mm256_add_epi32(n, n);
        outside = _mm256_or_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(-1), i), _mm256_cmpgt_epi32(i, n2));
        __m256i m = _mm256_add_epi32(i, _mm256_and_si256(n2, _mm256_cmpgt_epi32(zero, i)));
        m = _mm256_sub_epi32(m, _mm256_and_si256(n2, _mm256_cmpgt_epi32(m, _mm256_sub_epi32(n2, one))));
        __m256i back = _mm256_sub_epi32(_mm256_sub_epi32(n2, one), m);
        r = _mm256_blendv_epi8(m, back, _mm256_cmpgt_epi32(m, last));
    }
    if (!_mm256_testz_si256(outside, outside)) {
        int32_t ri[8], ii[8], ni[8], oi[8];
        _mm256_storeu_si256((__m256i *)ri, r);
        _mm256_storeu_si256((__m256i *)ii, i);
        _mm256_storeu_si256((__m256i *)ni, n);
        _mm256_storeu_si256((__m256i *)oi, outside);
        for (int k = 0; k < 8; k++)
            if (oi[k]) ri[k] = ts_address_any(ii[k], ni[k], w);
        r = _mm256_loadu_si256((const __m256i *)ri);
    }
    return r;
}

/* Entry level[lane] of a level table's column (16 entries): two in-register permutes
 * and a blend, where a gather would load from memory lane by lane (slow on many cores). */
AVX2_INLINE __m256i level_entry8(const int32_t column[SC_MAX_MIP_LEVELS], __m256i level)
{
    _Static_assert(SC_MAX_MIP_LEVELS == 16, "a level table column is two 8-lane vectors");
    const __m256i low = _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i *)column), level);
    const __m256i high = _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i *)(column + 8)), level);
    return _mm256_blendv_epi8(low, high, _mm256_cmpgt_epi32(level, _mm256_set1_epi32(7)));
}

/* The RGBA8 texels at texel index idx from level 0's first texel. */
AVX2_INLINE __m256i texels8(const level_table *lt, __m256i idx)
{
    return _mm256_i32gather_epi32(lt->base, idx, 4);
}

/* The 64 bits at texel index i from level 0's first texel: texels i and i + 1. */
static inline long long texel_pair(const level_table *lt, int32_t i)
{
    long long pair;
    memcpy(&pair, lt->base + i, sizeof pair);
    return pair;
}

/* The RGBA8 texels at idx and idx + 1 (from level 0's first texel), as texels8 would
 * give them: eight 64-bit scalar loads, where a gather is microcoded and costs several
 * times more on AMD Zen (the loads are the same, so the bits are). The pairs are packed
 * in the order 0 1 4 5 | 2 3 6 7, so one shuffle per result restores it. */
AVX2_INLINE void texel_pairs8(const level_table *lt, __m256i idx, __m256i *first, __m256i *second)
{
    int32_t i[8] __attribute__((aligned(32)));
    _mm256_store_si256((__m256i *)i, idx);
    const __m256 p = _mm256_castsi256_ps(_mm256_set_epi64x(texel_pair(lt, i[5]), texel_pair(lt, i[4]),
                                                           texel_pair(lt, i[1]), texel_pair(lt, i[0])));
    const __m256 q = _mm256_castsi256_ps(_mm256_set_epi64x(texel_pair(lt, i[7]), texel_pair(lt, i[6]),
                                                           texel_pair(lt, i[3]), texel_pair(lt, i[2])));
    *first = _mm256_castps_si256(_mm256_shuffle_ps(p, q, _MM_SHUFFLE(2, 0, 2, 0)));
    *second = _mm256_castps_si256(_mm256_shuffle_ps(p, q, _MM_SHUFFLE(3, 1, 3, 1)));
}

/* The four texels of eight bilinear footprints: rows ya and yb (texel indices of the rows'
 * first texels), columns xa and xb. Where every lane's xb is xa + 1 (no wrap inside the
 * footprint: the common case) each row is read as pairs; a pair then ends at a texel of
 * its row, so no load leaves the level. */
AVX2_INLINE void footprint8(const level_table *lt, __m256i ya, __m256i yb, __m256i xa, __m256i xb,
                            __m256i texel[4])
{
    const __m256i adjacent = _mm256_cmpeq_epi32(xb, _mm256_add_epi32(xa, _mm256_set1_epi32(1)));
    if (_mm256_movemask_epi8(adjacent) == -1) {
        texel_pairs8(lt, _mm256_add_epi32(ya, xa), &texel[0], &texel[1]);
        texel_pairs8(lt, _mm256_add_epi32(yb, xa), &texel[2], &texel[3]);
        return;
    }
    texel[0] = texels8(lt, _mm256_add_epi32(ya, xa));
    texel[1] = texels8(lt, _mm256_add_epi32(ya, xb));
    texel[2] = texels8(lt, _mm256_add_epi32(yb, xa));
    texel[3] = texels8(lt, _mm256_add_epi32(yb, xb));
}

/* Per channel c, the byte shuffle that moves byte c of each 32-bit lane to the lane's low
 * byte and zeroes the others (0x80: a zero byte; indices count within each 16-byte half). */
#define PICK(c) {0x80808000 | (c), 0x80808004 | (c), 0x80808008 | (c), 0x8080800c | (c), \
                 0x80808000 | (c), 0x80808004 | (c), 0x80808008 | (c), 0x8080800c | (c)}
static const uint32_t channel_pick[4][8] __attribute__((aligned(32))) = {PICK(0), PICK(1), PICK(2), PICK(3)};
#undef PICK

/* Channel c of eight RGBA8 texels, as floats (ts_texel4). */
AVX2_INLINE __m256 channel8(__m256i texels, int c)
{
    const __m256i pick = _mm256_load_si256((const __m256i *)channel_pick[c]);
    return _mm256_cvtepi32_ps(_mm256_shuffle_epi8(texels, pick));
}

/* a + t * (b - a), as ts_bilinear4's lerps. */
AVX2_INLINE __m256 lerp8(__m256 a, __m256 b, __m256 t)
{
    return _mm256_add_ps(a, _mm256_mul_ps(t, _mm256_sub_ps(b, a)));
}

/* ts_bilinear4 per lane on level level[lane], at reduced coordinates ru, rv: the first
 * `channels` channels. */
AVX2_INLINE void bilinear8(const level_table *lt, sample_mode m, __m256i level, __m256 ru, __m256 rv,
                           __m256 out[4])
{
    const __m256i w = level_entry8(lt->width, level), h = level_entry8(lt->height, level);
    const __m256 half = _mm256_set1_ps(0.5f);
    const __m256 x = _mm256_sub_ps(_mm256_mul_ps(ru, _mm256_cvtepi32_ps(w)), half);
    const __m256 y = _mm256_sub_ps(_mm256_mul_ps(rv, _mm256_cvtepi32_ps(h)), half);
    const __m256 fx0 = _mm256_floor_ps(x), fy0 = _mm256_floor_ps(y);
    const __m256i x0 = _mm256_cvttps_epi32(fx0), y0 = _mm256_cvttps_epi32(fy0), one = _mm256_set1_epi32(1);
    const __m256 ax = _mm256_sub_ps(x, fx0), ay = _mm256_sub_ps(y, fy0);
    const __m256i xa = address8(x0, w, m.wrap_u, m.pow2);
    const __m256i xb = address8(_mm256_add_epi32(x0, one), w, m.wrap_u, m.pow2);
    const __m256i top_row = _mm256_sub_epi32(h, one);       /* rows are stored top first */
    const __m256i first = level_entry8(lt->offset, level);
    const __m256i ya = _mm256_add_epi32(first, _mm256_mullo_epi32(_mm256_sub_epi32(top_row, address8(y0, h, m.wrap_v, m.pow2)), w));
    const __m256i yb = _mm256_add_epi32(first, _mm256_mullo_epi32(_mm256_sub_epi32(top_row, address8(_mm256_add_epi32(y0, one), h, m.wrap_v, m.pow2)), w));
    __m256i texel[4];
    footprint8(lt, ya, yb, xa, xb, texel);
    const __m256i a = texel[0], b = texel[1], c = texel[2], d = texel[3];
#pragma GCC unroll 4
    for (int k = 0; k < m.channels; k++) {
        __m256 lower = lerp8(channel8(a, k), channel8(b, k), ax);
        __m256 upper = lerp8(channel8(c, k), channel8(d, k), ax);
        out[k] = _mm256_div_ps(lerp8(lower, upper, ay), _mm256_set1_ps(255.0f));
    }
}

/* sh_texture_sample_inline per lane for the linear filters: eight lanes from u, v, lod. */
AVX2_INLINE void sample8(const sc_texture *t, const level_table *lt, sample_mode m, const float *u,
                         const float *v, const float *lod, __m256 r[4])
{
    const __m256 top = _mm256_set1_ps((float)(t->nlevels - 1)), zero = _mm256_setzero_ps();
    __m256 l = _mm256_loadu_ps(lod);
    l = _mm256_and_ps(l, _mm256_cmp_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), l),
                                       _mm256_set1_ps(INFINITY), _CMP_LT_OQ));      /* !finite: 0 */
    l = _mm256_blendv_ps(l, zero, _mm256_cmp_ps(l, zero, _CMP_LT_OQ));
    l = _mm256_blendv_ps(l, top, _mm256_cmp_ps(l, top, _CMP_GT_OQ));
    const __m256 ru = reduce8(_mm256_loadu_ps(u), m.wrap_u), rv = reduce8(_mm256_loadu_ps(v), m.wrap_v);
    if (m.filter == SC_FILTER_LINEAR_NO_MIPS) {
        bilinear8(lt, m, _mm256_setzero_si256(), ru, rv, r);
        return;
    }
    if (m.filter == SC_FILTER_BILINEAR) {
        bilinear8(lt, m, _mm256_cvttps_epi32(_mm256_floor_ps(_mm256_add_ps(l, _mm256_set1_ps(0.5f)))), ru, rv, r);
        return;
    }
    const __m256 fl = _mm256_floor_ps(l), f = _mm256_sub_ps(l, fl);          /* trilinear */
    const __m256i l0 = _mm256_cvttps_epi32(fl), top_i = _mm256_cvttps_epi32(top);
    bilinear8(lt, m, l0, ru, rv, r);
    const __m256 finer = _mm256_andnot_ps(_mm256_cmp_ps(f, zero, _CMP_EQ_OQ),
                                          _mm256_castsi256_ps(_mm256_xor_si256(_mm256_cmpeq_epi32(l0, top_i),
                                                                               _mm256_set1_epi32(-1))));
    if (_mm256_testz_ps(finer, finer)) return;                 /* every lane on one level */
    __m256 r1[4];
    bilinear8(lt, m, _mm256_min_epi32(_mm256_add_epi32(l0, _mm256_set1_epi32(1)), top_i), ru, rv, r1);
#pragma GCC unroll 4
    for (int k = 0; k < m.channels; k++) r[k] = _mm256_blendv_ps(r[k], lerp8(r[k], r1[k], f), finer);
}

AVX2_INLINE void sample_all(const sc_texture *t, const level_table *lt, sample_mode m, const float *u,
                            const float *v, const float *lod, int n, float *const rgba[4])
{
    __m256 r[4];
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        sample8(t, lt, m, u + i, v + i, lod + i, r);
        for (int k = 0; k < m.channels; k++) _mm256_storeu_ps(rgba[k] + i, r[k]);
    }
    if (i == n) return;
    float pu[8] = {0}, pv[8] = {0}, pl[8] = {0}, out[4][8];          /* the tail, padded */
    for (int k = 0; i + k < n; k++) pu[k] = u[i + k], pv[k] = v[i + k], pl[k] = lod[i + k];
    sample8(t, lt, m, pu, pv, pl, r);
    for (int k = 0; k < m.channels; k++) {
        _mm256_storeu_ps(out[k], r[k]);
        for (int j = 0; i + j < n; j++) rgba[k][i + j] = out[k][j];
    }
}

/* sample_all compiled for the common mode (trilinear, repeat, power-of-two sides) with
 * the channel count a constant, and for any other mode with its branches at run time. */
__attribute__((target("avx2")))
static void sample_avx2(const sc_texture *t, const sc_sampler *s, const float *u, const float *v,
                        const float *lod, int n, int channels, float *const rgba[4])
{
    level_table lt;
    const sample_mode m = {s->filter, s->wrap_u, s->wrap_v, level_table_of(t, &lt), channels};
    const bool common = m.filter == SC_FILTER_TRILINEAR && m.wrap_u == SC_WRAP_REPEAT &&
                        m.wrap_v == SC_WRAP_REPEAT && m.pow2;
    static const sample_mode common3 = {SC_FILTER_TRILINEAR, SC_WRAP_REPEAT, SC_WRAP_REPEAT, true, 3};
    static const sample_mode common4 = {SC_FILTER_TRILINEAR, SC_WRAP_REPEAT, SC_WRAP_REPEAT, true, 4};
    if (common && channels == 3) sample_all(t, &lt, common3, u, v, lod, n, rgba);
    else if (common) sample_all(t, &lt, common4, u, v, lod, n, rgba);
    else sample_all(t, &lt, m, u, v, lod, n, rgba);
}

/* Whether every texel of every level has a 32-bit texel index from level 0's first texel
 * (true of a chain sc_texture_build_mips built: one allocation, levels in order). */
static bool levels_in_reach(const sc_texture *t)
{
    if (t->one_block) {                  /* the last level's last texel is the farthest */
        const sc_mip_level *last = &t->levels[t->nlevels - 1];
        return level_offset(t, t->nlevels - 1) + (int64_t)last->width * last->height <= INT32_MAX;
    }
    for (int l = 0; l < t->nlevels; l++) {
        const int64_t first = level_offset(t, l);
        const int64_t end = first + (int64_t)t->levels[l].width * t->levels[l].height;
        if (((uintptr_t)t->levels[l].rgba - (uintptr_t)t->levels[0].rgba) % 4 != 0 || first < INT32_MIN ||
            end > INT32_MAX)
            return false;
    }
    return true;
}

/* The vector path covers the linear filters on chains whose texels are all in reach. */
static bool vector_covers(const sc_texture *t, const sc_sampler *s)
{
    return (s->filter == SC_FILTER_TRILINEAR || s->filter == SC_FILTER_BILINEAR ||
            s->filter == SC_FILTER_LINEAR_NO_MIPS) &&
           levels_in_reach(t);
}
#endif

void sh_texture_sample_n(const sc_texture *t, const sc_sampler *s, const float *u, const float *v,
                         const float *lod, int n, float *const rgba[4], bool avx2)
{
    const int channels = rgba[3] ? 4 : 3;
#if defined(__x86_64__)
    if (avx2 && vector_covers(t, s)) {
        sample_avx2(t, s, u, v, lod, n, channels, rgba);
        return;
    }
#endif
    (void)avx2;
    sample_scalar(t, s, u, v, lod, n, channels, rgba);
}
