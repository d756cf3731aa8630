/* shaders/texture_sample_packet: the eight-lane sampler gives, lane for lane, the bits of
 * the scalar sh_texture_sample, on random coordinates (ordinary, near texel centres and
 * period edges, huge, tiny negative, NaN, infinite), random levels of detail (between and
 * on levels, beyond the chain, non-finite), every wrap mode on each axis, every filter,
 * power-of-two and odd texture sizes down to 1x1 (power-of-two chains take the masked
 * addressing), packet lengths that leave a tail, colour-only calls (alpha left
 * unwritten), and chains whose levels are separate allocations.
 * Run with the vector path where the CPU has AVX2 and with the scalar one everywhere. */
#include "raytracer/isa.h"
#include "scenes/loaders.h"
#include "shaders/texture_sample.h"
#include "shaders/texture_sample_packet.h"
#include "tests/check.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rng_state = 12345;

static uint32_t next_u32(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

static float uniform(float lo, float hi) { return lo + (hi - lo) * (float)(next_u32() >> 8) / 16777216.0f; }

/* A w x h texture of random bytes (mips built by sc_add_texture), added to s. */
static const sc_texture *noise(sc_scene *s, int w, int h)
{
    unsigned char *px = malloc((size_t)w * h * 4);
    for (size_t i = 0; i < (size_t)w * h * 4; i++) px[i] = (unsigned char)next_u32();
    char err[SC_ERR_MAX];
    int i = sc_add_texture(s, "noise", w, h, px, err);
    CHECK_MSG(i >= 0, "%s", err);
    return i >= 0 ? &s->textures[i] : NULL;
}

/* A coordinate of one of the kinds the header lists; side: level 0's size on its axis. */
static float coordinate(int side)
{
    switch (next_u32() % 10) {
    case 0: return (float)(next_u32() % (unsigned)(4 * side) + 0.5f) / (float)side - 2.0f;   /* texel centre */
    case 1: return (float)((int)(next_u32() % 7) - 3);                  /* period edge */
    case 2: return -1e-9f * uniform(0.5f, 2.0f);
    case 3: return next_u32() % 2 ? 1e30f : -3e9f;
    case 4: return next_u32() % 2 ? NAN : (next_u32() % 2 ? INFINITY : -INFINITY);
    case 5: return uniform(-1000.0f, 1000.0f);
    default: return uniform(-3.0f, 3.0f);
    }
}

static float level_of_detail(int nlevels)
{
    switch (next_u32() % 8) {
    case 0: return (float)(next_u32() % (unsigned)(nlevels + 2)) - 1.0f;   /* on a level */
    case 1: return next_u32() % 2 ? NAN : (next_u32() % 2 ? INFINITY : -INFINITY);
    case 2: return -64.0f;
    default: return uniform(-2.0f, (float)nlevels + 1.0f);
    }
}

/* n random samples of t through s, packet against scalar; the number of lanes that differ.
 * Every other call asks for colour only (rgba[3] NULL): alpha must stay unwritten. */
static int mismatches(const sc_texture *t, const sc_sampler *s, int n, bool avx2)
{
    static int calls;
    const bool colour_only = calls++ % 2;
    float u[70], v[70], lod[70], out[4][70];
    float *const rgba[4] = {out[0], out[1], out[2], colour_only ? NULL : out[3]};
    if (colour_only)
        for (int i = 0; i < 70; i++) out[3][i] = -7.0f;
    for (int i = 0; i < n; i++) {
        u[i] = coordinate(t->levels[0].width);
        v[i] = coordinate(t->levels[0].height);
        lod[i] = level_of_detail(t->nlevels);
    }
    sh_texture_sample_n(t, s, u, v, lod, n, rgba, avx2);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        float want[4];
        sh_texture_sample(t, s, u[i], v[i], lod[i], want);
        if (colour_only) want[3] = -7.0f;
        for (int k = 0; k < 4; k++) {
            if (!memcmp(&want[k], &out[k][i], sizeof(float))) continue;
            if (bad++ < 3)
                fprintf(stderr, "  lane %d of %d: u %a v %a lod %a wrap %d/%d filter %d channel %d: %a, scalar %a\n",
                        i, n, u[i], v[i], lod[i], s->wrap_u, s->wrap_v, s->filter, k, out[k][i], want[k]);
        }
    }
    return bad;
}

