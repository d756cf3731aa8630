/* color.c — the sRGB codec and its lookup tables. */
#include "shaders/color.h"

#include <math.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <pthread.h>
#include <string.h>

uint8_t sh_to_srgb8_exact(float x)
{
    if (!(x > 0.0f)) return 0;
    if (x >= 1.0f) return 255;
    float s = x <= 0.0031308f ? 12.92f * x : 1.055f * powf(x, 1.0f / 2.4f) - 0.055f;
    return (uint8_t)(s * 255.0f + 0.5f);
}

/* threshold[k]: the smallest float whose exact encoding is >= k (threshold[0] unused).
 * The encoding is non-decreasing in x (tests check it), so the largest k with
 * threshold[k] <= x is the exact result. Positive floats order like their bit patterns,
 * so each threshold is a bisection over bits; the buckets are explained in common.h. */
float sh_srgb_threshold[257];
uint8_t sh_srgb_bucket[SH_SRGB_BUCKETS];
int sh_srgb_max_steps;
/* Per bucket, for the one-gather encode: its first byte k (low 8 bits) and, above them,
 * the offset in the bucket's bits (0 .. 2^SH_SRGB_BUCKET_SHIFT, which is "never") from
 * which the byte is k + 1. Exact while no bucket spans two steps (sh_srgb_max_steps 1). */
static uint32_t bucket_step[SH_SRGB_BUCKETS];
static pthread_once_t srgb_once = PTHREAD_ONCE_INIT;

static float float_of_bits(uint32_t b) { float f; memcpy(&f, &b, sizeof f); return f; }
static uint32_t bits_of(float f) { uint32_t b; memcpy(&b, &f, sizeof b); return b; }

static void build_srgb_tables(void)
{
    sh_srgb_threshold[0] = -INFINITY;
    sh_srgb_threshold[256] = INFINITY;
    for (int k = 1; k < 256; k++) {
        uint32_t lo = 0, hi = SH_SRGB_ONE_BITS;     /* encode(lo) < k <= encode(hi) */
        while (hi - lo > 1) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (sh_to_srgb8_exact(float_of_bits(mid)) >= k) hi = mid;
            else lo = mid;
        }
        sh_srgb_threshold[k] = float_of_bits(hi);
    }
    for (uint32_t b = 0; b < SH_SRGB_BUCKETS; b++) {
        uint32_t first = SH_SRGB_LOW_BITS + (b << SH_SRGB_BUCKET_SHIFT);
        uint32_t last = first + (1u << SH_SRGB_BUCKET_SHIFT) - 1;   /* below ONE_BITS */
        sh_srgb_bucket[b] = sh_to_srgb8_exact(float_of_bits(first));
        int steps = sh_to_srgb8_exact(float_of_bits(last)) - sh_srgb_bucket[b];
        if (steps > sh_srgb_max_steps) sh_srgb_max_steps = steps;
        uint32_t step = 1u << SH_SRGB_BUCKET_SHIFT;
        if (steps) step = bits_of(sh_srgb_threshold[sh_srgb_bucket[b] + 1]) - first;
        bucket_step[b] = sh_srgb_bucket[b] | step << 8;
    }
}

void sh_srgb_init(void) { pthread_once(&srgb_once, build_srgb_tables); }

#if defined(__x86_64__)
/* sh_srgb8_lookup eight lanes at a time, with one gather a vector: the bucket's byte and
 * step offset together (bucket_step). */
__attribute__((target("avx2")))
static void encode_one_step_avx2(const float *x, uint8_t *out, int n)
{
    const __m256i low = _mm256_set1_epi32((int32_t)SH_SRGB_LOW_BITS),
                  below_one = _mm256_set1_epi32((int32_t)SH_SRGB_ONE_BITS - 1),
                  in_bucket = _mm256_set1_epi32((1 << SH_SRGB_BUCKET_SHIFT) - 1);
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        __m256i bits = _mm256_castps_si256(v);
        /* among positive floats (and +inf) signed compares of the bits order the values */
        __m256i positive = _mm256_castps_si256(_mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_GT_OQ));
        __m256i saturated = _mm256_and_si256(positive, _mm256_cmpgt_epi32(bits, below_one));
        __m256i tiny = _mm256_cmpgt_epi32(low, bits);
        __m256i looked_up = _mm256_andnot_si256(_mm256_or_si256(tiny, saturated), positive);
        __m256i bucket = _mm256_and_si256(
            _mm256_srli_epi32(_mm256_sub_epi32(bits, low), SH_SRGB_BUCKET_SHIFT), looked_up);
        __m256i entry = _mm256_i32gather_epi32((const int *)bucket_step, bucket, 4);
        __m256i k = _mm256_and_si256(entry, _mm256_set1_epi32(0xff));
        /* past the step: k + 1 (the compare's all-ones is -1) */
        __m256i past = _mm256_cmpgt_epi32(_mm256_srli_epi32(entry, 8),
                                          _mm256_and_si256(bits, in_bucket));
        k = _mm256_sub_epi32(k, _mm256_andnot_si256(past, _mm256_set1_epi32(-1)));
        __m256i r = _mm256_or_si256(_mm256_and_si256(looked_up, k),
                                    _mm256_and_si256(saturated, _mm256_set1_epi32(255)));
        __m128i words = _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
        _mm_storel_epi64((__m128i *)(out + i), _mm_packus_epi16(words, words));
    }
    for (; i < n; i++) out[i] = sh_srgb8_lookup(x[i]);
}
#endif

void sh_srgb8_encode_n(const float *x, uint8_t *out, int n, bool avx2)
{
#if defined(__x86_64__)
    if (avx2 && sh_srgb_max_steps <= 1) { encode_one_step_avx2(x, out, n); return; }
#endif
    (void)avx2;
    for (int i = 0; i < n; i++) out[i] = sh_srgb8_lookup(x[i]);
}

uint8_t sh_to_srgb8(float x)
{
    sh_srgb_init();
    return sh_srgb8_lookup(x);
}
