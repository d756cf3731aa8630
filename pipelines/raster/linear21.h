/* linear21.h — a fragment's linear RGB in the 64 bits a fragment packet has spare
 * (frag_pkt.out.linear): three non-negative floats with 13-bit mantissas (21 bits each:
 * the exponent and the mantissa's top 13 bits, a relative precision of 2^-14 and
 * float's range), and bit 63 set when the PS wrote it. Packing rounds each channel to
 * the nearest such value on the same side of the sRGB thresholds as the float itself,
 * so the packed colour encodes to exactly the fragment's RGBA8: the OM can tell a
 * colour that a stage between the PS and the OM changed (out.rgba no longer encodes
 * from out.linear) and then decodes out.rgba instead. */
#ifndef PIPELINES_RASTER_LINEAR21_H
#define PIPELINES_RASTER_LINEAR21_H

#include "shaders/color.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define PLR_LINEAR_SET (1ull << 63)

static inline float plr_linear21_value(uint32_t q)
{
    uint32_t bits = q << 10;
    float v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* One channel x (which encodes to `byte`) as 21 bits; NaN and negatives as 0. */
static inline uint32_t plr_linear21_of(float x, uint8_t byte)
{
    if (!(x > 0.0f)) return 0;
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    if (bits >= 0x7f800000u) return 0x7f800000u >> 10;        /* +inf */
    uint32_t q = (bits + 0x200u) >> 10;                       /* to nearest */
    if (sh_srgb8_lookup(plr_linear21_value(q)) != byte)       /* crossed a threshold */
        q = plr_linear21_value(q) > x ? q - 1 : q + 1;
    return q;
}

/* rgb, which sh_ps_packet encoded to rgba (sh_srgb_init has run). */
static inline uint64_t plr_linear_pack(const float rgb[3], uint32_t rgba)
{
    uint64_t v = PLR_LINEAR_SET;
    for (int c = 0; c < 3; c++)
        v |= (uint64_t)plr_linear21_of(rgb[c], (uint8_t)(rgba >> (8 * c))) << (21 * c);
    return v;
}

/* The packed colour into rgb; false when there is none or rgba does not encode from it. */
static inline bool plr_linear_unpack(uint64_t v, uint32_t rgba, float rgb[3])
{
    if (!(v & PLR_LINEAR_SET)) return false;
    for (int c = 0; c < 3; c++) {
        rgb[c] = plr_linear21_value((uint32_t)(v >> (21 * c)) & 0x1fffffu);
        if (sh_srgb8_lookup(rgb[c]) != (uint8_t)(rgba >> (8 * c))) return false;
    }
    return true;
}

#endif