static void check_every_mode(bool avx2)
{
    static const int sizes[][2] = {{1, 1}, {2, 2}, {5, 3}, {7, 13}, {64, 64}, {256, 1}, {1, 33}, {100, 60}};
    sc_scene *s = calloc(1, sizeof *s);
    int bad = 0, runs = 0;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        const sc_texture *t = noise(s, sizes[k][0], sizes[k][1]);
        if (!t) break;
        for (int wu = 0; wu < 3; wu++)
            for (int wv = 0; wv < 3; wv++)
                for (int f = 0; f <= SC_FILTER_LINEAR_NO_MIPS; f++) {
                    const sc_sampler sm = {(sc_wrap)wu, (sc_wrap)wv, (sc_filter)f};
                    for (int rep = 0; rep < 12; rep++, runs++)
                        bad += mismatches(t, &sm, 1 + (int)(next_u32() % 70), avx2);
                }
    }
    CHECK_MSG(bad == 0, "%d channels differ from the scalar sampler in %d packets (%s)", bad, runs,
              avx2 ? "AVX2" : "scalar");
    sc_free(s);
}

static void test_scalar_path(void) { check_every_mode(false); }

static void test_avx2_path(void)
{
    if (rt_isa_best() != RT_ISA_AVX2) {
        printf("skip test_avx2_path: the CPU has no AVX2 (or GRAMPS_ISA=baseline)\n");
        return;
    }
    check_every_mode(true);
}

/* sh_texture_sample_on's AVX2 compile gives sh_texture_sample's bits, every filter and wrap
 * (the ray tracer's Shade samples through it). */
static void test_scalar_avx2_compile(void)
{
    if (rt_isa_best() != RT_ISA_AVX2) {
        printf("skip test_scalar_avx2_compile: the CPU has no AVX2 (or GRAMPS_ISA=baseline)\n");
        return;
    }
    static const int sizes[][2] = {{1, 1}, {5, 3}, {64, 64}, {100, 60}};
    sc_scene *s = calloc(1, sizeof *s);
    int bad = 0;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        const sc_texture *t = noise(s, sizes[k][0], sizes[k][1]);
        for (int m = 0; t && m < 9 * (SC_FILTER_LINEAR_NO_MIPS + 1) * 40; m++) {
            const sc_sampler sm = {(sc_wrap)(m % 3), (sc_wrap)(m / 3 % 3), (sc_filter)(m / 9 % (SC_FILTER_LINEAR_NO_MIPS + 1))};
            const float u = coordinate(t->levels[0].width), v = coordinate(t->levels[0].height);
            const float lod = level_of_detail(t->nlevels);
            float want[4], got[4];
            sh_texture_sample(t, &sm, u, v, lod, want);
            sh_texture_sample_on(RT_ISA_AVX2, t, &sm, u, v, lod, got);
            if (memcmp(want, got, sizeof want) && bad++ < 3)
                fprintf(stderr, "  u %a v %a lod %a wrap %d/%d filter %d: %a, baseline %a\n", u, v, lod, sm.wrap_u,
                        sm.wrap_v, sm.filter, got[0], want[0]);
        }
    }
    CHECK_MSG(bad == 0, "%d samples differ between the AVX2 and baseline compiles", bad);
    sc_free(s);
}

/* sc_texture_build_mips puts the chain in one allocation, level after level, level 0 first:
 * what lets the vector path address every level from level 0 with 32-bit indices. */
