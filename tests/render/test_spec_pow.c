/* The specular power (shaders/spec_pow.h) that the pixel shader's packet loops vectorize
 * and sh_blinn_phong runs one lane at a time: close to pow in double on every exponent a
 * scene may give, exact at 1 and on the special values, and the pixel shader's vector
 * lanes give the scalar formula's bits; its log2, which the level of detail takes, close
 * to log2. */
#include "raytracer/isa.h"
#include "shaders/blinn_phong.h"
#include "shaders/raster_shading.h"
#include "shaders/spec_pow.h"
#include "shaders/texture_sample.h"
#include "tests/check.h"

#include <math.h>
#include <stdint.h>

static const float exponents[] = {1.0f, 2.0f, 5.0f, 7.5f, 8.0f, 20.0f, 32.0f, 64.0f, 100.5f, 1000.0f};
#define NEXP (int)(sizeof exponents / sizeof exponents[0])

static float f_of(uint32_t b) { float f; memcpy(&f, &b, sizeof f); return f; }

static uint32_t lcg_state = 777;
static float rnd(float lo, float hi)
{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return lo + (hi - lo) * (float)(lcg_state >> 8) / 16777216.0f;
}

/* Relative error against pow in double, over floats in [2^-16, 1] for every exponent,
 * where the result is at least 2^-24 (below, a specular term adds less than 2^-24 of
 * the light: no 8-bit step). The error is y = e log2 x rounded to float, up to 2^-18 of
 * the result where |y| nears 24 (powf: 2^-24). */
static void test_close_to_pow(void)
{
    double worst = 0;
    for (int k = 0; k < NEXP; k++)
        for (uint32_t b = 0x37800000u; b <= 0x3f800000u; b += CHECK_SANITIZED ? 997 : 97) {
            const float x = f_of(b), e = exponents[k];
            const double want = pow((double)x, (double)e), got = sh_spec_pow(x, e);
            if (want < 0x1p-24) continue;
            const double rel = fabs(got - want) / want;
            if (rel > worst) worst = rel;
        }
    printf("  largest relative error %.3g\n", worst);
    CHECK_MSG(worst < 4e-6, "relative error %.3g", worst);
}

/* The log2 the level of detail takes (sh_texture_lod): within 2^-22 of log2 in double,
 * or two float ulps where the result is above 1 (so a level's fraction, the trilinear
 * weight, moves by about what log2f's rounding moves it), on positive normal floats; a
 * zero or subnormal step is magnification (-64, level 0). */
static void test_lod_log2(void)
{
    double worst = 0;
    for (uint32_t b = 0x00800000u; b < 0x7f000000u; b += 4093) {
        const float x = f_of(b);
        const double want = log2((double)x), bound = fmax(0x1p-22, fabs(want) * 0x1p-22);
        const double d = fabs((double)sh_pow_log2(x) - want) / bound;
        if (d > worst) worst = d;
    }
    printf("  largest log2 error %.3g of the bound\n", worst);
    CHECK_MSG(worst <= 1.0, "log2 error %.3g of the bound", worst);
    unsigned char texel[4] = {0};
    sc_texture t = {.name = "t", .nlevels = 1, .levels[0] = {1, 1, texel}};
    CHECK(sh_texture_lod(&t, 0x1p-70f, 0, 0, 0) == -64.0f);          /* rho^2 subnormal */
    CHECK(sh_texture_lod(&t, 0, 0, 0, 0) == -64.0f);
    CHECK(sh_texture_lod(&t, 0.25f, 0, 0, 0) == -2.0f);              /* powers of 2: exact */
    CHECK(sh_texture_lod(&t, 8.0f, 0, 0, 0) == 3.0f);
    CHECK(fabsf(sh_texture_lod(&t, 3.0f, 0, 0, 0) - 1.5849625f) < 1e-6f);
}

static void test_special_values(void)
{
    for (int k = 0; k < NEXP; k++) {
        const float e = exponents[k];
        CHECK(sh_spec_pow(1.0f, e) == 1.0f);
        CHECK(sh_spec_pow(0.0f, e) == 0.0f);
        CHECK(sh_spec_pow(-0.0f, e) == 0.0f);
        CHECK(sh_spec_pow(-0.5f, e) == 0.0f);
        CHECK(sh_spec_pow(NAN, e) == 0.0f);
        CHECK(sh_spec_pow(INFINITY, e) == 0.0f);
        CHECK(sh_spec_pow(0x1p-140f, e) == 0.0f);          /* subnormal */
        CHECK(sh_spec_pow(0.5f, e) == (float)pow(0.5, e) || e > 125);   /* exact powers of 2 */
    }
    CHECK(sh_spec_pow(0.25f, 0.0f) == 1.0f);
    CHECK(sh_spec_pow(0.0f, 0.0f) == 1.0f);
    CHECK(sh_spec_pow(NAN, 0.0f) == 1.0f);
    CHECK(sh_spec_pow(0.5f, 200.0f) == 0.0f);              /* 2^-200: below 2^-125 */
    CHECK(sh_spec_pow(1.5f, 1.0f) == 1.5f);
    CHECK(isfinite(sh_spec_pow(3e38f, 10.0f)));
}

