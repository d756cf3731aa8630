/* shaders/texture_sample: Direct3D-style sampling on small known textures. Mip sizes and
 * box-filter values of an odd-sized texture, each wrap mode outside [0, 1], bilinear at
 * texel centres, trilinear halfway between levels, the level of detail from known
 * derivatives, and non-finite or huge coordinates and levels reading a defined texel. */
#include "scenes/loaders.h"
#include "shaders/texture_sample.h"
#include "tests/check.h"

#include <math.h>
#include <stdlib.h>

/* A w x h texture whose texel (x, y) (row 0 at the top) has R = 10 x + 1, G = 10 y + 1,
 * B = 200, A = 255 - x; added to s, returned. */
static const sc_texture *ramp(sc_scene *s, int w, int h)
{
    unsigned char *px = malloc((size_t)w * h * 4);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            unsigned char *p = px + 4 * ((size_t)y * w + x);
            p[0] = (unsigned char)(10 * x + 1);
            p[1] = (unsigned char)(10 * y + 1);
            p[2] = 200;
            p[3] = (unsigned char)(255 - x);
        }
    char err[SC_ERR_MAX];
    int i = sc_add_texture(s, "ramp", w, h, px, err);
    CHECK_MSG(i >= 0, "%s", err);
    return i >= 0 ? &s->textures[i] : NULL;
}

/* A w x h checker of black and white texels, added to s. */
static const sc_texture *checker(sc_scene *s, int w, int h)
{
    unsigned char *px = malloc((size_t)w * h * 4);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            unsigned char *p = px + 4 * ((size_t)y * w + x), c = (x + y) % 2 ? 255 : 0;
            p[0] = p[1] = p[2] = c;
            p[3] = 255;
        }
    char err[SC_ERR_MAX];
    int i = sc_add_texture(s, "checker", w, h, px, err);
    CHECK_MSG(i >= 0, "%s", err);
    return i >= 0 ? &s->textures[i] : NULL;
}

static const unsigned char *texel(const sc_mip_level *l, int x, int y)
{
    return l->rgba + 4 * ((size_t)y * l->width + x);
}

static bool near(float a, float b) { return fabsf(a - b) <= 1e-5f; }

static void test_mip_sizes_and_values(void)
{
    sc_scene *s = calloc(1, sizeof *s);
    const sc_texture *t = ramp(s, 5, 3);
    if (!t) return;
    CHECK(t->nlevels == 3);
    CHECK(t->levels[1].width == 2 && t->levels[1].height == 1);
    CHECK(t->levels[2].width == 1 && t->levels[2].height == 1);
    /* level 1 texel 0: the rounded mean of level 0's texels (0..1, 0..1) */
    const unsigned char *a = texel(&t->levels[1], 0, 0), *b = texel(&t->levels[1], 1, 0);
    CHECK(a[0] == (1 + 11 + 1 + 11 + 2) / 4 && a[1] == (1 + 1 + 11 + 11 + 2) / 4);
    CHECK(b[0] == (21 + 31 + 21 + 31 + 2) / 4);
    CHECK(a[2] == 200 && a[3] == (255 + 254 + 255 + 254 + 2) / 4);
    const unsigned char *c = texel(&t->levels[2], 0, 0);
    CHECK(c[0] == (a[0] + b[0] + a[0] + b[0] + 2) / 4);
    CHECK(t->has_alpha);
    sc_free(s);
}

/* The R of nearest sampling at u on a 4 x 1 ramp (R = 1, 11, 21, 31) with wrap w. */
static float nearest_r(const sc_texture *t, sc_wrap w, float u)
{
    sc_sampler sm = {w, w, SC_FILTER_NEAREST_NO_MIPS};
    float rgba[4];
    sh_texture_sample(t, &sm, u, 0.5f, 0.0f, rgba);
    return rgba[0] * 255.0f;
}