static void test_chain_is_one_block(void)
{
    sc_scene *s = calloc(1, sizeof *s);
    const sc_texture *t = noise(s, 100, 60);
    CHECK(t && t->one_block && t->nlevels == 7);
    for (int l = 1; t && l < t->nlevels; l++) {
        const sc_mip_level *up = &t->levels[l - 1];
        CHECK_MSG(t->levels[l].rgba == up->rgba + (size_t)up->width * up->height * 4, "level %d", l);
    }
    sc_free(s);
}

/* A chain built by hand, each level its own allocation (as a caller may build one): the
 * packet sampler still gives the scalar bits, in reach of 32-bit indices or not. */
static void test_separate_levels(void)
{
    enum { LEVELS = 6 };
    sc_texture t = {.name = "separate", .nlevels = LEVELS};
    for (int l = 0; l < LEVELS; l++) {
        const int side = 32 >> l;
        unsigned char *px = malloc((size_t)side * side * 4 + 4096 * l);   /* spread apart */
        for (int i = 0; i < side * side * 4; i++) px[i] = (unsigned char)next_u32();
        t.levels[l] = (sc_mip_level){side, side, px};
    }
    int bad = 0;
    for (int wu = 0; wu < 3; wu++)
        for (int rep = 0; rep < 20; rep++) {
            const sc_sampler sm = {(sc_wrap)wu, (sc_wrap)((wu + 1) % 3), SC_FILTER_TRILINEAR};
            bad += mismatches(&t, &sm, 1 + (int)(next_u32() % 70), rt_isa_best() == RT_ISA_AVX2);
        }
    CHECK_MSG(bad == 0, "%d channels differ from the scalar sampler", bad);
    sc_texture_free(&t);
}

/* Eight-lane packets whose footprints stay inside each row (the vector path reads rows as
 * texel pairs), and the same with one lane on the last column, where its right texel
 * wraps to the first (the path of single texels): both give the scalar sampler's bits. */
static void test_row_pairs(void)
{
    sc_scene *s = calloc(1, sizeof *s);
    const sc_texture *t = noise(s, 256, 128);
    int bad = 0;
    for (int m = 0; t && m < 3 * (SC_FILTER_LINEAR_NO_MIPS + 1) * 20; m++) {
        const sc_sampler sm = {(sc_wrap)(m % 3), SC_WRAP_REPEAT, (sc_filter)(m / 3 % (SC_FILTER_LINEAR_NO_MIPS + 1))};
        float u[8], v[8], lod[8], out[4][8];
        float *const rgba[4] = {out[0], out[1], out[2], out[3]};
        for (int i = 0; i < 8; i++) {
            u[i] = uniform(0.05f, 0.95f);
            v[i] = uniform(-2.0f, 2.0f);
            lod[i] = uniform(-1.0f, 3.0f);
        }
        if (m % 2) u[m % 8] = 1.0f - 0.25f / 256.0f;       /* level 0's last column */
        sh_texture_sample_n(t, &sm, u, v, lod, 8, rgba, rt_isa_best() == RT_ISA_AVX2);
        for (int i = 0; i < 8; i++) {
            float want[4];
            sh_texture_sample(t, &sm, u[i], v[i], lod[i], want);
            for (int k = 0; k < 4; k++)
                if (memcmp(&want[k], &out[k][i], sizeof(float)) && bad++ < 3)
                    fprintf(stderr, "  lane %d: u %a v %a lod %a wrap %d filter %d channel %d: %a, scalar %a\n", i,
                            u[i], v[i], lod[i], sm.wrap_u, sm.filter, k, out[k][i], want[k]);
        }
    }
    CHECK(t != NULL);
    CHECK_MSG(bad == 0, "%d channels differ from the scalar sampler", bad);
    sc_free(s);
}

int main(void)
{
    RUN(test_scalar_path);
    RUN(test_avx2_path);
    RUN(test_scalar_avx2_compile);
    RUN(test_chain_is_one_block);
    RUN(test_separate_levels);
    RUN(test_row_pairs);
    return check_finish();
}
