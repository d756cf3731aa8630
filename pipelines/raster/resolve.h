/* resolve.h — multisampling's box resolve of one pixel's RGBA8 samples (msaa.c): per
 * channel (sum + m / 2) >> log2(m) of the m samples' bytes, m 4 or 8, as Direct3D's
 * ResolveSubresource averages a UNORM target. A channel's sum is at most 8 x 255 < 2^16,
 * so both forms below sum in 16-bit lanes and give the same integers. */
#ifndef PIPELINES_RASTER_RESOLVE_H
#define PIPELINES_RASTER_RESOLVE_H

#include <stdint.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

/* Two channels at a time in the 16-bit halves of a word (channels 0 and 2, 1 and 3). */
static inline uint32_t plr_resolve_words(const uint32_t *in, uint32_t m)
{
    const int shift = __builtin_ctz(m);
    uint32_t even = 0, odd = 0;
    for (uint32_t k = 0; k < m; k++) {
        even += in[k] & 0x00ff00ffu;
        odd += (in[k] >> 8) & 0x00ff00ffu;
    }
    const uint32_t half = (m / 2) * 0x00010001u;
    return (((even + half) >> shift) & 0x00ff00ffu) | ((((odd + half) >> shift) & 0x00ff00ffu) << 8);
}

/* With SSE2, four samples a load widened to 16-bit lanes (samples 0 and 1's channels
 * in lanes 0-7, 2 and 3's added), then the two halves added: the sums in lanes 0-3. */
static inline uint32_t plr_resolve_pixel(const uint32_t *in, uint32_t m)
{
#if defined(__x86_64__)
    const __m128i zero = _mm_setzero_si128();
    __m128i sum = zero;
    for (uint32_t k = 0; k < m; k += 4) {
        const __m128i v = _mm_loadu_si128((const __m128i *)&in[k]);
        sum = _mm_add_epi16(sum, _mm_add_epi16(_mm_unpacklo_epi8(v, zero), _mm_unpackhi_epi8(v, zero)));
    }
    sum = _mm_add_epi16(sum, _mm_srli_si128(sum, 8));
    sum = _mm_srl_epi16(_mm_add_epi16(sum, _mm_set1_epi16((short)(m / 2))),
                        _mm_cvtsi32_si128(__builtin_ctz(m)));
    return (uint32_t)_mm_cvtsi128_si32(_mm_packus_epi16(sum, zero));
#else
    return plr_resolve_words(in, m);
#endif
}

#endif