static void test_wrap_modes(void)
{
    sc_scene *s = calloc(1, sizeof *s);
    const sc_texture *t = ramp(s, 4, 1);
    if (!t) return;
    /* u = -0.25 is texel -1, u = 1.25 texel 5 (texel 4 is the first beyond the edge) */
    CHECK(near(nearest_r(t, SC_WRAP_REPEAT, -0.25f + 0.125f), 31));   /* -1 -> 3 */
    CHECK(near(nearest_r(t, SC_WRAP_REPEAT, 1.25f + 0.125f), 11));    /* 5 -> 1 */
    CHECK(near(nearest_r(t, SC_WRAP_CLAMP, -0.25f + 0.125f), 1));
    CHECK(near(nearest_r(t, SC_WRAP_CLAMP, 1.25f + 0.125f), 31));
    CHECK(near(nearest_r(t, SC_WRAP_MIRROR, -0.25f + 0.125f), 1));    /* -1 -> 0 */
    CHECK(near(nearest_r(t, SC_WRAP_MIRROR, 1.25f + 0.125f), 21));    /* 5 -> 2 */
    /* at exactly -0.25 and 1.25 (texel borders): repeat and mirror pick texel 3 / 1 / 2 */
    CHECK(near(nearest_r(t, SC_WRAP_REPEAT, -0.25f), 31));
    CHECK(near(nearest_r(t, SC_WRAP_REPEAT, 1.25f), 11));
    CHECK(near(nearest_r(t, SC_WRAP_MIRROR, 1.25f), 21));
    CHECK(near(nearest_r(t, SC_WRAP_CLAMP, -0.25f), 1) && near(nearest_r(t, SC_WRAP_CLAMP, 1.25f), 31));
    /* bilinear across the repeat seam: halfway between texel 3 and texel 0 */
    sc_sampler rep = {SC_WRAP_REPEAT, SC_WRAP_REPEAT, SC_FILTER_LINEAR_NO_MIPS};
    float rgba[4];
    sh_texture_sample(t, &rep, 0.0f, 0.5f, 0.0f, rgba);
    CHECK(near(rgba[0] * 255.0f, 16));
    sc_sampler cl = {SC_WRAP_CLAMP, SC_WRAP_CLAMP, SC_FILTER_LINEAR_NO_MIPS};
    sh_texture_sample(t, &cl, 0.0f, 0.5f, 0.0f, rgba);
    CHECK(near(rgba[0] * 255.0f, 1));
    sh_texture_sample(t, &cl, -0.25f, 0.5f, 0.0f, rgba);
    CHECK(near(rgba[0] * 255.0f, 1));
    sh_texture_sample(t, &cl, 1.25f, 0.5f, 0.0f, rgba);
    CHECK(near(rgba[0] * 255.0f, 31));
    sc_free(s);
}

/* Bilinear at every texel centre returns that texel (v = 0 is the bottom row). */
static void test_bilinear_at_centres(void)
{
    sc_scene *s = calloc(1, sizeof *s);
    const sc_texture *t = ramp(s, 5, 3);
    if (!t) return;
    const sc_wrap wraps[3] = {SC_WRAP_REPEAT, SC_WRAP_CLAMP, SC_WRAP_MIRROR};
    for (int w = 0; w < 3; w++) {
        sc_sampler sm = {wraps[w], wraps[w], SC_FILTER_BILINEAR};
        for (int y = 0; y < 3; y++)
            for (int x = 0; x < 5; x++) {
                float rgba[4];
                sh_texture_sample(t, &sm, (x + 0.5f) / 5.0f, 1.0f - (y + 0.5f) / 3.0f, -1.0f, rgba);
                const unsigned char *e = texel(&t->levels[0], x, y);
                for (int k = 0; k < 4; k++)
                    CHECK_MSG(near(rgba[k] * 255.0f, e[k]), "wrap %d texel (%d, %d) channel %d: %g, not %d",
                              w, x, y, k, rgba[k] * 255.0f, e[k]);
            }
    }
    sc_free(s);
}

/* Trilinear at lod 0.5 is the mean of the bilinear samples of levels 0 and 1; at an
 * integer lod exactly that level; above the last level the last level. */
static void test_trilinear(void)
{
    sc_scene *s = calloc(1, sizeof *s);
    const sc_texture *t = checker(s, 8, 8);
    if (!t) return;
    CHECK(t->nlevels == 4);
    sc_sampler tri = {SC_WRAP_REPEAT, SC_WRAP_REPEAT, SC_FILTER_TRILINEAR};
    sc_sampler bil = {SC_WRAP_REPEAT, SC_WRAP_REPEAT, SC_FILTER_BILINEAR};
    const float u = 0.5f / 8, v = 0.5f / 8;      /* a texel centre: black on level 0 */
    float l0[4], l1[4], half[4], one[4], top[4], last[4];
    sh_texture_sample(t, &bil, u, v, 0.0f, l0);
    sh_texture_sample(t, &bil, u, v, 1.0f, l1);
    sh_texture_sample(t, &tri, u, v, 0.5f, half);
    sh_texture_sample(t, &tri, u, v, 1.0f, one);
    sh_texture_sample(t, &tri, u, v, 9.0f, top);
    sh_texture_sample(t, &bil, u, v, 3.0f, last);
    for (int k = 0; k < 4; k++) {
        CHECK(near(half[k], 0.5f * (l0[k] + l1[k])));
        CHECK(one[k] == l1[k]);
        CHECK(top[k] == last[k]);
    }
    CHECK(fabsf(l0[0] - l1[0]) > 1e-3f);          /* the levels differ: the test means something */
    /* the 1x1 level is the texture's mean */
    const unsigned char *m = texel(&t->levels[3], 0, 0);
    CHECK(near(top[0] * 255.0f, m[0]));
    sc_free(s);
}