/* The PS's vector path (sh_ps_packet, whose Blinn-Phong loops the compiler vectorizes:
 * eight lanes under AVX2, four on the baseline) against sh_blinn_phong one fragment at a
 * time, on the linear colour before the encode, bit for bit: black materials (the colour
 * is the specular term alone) with every exponent, normals spread around the highlight
 * so n.h sweeps (0, 1], every packet length (tails). */
static void random_tri(sh_ps_tri *t, int material)
{
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < 3; i++) t->attr[k][i] = rnd(-1, 1);
        t->attr[k][3] = rnd(-0.6f, 0.6f);
        t->attr[k][4] = rnd(-0.6f, 0.6f);
        t->attr[k][5] = 1;
        t->attr[k][6] = t->attr[k][7] = 0;
    }
    t->prim = 0;
    t->material = (uint32_t)material;
}

/* The fragment's linear colour, the obvious way (as test_shading's reference). */
static void reference(const sh_raster_env *e, const sh_ps_tri *t, float b1, float b2, float c[3])
{
    float a[RS_ATTRS], b0 = 1.0f - b1 - b2;
    for (int i = 0; i < RS_ATTRS; i++) a[i] = b0 * t->attr[0][i] + b1 * t->attr[1][i] + b2 * t->attr[2][i];
    float n[3] = {a[3], a[4], a[5]}, view[3] = {e->frame.eye[0] - a[0], e->frame.eye[1] - a[1], e->frame.eye[2] - a[2]};
    sh_normalize3(n);
    sh_normalize3(view);
    if (sh_dot3(n, view) < 0) { n[0] = -n[0]; n[1] = -n[1]; n[2] = -n[2]; }
    const sc_material *m = &e->scene->materials[t->material];
    float l[3];
    for (int i = 0; i < 3; i++) c[i] = e->ambient * m->albedo[i];
    if (sh_blinn_phong(a, n, view, &e->lights[0], m->albedo, m, l))
        for (int i = 0; i < 3; i++) c[i] += l[i];
}

static void test_ps_lanes_match_scalar(void)
{
    sc_material mats[NEXP];
    for (int k = 0; k < NEXP; k++) {
        mats[k] = sh_default_material;
        memset(mats[k].albedo, 0, sizeof mats[k].albedo);
        mats[k].specular = 1, mats[k].specular_exponent = exponents[k];
    }
    sc_scene scene = {0};
    scene.materials = mats;
    scene.nmaterials = NEXP;
    scene.camera = (sc_camera){{0, 0, 5}, {0, 0, 0}, {0, 1, 0}, 45};
    scene.lights = (sc_light[]){{{2, 3, 6}, {1, 1, 1}}};
    scene.nlights = 1;
    sc_geometry geo = {0};
    for (int i = 0; i < 3; i++) { geo.bbox_min[i] = -2; geo.bbox_max[i] = 2; }
    long bad = 0, lit = 0;
    for (int isa = RT_ISA_BASELINE; isa <= RT_ISA_AVX2; isa++) {
        if (!rt_isa_available((rt_isa)isa)) continue;
        sh_raster_env e;
        sh_raster_env_init(&e, &scene, &geo, 64, 64, SH_AOV_COLOR);
        e.isa = (rt_isa)isa;
        for (int trial = 0; trial < 400; trial++) {
            sh_ps_tri t[16];
            for (int k = 0; k < 16; k++) random_tri(&t[k], (trial + k) % NEXP);
            const int n = 1 + trial % SH_PS_MAX;
            float b1[SH_PS_MAX], b2[SH_PS_MAX], linear[3 * SH_PS_MAX];
            uint8_t tri[SH_PS_MAX];
            uint32_t out[SH_PS_MAX];
            for (int i = 0; i < n; i++) {
                b1[i] = rnd(0, 1);
                b2[i] = rnd(0, 1 - b1[i]);
                tri[i] = (uint8_t)rnd(0, 15.99f);
            }
            sh_ps_packet(&e, &(sh_ps_frags){n, t, tri, b1, b2, NULL, NULL, linear}, out);
            for (int i = 0; i < n; i++) {
                float want[3];
                reference(&e, &t[tri[i]], b1[i], b2[i], want);
                lit += want[0] > 0;
                if (memcmp(want, &linear[3 * i], sizeof want) && bad++ < 3)
                    fprintf(stderr, "  %s fragment %d of %d: %a, expected %a\n", rt_isa_name((rt_isa)isa), i, n,
                            linear[3 * i], want[0]);
            }
        }
    }
    CHECK_MSG(bad == 0, "%ld fragments' specular terms differ from the scalar one", bad);
    CHECK(lit > 5000);
}

int main(void)
{
    RUN(test_close_to_pow);
    RUN(test_special_values);
    RUN(test_lod_log2);
    RUN(test_ps_lanes_match_scalar);
    return check_finish();
}
