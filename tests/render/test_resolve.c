/* pipelines/raster/resolve.h: the box resolve's SSE2 form (plr_resolve_pixel) and its
 * word-parallel form (plr_resolve_words) give, per channel, (sum + m / 2) / m of the
 * samples' bytes, at 4 and 8 samples, on random samples and on the extremes (all 255:
 * the largest sums; halves that round up). A channel taken from its neighbour, a lost
 * rounding half or a sum that wraps fails it. */
#include "pipelines/raster/resolve.h"
#include "tests/check.h"

#include <stdint.h>

static uint32_t rng_state = 2026;

static uint32_t next_u32(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

/* The definition, channel by channel. */
static uint32_t resolve_definition(const uint32_t *in, uint32_t m)
{
    uint32_t out = 0;
    for (int ch = 0; ch < 4; ch++) {
        uint32_t sum = 0;
        for (uint32_t k = 0; k < m; k++) sum += (in[k] >> 8 * ch) & 0xffu;
        out |= ((sum + m / 2) / m) << 8 * ch;
    }
    return out;
}

static int mismatches(const uint32_t *in, uint32_t m)
{
    const uint32_t want = resolve_definition(in, m);
    const int bad = (plr_resolve_pixel(in, m) != want) + (plr_resolve_words(in, m) != want);
    if (bad)
        fprintf(stderr, "  msaa %u: %08x (sse2) %08x (words), expected %08x\n", m,
                plr_resolve_pixel(in, m), plr_resolve_words(in, m), want);
    return bad;
}

static void test_forms_match_definition(void)
{
    uint32_t in[8];
    int bad = 0;
    for (uint32_t m = 4; m <= 8; m += 4) {
        for (int i = 0; i < 20000; i++) {
            const uint32_t limit = i % 3 == 0 ? 0xffffffffu : 0x01010101u * (next_u32() & 0xffu);
            for (uint32_t k = 0; k < m; k++) in[k] = next_u32() | (i % 5 == 0 ? limit : 0);
            bad += mismatches(in, m);
        }
        for (uint32_t k = 0; k < m; k++) in[k] = 0xffffffffu;   /* the largest sums */
        bad += mismatches(in, m);
        for (uint32_t k = 0; k < m; k++) in[k] = k < m / 2 ? 0x01010101u : 0;   /* exactly half: up */
        bad += mismatches(in, m);
    }
    CHECK(bad == 0);
}

int main(void)
{
    RUN(test_forms_match_definition);
    return check_finish();
}