/* Non-finite and huge coordinates and levels read a texel of the texture: finite values
 * in [0, 1], for every filter and wrap mode. */
static void test_non_finite(void)
{
    sc_scene *s = calloc(1, sizeof *s);
    const sc_texture *t = ramp(s, 5, 3);
    if (!t) return;
    const float bad[] = {NAN, INFINITY, -INFINITY, 1e30f, -1e30f, 3e38f, 0.5f};
    const sc_wrap wraps[3] = {SC_WRAP_REPEAT, SC_WRAP_CLAMP, SC_WRAP_MIRROR};
    int n = 0;
    for (int f = 0; f <= SC_FILTER_LINEAR_NO_MIPS; f++)
        for (int w = 0; w < 3; w++) {
            sc_sampler sm = {wraps[w], wraps[w], (sc_filter)f};
            for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
                for (size_t j = 0; j < sizeof bad / sizeof *bad; j++)
                    for (size_t l = 0; l < sizeof bad / sizeof *bad; l++) {
                        float rgba[4] = {-1, -1, -1, -1};
                        sh_texture_sample(t, &sm, bad[i], bad[j], bad[l], rgba);
                        bool ok = true;
                        for (int k = 0; k < 4; k++) ok = ok && rgba[k] >= 0.0f && rgba[k] <= 1.0f;
                        ok = ok && near(rgba[2] * 255.0f, 200);
                        n += !ok;
                    }
        }
    CHECK_MSG(n == 0, "%d samples outside the texture's values", n);
    /* a NaN coordinate reads the texel at 0 */
    sc_sampler nn = {SC_WRAP_REPEAT, SC_WRAP_REPEAT, SC_FILTER_NEAREST_NO_MIPS};
    float rgba[4];
    sh_texture_sample(t, &nn, NAN, NAN, NAN, rgba);
    CHECK(near(rgba[0] * 255.0f, 1) && near(rgba[1] * 255.0f, 21));   /* u 0: x 0; v 0: bottom row */
    sc_free(s);
}

static void test_lod(void)
{
    sc_scene *s = calloc(1, sizeof *s);
    const sc_texture *t = ramp(s, 64, 16);
    if (!t) return;
    /* one texel per pixel across: lod 0; four texels: 2; the longer axis wins */
    CHECK(near(sh_texture_lod(t, 1.0f / 64, 0, 0, 1.0f / 16), 0.0f));
    CHECK(near(sh_texture_lod(t, 4.0f / 64, 0, 0, 1.0f / 16), 2.0f));
    CHECK(near(sh_texture_lod(t, 1.0f / 64, 0, 0, 8.0f / 16), 3.0f));
    /* the length of the step, not its components: (3, 4) texels is 5 */
    CHECK(near(sh_texture_lod(t, 3.0f / 64, 4.0f / 16, 0, 0), log2f(5.0f)));
    /* magnification: half a texel per pixel is -1 */
    CHECK(near(sh_texture_lod(t, 0.5f / 64, 0, 0, 0.5f / 16), -1.0f));
    CHECK(sh_texture_lod(t, 0, 0, 0, 0) < -10.0f);
    /* NaN: level 0; infinite or huge: beyond the coarsest */
    CHECK(sh_texture_lod(t, NAN, 0, 0, 0) == 0.0f);
    CHECK(sh_texture_lod(t, INFINITY, 0, 0, 0) >= (float)(t->nlevels - 1));
    CHECK(sh_texture_lod(t, 1e30f, 0, 0, 0) >= (float)(t->nlevels - 1));
    CHECK(sh_texture_lod(t, 0, 0, 0, -1e20f) >= (float)(t->nlevels - 1));
    sc_free(s);
}

/* KHR_texture_transform: offset, then scale and rotation as glTF defines the matrix
 * (translation * rotation * scale, the rotation matrix of the extension's reference code). */
static void test_transform(void)
{
    sc_texture_ref r = sc_texture_ref_none();
    float u = 0.25f, v = 0.75f;
    sh_texture_transform(&r, &u, &v);
    CHECK(u == 0.25f && v == 0.75f);
    r.offset[0] = 0.5f;
    r.offset[1] = -0.25f;
    r.scale[0] = 2.0f;
    r.scale[1] = 4.0f;
    sh_texture_transform(&r, &u, &v);
    CHECK(near(u, 1.0f) && near(v, 2.75f));
    r = sc_texture_ref_none();
    r.rotation = (float)M_PI / 2;
    u = 1.0f;
    v = 0.0f;
    sh_texture_transform(&r, &u, &v);
    CHECK(near(u, 0.0f) && near(v, -1.0f));
}

int main(void)
{
    RUN(test_mip_sizes_and_values);
    RUN(test_wrap_modes);
    RUN(test_bilinear_at_centres);
    RUN(test_trilinear);
    RUN(test_non_finite);
    RUN(test_lod);
    RUN(test_transform);
    return check_finish();
}
