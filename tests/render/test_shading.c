/* The shading kernels against plain scalar formulas: the table-driven sRGB encoder gives
 * the same byte as the powf formula for every float it is tested on (all floats near
 * each of the 255 steps, every 7th float of (2^-20, 1), and the special values), and
 * the pixel shader's packet kernel gives, bit for bit, the colour that shading each
 * fragment alone with sh_blinn_phong gives (or glTF's BRDF, shaders/pbr.h, for a
 * metallic-roughness material), for every AOV, packet length, two-sided normals, several
 * lights and a texture, compiled for each instruction set the CPU has; the quad
 * derivatives of the texture coordinates agree with the rasterizer's own weights, and
 * the packet's per-quad level of detail on a mip chain is the scalar formula's, bit for
 * bit. */
#include "scenes/camera.h"
#include "shaders/color.h"
#include "shaders/blinn_phong.h"
#include "shaders/pbr.h"
#include "shaders/raster_shading.h"
#include "shaders/position_buffer.h"
#include "shaders/texture_sample.h"
#include "tests/check.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static float f_of(uint32_t b) { float f; memcpy(&f, &b, sizeof f); return f; }

static void test_srgb_table_exact(void)
{
    int bad = 0;
    const float special[] = {0.0f, -0.0f, -1.0f, 1.0f, 2.0f, INFINITY, -INFINITY, NAN,
                             1e-30f, 0.0031308f, 0.04045f, 0.5f, 0.99999994f};
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
        bad += sh_to_srgb8(special[i]) != sh_to_srgb8_exact(special[i]);
    for (uint32_t b = 0x35800000u; b < 0x3f800000u; b += 7) {
        float x = f_of(b);
        if (sh_to_srgb8(x) != sh_to_srgb8_exact(x) && bad++ < 5)
            fprintf(stderr, "  srgb(%a): table %d, formula %d\n", x, sh_to_srgb8(x), sh_to_srgb8_exact(x));
    }
    /* around every step of the output (found by scanning for changes near it) */
    uint8_t prev = 0;
    for (uint32_t b = 0x35800000u; b < 0x3f800000u; b += 4096) {
        uint8_t now = sh_to_srgb8_exact(f_of(b));
        if (now != prev)
            for (uint32_t d = b - 4096; d <= b; d++) bad += sh_to_srgb8(f_of(d)) != sh_to_srgb8_exact(f_of(d));
        CHECK_MSG(now >= prev, "the formula decreases at %a", f_of(b));
        prev = now;
    }
    CHECK_MSG(bad == 0, "%d floats encode differently", bad);
}

/* sh_srgb8_encode_n gives sh_srgb8_lookup's byte under each instruction set the CPU has,
 * for every 7th float of (2^-20, 1) and around it, the special values and negative
 * numbers, in arrays whose lengths leave a scalar tail. */
static void test_srgb_encode_n(void)
{
    static float x[1 << 16];
    static uint8_t got[1 << 16];
    const float special[] = {0.0f, -0.0f, -1.0f, 1.0f, 2.0f, INFINITY, -INFINITY, NAN, -NAN,
                             1e-30f, 1e-38f, 0.0031308f, 0.04045f, 0.5f, 0.99999994f, 1e30f};
    sh_srgb_init();
    CHECK(sh_srgb_max_steps == 1);   /* the AVX2 encode's one-gather path, which this tests */
    for (int isa = RT_ISA_BASELINE; isa <= RT_ISA_AVX2; isa++) {
        if (!rt_isa_available((rt_isa)isa)) { printf("  skip: %s not available\n", rt_isa_name((rt_isa)isa)); continue; }
        long bad = 0;
        uint32_t b = 0x35000000u;
        int n = 0;
        for (size_t i = 0; i < sizeof special / sizeof *special; i++) x[n++] = special[i];
        while (b < 0x3f900000u) {
            for (; n < (int)(sizeof x / sizeof *x) && b < 0x3f900000u; n++, b += 7)
                x[n] = (n & 1) ? f_of(b) : (n % 6 == 2 ? -f_of(b) : f_of(b + 1));
            int len = n - 3;                  /* a tail of 8k + 5 */
            sh_srgb8_encode_n(x, got, len, isa == RT_ISA_AVX2);
            for (int i = 0; i < len; i++) bad += got[i] != sh_srgb8_lookup(x[i]);
            n = 0;
        }
        /* each byte's threshold and its neighbours: where a bucket's step lies */
        n = 0;
        for (int k = 1; k < 256; k++) {
            uint32_t t;
            memcpy(&t, &sh_srgb_threshold[k], sizeof t);
            for (int d = -2; d <= 2; d++) x[n++] = f_of(t + (uint32_t)d);
        }
        sh_srgb8_encode_n(x, got, n, isa == RT_ISA_AVX2);
        for (int i = 0; i < n; i++) bad += got[i] != sh_srgb8_lookup(x[i]);
        CHECK_MSG(bad == 0, "%s: %ld floats encode differently", rt_isa_name((rt_isa)isa), bad);
    }
}

/* ---- the pixel shader --------------------------------------------------------------- */

static uint32_t lcg_state = 12345;
static float rnd(float lo, float hi)
{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return lo + (hi - lo) * (float)(lcg_state >> 8) / 16777216.0f;
}

static uint32_t pack(const float c[3])
{
    return (uint32_t)sh_to_srgb8_exact(c[0]) | (uint32_t)sh_to_srgb8_exact(c[1]) << 8 |
           (uint32_t)sh_to_srgb8_exact(c[2]) << 16 | 0xff000000u;
}

/* One fragment, the obvious way. */
static uint32_t reference(const sh_raster_env *e, const sh_ps_tri *t, float b1, float b2)
{
    float a[RS_ATTRS], b0 = 1.0f - b1 - b2;
    for (int i = 0; i < RS_ATTRS; i++) a[i] = b0 * t->attr[0][i] + b1 * t->attr[1][i] + b2 * t->attr[2][i];
    if (e->aov == SH_AOV_PRIMID) {
        uint8_t b[4];
        sh_encode_primid(t->prim + 1, b);
        return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | 0xff000000u;
    }
    float n[3] = {a[3], a[4], a[5]};
    sh_normalize3(n);
    if (e->aov == SH_AOV_NORMAL) {
        uint32_t r = 0;
        for (int i = 0; i < 3; i++) r |= (uint32_t)((n[i] * 0.5f + 0.5f) * 255.0f + 0.5f) << (8 * i);
        return r | 0xff000000u;
    }
    if (e->aov == SH_AOV_DEPTH) {
        float d[3] = {a[0] - e->frame.eye[0], a[1] - e->frame.eye[1], a[2] - e->frame.eye[2]};
        float v = 1.0f - (sh_dot3(d, e->frame.forward) - e->near) / (e->far - e->near);
        uint32_t g = (uint32_t)(fminf(fmaxf(v, 0), 1) * 255.0f + 0.5f);
        return g | g << 8 | g << 16 | 0xff000000u;
    }
    const sc_material *m = &e->scene->materials[t->material];
    float view[3] = {e->frame.eye[0] - a[0], e->frame.eye[1] - a[1], e->frame.eye[2] - a[2]};
    float albedo[3] = {m->albedo[0], m->albedo[1], m->albedo[2]}, c[3], l[3];
    sh_normalize3(view);
    const float facing = sh_dot3(n, view) < 0 ? -1.0f : 1.0f;
    if (sh_dot3(n, view) < 0) { n[0] = -n[0]; n[1] = -n[1]; n[2] = -n[2]; }
    const sc_texture *tx = sh_texture_of(e->scene, &m->albedo_map);
    if (tx) {
        float texel[4];
        sh_texture_sample(tx, &m->albedo_map.sampler, a[6], a[7], 0.0f, texel);
        for (int i = 0; i < 3; i++) albedo[i] *= texel[i];
    }
    if (e->aov == SH_AOV_ALBEDO)
        return (uint32_t)sh_to_linear8(albedo[0]) | (uint32_t)sh_to_linear8(albedo[1]) << 8 |
               (uint32_t)sh_to_linear8(albedo[2]) << 16 | 0xff000000u;
    if (m->model == SC_SHADING_METALLIC_ROUGHNESS) {   /* glTF's BRDF through shaders/pbr.h */
        float p[3][3], nv[3][3], uv[3][2];
        for (int k = 0; k < 3; k++) {
            memcpy(p[k], t->attr[k], sizeof p[k]);
            memcpy(nv[k], t->attr[k] + 3, sizeof nv[k]);
            memcpy(uv[k], t->attr[k] + 6, sizeof uv[k]);
        }
        sh_surface_in in;
        sh_surface_in_of_vertices(p, nv, uv, b1, b2, &in);
        in.facing = facing;
        in.lod = (sh_lod){.kind = SH_LOD_BASE};
        sh_surface s;
        sh_surface_gather(e->scene, m, &in, &s);
        sh_pbr_shade_local(&s, a, view, e->lights, e->nlights, e->ambient, c);
        return pack(c);
    }
    for (int i = 0; i < 3; i++) c[i] = e->ambient * albedo[i];
    for (int k = 0; k < e->nlights; k++)
        if (sh_blinn_phong(a, n, view, &e->lights[k], albedo, m, l))
            for (int i = 0; i < 3; i++) c[i] += l[i];
    return pack(c);
}

static void random_tri(sh_ps_tri *t, uint32_t nmaterials)
{
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < 3; i++) t->attr[k][i] = rnd(-2, 2);
        for (int i = 3; i < 6; i++) t->attr[k][i] = rnd(-1, 1);
        t->attr[k][6] = rnd(-3, 3);
        t->attr[k][7] = rnd(-3, 3);
    }
    if (rnd(0, 1) < 0.1f) memset(t->attr[0] + 3, 0, 3 * sizeof(float));   /* zero normal */
    t->prim = (uint32_t)rnd(0, 16777215);
    t->material = (uint32_t)rnd(0, (float)nmaterials - 0.01f);
}

/* The vertex kernel (sh_vs_vertices_of) against the scalar formulas: camera-space clip
 * position (OpenGL projection), rs_outcode and rs_project_vertex, bit for bit, under
 * each instruction set the CPU has, for vertices in view, behind the eye, on the eye
 * plane, far outside the guard band and in between, and for every count up to
 * SH_VS_MAX (a scalar tail). */
static void reference_clip(const sh_raster_env *e, const float p[3], float clip[4])
{
    float d[3] = {p[0] - e->frame.eye[0], p[1] - e->frame.eye[1], p[2] - e->frame.eye[2]};
    float depth = sh_dot3(d, e->frame.forward), n = e->near, f = e->far;
    clip[0] = sh_dot3(d, e->frame.right) / e->frame.half_w;
    clip[1] = sh_dot3(d, e->frame.up) / e->frame.half_h;
    clip[2] = (f + n) / (f - n) * depth - 2.0f * f * n / (f - n);
    clip[3] = depth;
}

/* The raster vertex buffer holds each vertex's position, normal and uv as the geometry's
 * arrays do (uv 0 without texcoords), each vertex inside one 64-byte line. */
static void test_vertex_buffer_interleaves(void)
{
    enum { N = 101 };
    static float pos[3 * N], nrm[3 * N], uv[2 * N];
    for (int i = 0; i < 3 * N; i++) pos[i] = rnd(-5, 5), nrm[i] = rnd(-1, 1);
    for (int i = 0; i < 2 * N; i++) uv[i] = rnd(-2, 2);
    sc_geometry geo = {0};
    geo.nvertices = N;
    geo.positions = pos;
    geo.normals = nrm;
    for (int with_uv = 0; with_uv < 2; with_uv++) {
        geo.texcoords = with_uv ? uv : NULL;
        sh_vertex *v = sh_vertices_interleave(&geo);
        CHECK(v != NULL && (uintptr_t)v % 64 == 0);
        if (!v) return;
        long bad = 0;
        for (int i = 0; i < N; i++) {
            const float want_uv[2] = {with_uv ? uv[2 * i] : 0, with_uv ? uv[2 * i + 1] : 0};
            bad += memcmp(v[i].position, pos + 3 * i, sizeof v[i].position) != 0;
            bad += memcmp(v[i].normal, nrm + 3 * i, sizeof v[i].normal) != 0;
            bad += memcmp(v[i].uv, want_uv, sizeof v[i].uv) != 0;
        }
        CHECK_MSG(bad == 0, "%ld attributes differ (texcoords %d)", bad, with_uv);
        sh_vertices_free(v);
    }
}

/* How many of the first n vertices' outputs of the two kernels differ in any bit. */
static long vs_arrays_differ(const sh_vs_vertices *a, const sh_vs_vertices *b, int n)
{
    long bad = 0;
    for (int i = 0; i < n; i++) {
        for (int q = 0; q < 4; q++) bad += memcmp(&a->clip[q][i], &b->clip[q][i], sizeof(float)) != 0;
        bad += memcmp(&a->inv_w[i], &b->inv_w[i], sizeof(float)) || memcmp(&a->z[i], &b->z[i], sizeof(float));
        bad += a->x[i] != b->x[i] || a->y[i] != b->y[i] || a->code[i] != b->code[i];
    }
    return bad;
}

/* The depth pass's position buffer: every triangle corner's position is the geometry's,
 * the vertices are numbered in the order the index stream first meets them (so the
 * largest index so far grows by at most one per corner), and unused vertices are left
 * out. */
static void test_position_buffer_renumbers(void)
{
    enum { N = 500, T = 700 };
    static float pos[3 * N];
    static uint32_t idx[3 * T];
    for (int i = 0; i < 3 * N; i++) pos[i] = rnd(-5, 5);
    for (int i = 0; i < 3 * T; i++) idx[i] = (uint32_t)rnd(0, N - 100.01f);   /* the last 100 unused */
    sc_geometry geo = {0};
    geo.nvertices = N;
    geo.ntriangles = T;
    geo.positions = pos;
    geo.indices = idx;
    sh_position_buffer *b = sh_position_buffer_of(&geo);
    CHECK(b != NULL);
    if (!b) return;
    long bad = 0;
    int64_t seen = -1;
    for (int i = 0; i < 3 * T; i++) {
        bad += memcmp(&b->positions[3 * (size_t)b->indices[i]], &pos[3 * (size_t)idx[i]], 3 * sizeof(float)) != 0;
        bad += (int64_t)b->indices[i] > seen + 1;
        if ((int64_t)b->indices[i] > seen) seen = b->indices[i];
    }
    CHECK_MSG(bad == 0, "%ld corners differ or are out of first-use order", bad);
    CHECK_MSG(seen < N - 100, "%lld vertices numbered, %d used at most", (long long)seen + 1, N - 100);
    sh_position_buffer_free(b);
}

/* The vertex kernel against the scalar formulas (above), and sh_vs_positions_of, from
 * the packed positions, against sh_vs_vertices_of from the interleaved buffer:
 * the same bits. */
static void test_vs_kernel_matches_scalar(void)
{
    enum { N = 4000 };
    static float pos[3 * N];
    static sh_vertex verts[N];
    static uint32_t vertex[SH_VS_MAX];
    for (int i = 0; i < N; i++) {
        float r = i % 5 == 0 ? 1e4f : i % 5 == 1 ? 0.01f : 3.0f;   /* far out, near, around */
        for (int k = 0; k < 3; k++) pos[3 * i + k] = rnd(-r, r);
    }
    pos[0] = 0; pos[1] = 0; pos[2] = 5;                         /* the eye itself: w = 0 */
    for (int i = 0; i < N; i++) memcpy(verts[i].position, pos + 3 * i, sizeof verts[i].position);
    sc_scene scene = {0};
    scene.camera = (sc_camera){{0, 0, 5}, {0, 0, 0}, {0, 1, 0}, 45};
    sc_geometry geo = {0};
    geo.positions = pos;
    geo.nvertices = N;
    for (int i = 0; i < 3; i++) { geo.bbox_min[i] = -3; geo.bbox_max[i] = 3; }
    long bad = 0, inside = 0;
    for (int isa = RT_ISA_BASELINE; isa <= RT_ISA_AVX2; isa++) {
        if (!rt_isa_available((rt_isa)isa)) continue;
        sh_raster_env e;
        sh_raster_env_init(&e, &scene, &geo, 640, 480, SH_AOV_COLOR);
        e.isa = (rt_isa)isa;
        for (int first = 0, n = 1; first + n <= N; first += n, n = n % SH_VS_MAX + 1) {
            for (int i = 0; i < n; i++) vertex[i] = (uint32_t)(first + i);
            sh_vs_vertices v, from_positions;
            sh_vs_vertices_of(&e, verts, vertex, n, 640, 480, &v);
            sh_vs_positions_of(&e, pos, vertex, n, 640, 480, &from_positions);
            bad += vs_arrays_differ(&v, &from_positions, n);
            for (int i = 0; i < n; i++) {
                rs_vertex r;
                reference_clip(&e, &pos[3 * vertex[i]], r.clip);
                for (int q = 0; q < 4; q++) bad += memcmp(&r.clip[q], &v.clip[q][i], sizeof(float)) != 0;
                unsigned code = rs_outcode(&r);
                bad += v.code[i] != code;
                rs_screen_vertex sv;
                rs_project_vertex(&r, 640, 480, &sv);
                if (code || !sv.ok) continue;      /* only in-band vertices are set up from these */
                inside++;
                bad += sv.x != v.x[i] || sv.y != v.y[i] || memcmp(&sv.z, &v.z[i], 4) || memcmp(&sv.inv_w, &v.inv_w[i], 4);
            }
        }
    }
    CHECK_MSG(bad == 0, "%ld values differ", bad);
    CHECK(inside > 1000);
}

static void test_ps_kernel_matches_scalar(void)
{
    unsigned char texels[4 * 4 * 4];
    for (size_t i = 0; i < sizeof texels; i++) texels[i] = (unsigned char)(i * 37 + 11);
    sc_texture tex = {.name = "t", .nlevels = 1, .levels[0] = {4, 4, texels}};
    sc_material mats[3] = {sh_default_material, sh_default_material, sh_default_material};
    snprintf(mats[0].name, sizeof mats[0].name, "plain");
    memcpy(mats[0].albedo, (float[3]){0.7f, 0.5f, 0.3f}, sizeof mats[0].albedo);
    mats[0].reflectivity = 0, mats[0].specular = 0.6f, mats[0].specular_exponent = 20.0f;
    snprintf(mats[1].name, sizeof mats[1].name, "textured");
    memcpy(mats[1].albedo, (float[3]){0.9f, 0.9f, 0.9f}, sizeof mats[1].albedo);
    mats[1].albedo_map.texture = 0;
    mats[1].reflectivity = 0, mats[1].specular = 0.3f, mats[1].specular_exponent = 7.5f;
    snprintf(mats[2].name, sizeof mats[2].name, "metallic-roughness");   /* glTF's model */
    memcpy(mats[2].albedo, (float[3]){0.8f, 0.3f, 0.2f}, sizeof mats[2].albedo);
    mats[2].albedo_map.texture = 0;
    mats[2].model = SC_SHADING_METALLIC_ROUGHNESS;
    mats[2].metallic = 0.4f, mats[2].roughness = 0.35f;
    memcpy(mats[2].emissive, (float[3]){0.05f, 0.0f, 0.02f}, sizeof mats[2].emissive);
    sc_scene scene = {0};
    scene.materials = mats;
    scene.nmaterials = 3;
    scene.textures = &tex;
    scene.ntextures = 1;
    scene.camera = (sc_camera){{0, 0, 5}, {0, 0, 0}, {0, 1, 0}, 45};
    scene.lights = (sc_light[]){{{3, 4, 5}, {0.8f, 0.8f, 0.7f}}, {{-4, 1, -2}, {0.3f, 0.2f, 0.6f}}};
    scene.nlights = 2;
    sc_geometry geo = {0};
    for (int i = 0; i < 3; i++) { geo.bbox_min[i] = -2; geo.bbox_max[i] = 2; }
    int bad = 0, variants = 0;
    for (int v = 0; v < 2 * SH_AOV_COUNT; v++) {
        rt_isa isa = (rt_isa)(v / SH_AOV_COUNT);
        int aov = v % SH_AOV_COUNT;
        if (!rt_isa_available(isa)) continue;
        variants++;
        sh_raster_env e;
        sh_raster_env_init(&e, &scene, &geo, 64, 64, (sh_aov)aov);
        e.isa = isa;
        for (int trial = 0; trial < 200; trial++) {
            sh_ps_tri t[16];
            for (int k = 0; k < 16; k++) random_tri(&t[k], 3);
            if (trial % 3 == 0)                   /* one material: the PS's one-material path */
                for (int k = 0; k < 16; k++) t[k].material = (uint32_t)(trial / 3 % 3);
            int n = 1 + trial % SH_PS_MAX;
            float b1[SH_PS_MAX], b2[SH_PS_MAX];
            uint8_t tri[SH_PS_MAX];
            uint32_t out[SH_PS_MAX];
            for (int i = 0; i < n; i++) {
                b1[i] = rnd(0, 1);
                b2[i] = rnd(0, 1 - b1[i]);
                tri[i] = (uint8_t)(i == 0 || rnd(0, 1) < 0.3f ? rnd(0, 15.99f) : tri[i - 1]);
            }
            sh_ps_packet(&e, &(sh_ps_frags){n, t, tri, b1, b2, NULL, NULL, NULL}, out);
            for (int i = 0; i < n; i++) {
                uint32_t want = reference(&e, &t[tri[i]], b1[i], b2[i]);
                if (out[i] != want && bad++ < 5)
                    fprintf(stderr, "  %s aov %d fragment %d of %d: %08x, expected %08x\n",
                            rt_isa_name(isa), aov, i, n, out[i], want);
            }
        }
    }
    CHECK_MSG(bad == 0, "%d fragments differ from the scalar formula", bad);
    CHECK(variants >= SH_AOV_COUNT);              /* the baseline ran every AOV */
    printf("  kernels tested: %s%s\n", rt_isa_name(RT_ISA_BASELINE),
           rt_isa_available(RT_ISA_AVX2) ? ", avx2" : "");
}

/* uv at pixel (x, y) by the rasterizer's own weights (rs_edges_at, rs_persp_weights). */
static void uv_at(const rs_setup *su, const sh_ps_tri *t, int x, int y, double uv[2])
{
    int64_t e0, e1;
    rs_edges_at(su, x, y, &e0, &e1);
    double l0 = (double)e0 / (double)su->area, l1 = (double)e1 / (double)su->area;
    float b1, b2;
    rs_persp_weights(l0, l1, 1.0 - l0 - l1, su->inv_w[0], su->inv_w[1], su->inv_w[2], &b1, &b2);
    for (int c = 0; c < 2; c++)
        uv[c] = (1.0 - b1 - b2) * t->attr[0][6 + c] + b1 * t->attr[1][6 + c] + b2 * t->attr[2][6 + c];
}

/* The quad derivatives: a triangle facing the camera at depth 1 (90 degrees, 64x64:
 * 32 pixels per unit) with uv = its world x, y has the exact steps 1/32 right in u and
 * -1/32 down in v; a tilted one, the differences of the rasterizer's own uv (snapped
 * vertices: within 1%, where a step is below one uv unit) along the quad's top row and
 * left column; the same bits for
 * a quad's four pixels, pixels outside the triangle included. */
static void test_quad_derivatives(void)
{
    sc_scene scene = {0};
    scene.camera = (sc_camera){{0, 0, 1}, {0, 0, 0}, {0, 1, 0}, 90};
    for (int tilt = 0; tilt < 2; tilt++) {
        float pos[9] = {-0.9f, -0.9f, 0, 0.9f, -0.9f, tilt ? -3.0f : 0, -0.9f, 0.9f, tilt ? 0.5f : 0};
        sc_geometry geo = {0};
        geo.positions = pos;
        geo.nvertices = 3;
        for (int i = 0; i < 3; i++) { geo.bbox_min[i] = -3; geo.bbox_max[i] = 1; }
        sh_raster_env e;
        sh_raster_env_init(&e, &scene, &geo, 64, 64, SH_AOV_COLOR);
        sh_vs_vertices v;
        sh_vertex verts[3];
        memset(verts, 0, sizeof verts);
        for (int k = 0; k < 3; k++) memcpy(verts[k].position, pos + 3 * k, sizeof verts[k].position);
        sh_vs_vertices_of(&e, verts, (const uint32_t[3]){0, 1, 2}, 3, 64, 64, &v);
        rs_triangle tr = {0};
        for (int k = 0; k < 3; k++) {
            for (int q = 0; q < 4; q++) tr.v[k].clip[q] = v.clip[q][k];
            memcpy(tr.v[k].attr, pos + 3 * k, 3 * sizeof(float));
            tr.v[k].attr[6] = pos[3 * k];
            tr.v[k].attr[7] = pos[3 * k + 1];
        }
        rs_setup su;
        CHECK(rs_setup_triangle(&tr, 64, 64, &su));
        sh_ps_tri t = {0};
        for (int k = 0; k < 3; k++) memcpy(t.attr[k], tr.v[su.order[k]].attr, sizeof t.attr[k]);
        int bad = 0;
        for (int y = 0; y < 64; y += 2)
            for (int x = 0; x < 64; x += 2) {
                float d[4], q[4];
                sh_ps_quad_derivatives(&e, &t, x, y, d);
                for (int j = 1; j < 4; j++) {
                    sh_ps_quad_derivatives(&e, &t, x + j % 2, y + j / 2, q);
                    bad += memcmp(d, q, sizeof d) != 0;
                }
                double w00[2], w10[2], w01[2];
                uv_at(&su, &t, x, y, w00);
                uv_at(&su, &t, x + 1, y, w10);
                uv_at(&su, &t, x, y + 1, w01);
                const double want[4] = {w10[0] - w00[0], w10[1] - w00[1], w01[0] - w00[0], w01[1] - w00[1]};
                bool far = false;                 /* near the plane's horizon: snapping dominates */
                for (int c = 0; c < 4; c++) far |= !(fabs(want[c]) < 1.0);
                for (int c = 0; c < 4 && !far; c++)
                    if (fabs(d[c] - want[c]) > 1e-2 * (fabs(want[c]) + 1.0 / 64) && bad++ < 5)
                        fprintf(stderr, "  tilt %d quad (%d, %d) d[%d] %g, rasterizer %g\n", tilt, x, y, c, d[c], want[c]);
                if (!tilt)
                    bad += fabsf(d[0] - 1.0f / 32) > 1e-6f || fabsf(d[1]) > 1e-6f || fabsf(d[2]) > 1e-6f ||
                           fabsf(d[3] + 1.0f / 32) > 1e-6f;
            }
        CHECK_MSG(bad == 0, "tilt %d: %d quads wrong", tilt, bad);
    }
}

/* The quad derivatives by the formula sh_ps_quad_derivatives documents, one operation
 * at a time in scalar double: each corner projected as the VS does (unsnapped), U, V
 * and W = 1/w affine in the pixel centre, uv = (U/W, V/W) at the quad's top-left pixel,
 * the one right of it and the one below. */
static void reference_quad_d(const sh_raster_env *e, const sh_ps_tri *t, int x, int y, float d[4])
{
    const sc_camera_frame *fr = &e->frame;
    double sx[3], sy[3], iw[3];
    for (int k = 0; k < 3; k++) {
        double p[3];
        for (int c = 0; c < 3; c++) p[c] = (double)t->attr[k][c] - fr->eye[c];
        double depth = p[0] * fr->forward[0] + p[1] * fr->forward[1] + p[2] * fr->forward[2];
        double c0 = (p[0] * fr->right[0] + p[1] * fr->right[1] + p[2] * fr->right[2]) / fr->half_w;
        double c1 = (p[0] * fr->up[0] + p[1] * fr->up[1] + p[2] * fr->up[2]) / fr->half_h;
        iw[k] = 1.0 / depth;
        sx[k] = (c0 * iw[k] * 0.5 + 0.5) * e->width;
        sy[k] = (0.5 - c1 * iw[k] * 0.5) * e->height;
    }
    const double ax = sx[1] - sx[0], ay = sy[1] - sy[0], bx = sx[2] - sx[0], by = sy[2] - sy[0];
    const double inv_area = 1.0 / (ax * by - bx * ay);
    const double l1x = by * inv_area, l1y = -bx * inv_area, l2x = -ay * inv_area, l2y = ax * inv_area;
    double plane[3][3];
    for (int c = 0; c < 3; c++) {
        double v[3];
        for (int k = 0; k < 3; k++) v[k] = c < 2 ? iw[k] * t->attr[k][6 + c] : iw[k];
        plane[c][0] = v[0];
        plane[c][1] = (v[1] - v[0]) * l1x + (v[2] - v[0]) * l2x;
        plane[c][2] = (v[1] - v[0]) * l1y + (v[2] - v[0]) * l2y;
    }
    const double px = (double)(x & ~1) + 0.5 - sx[0], py = (double)(y & ~1) + 0.5 - sy[0];
    double at[3], uv[3][2];
    for (int c = 0; c < 3; c++) at[c] = plane[c][0] + plane[c][1] * px + plane[c][2] * py;
    for (int j = 0; j < 3; j++) {
        double U = at[0], V = at[1], W = at[2];
        if (j) U += plane[0][j], V += plane[1][j], W += plane[2][j];
        uv[j][0] = U * (1.0 / W);
        uv[j][1] = V * (1.0 / W);
    }
    d[0] = (float)(uv[1][0] - uv[0][0]);
    d[1] = (float)(uv[1][1] - uv[0][1]);
    d[2] = (float)(uv[2][0] - uv[0][0]);
    d[3] = (float)(uv[2][1] - uv[0][1]);
}

/* The unlit linear colour of a textured fragment at a pixel, alone (ambient x albedo
 * factor x texel): interpolated uv, the level of detail from the reference quad
 * derivatives (sh_surface_lod, through the map's transform), one scalar trilinear
 * sample. A float, so a level one bit off shows. */
static void reference_unlit(const sh_raster_env *e, const sh_ps_tri *t, float b1, float b2, int x, int y,
                            float rgb[3])
{
    const sc_material *m = &e->scene->materials[t->material];
    const sc_texture *tex = &e->scene->textures[m->albedo_map.texture];
    const float b0 = 1.0f - b1 - b2;
    float u = b0 * t->attr[0][6] + b1 * t->attr[1][6] + b2 * t->attr[2][6];
    float v = b0 * t->attr[0][7] + b1 * t->attr[1][7] + b2 * t->attr[2][7];
    float d[4], texel[4];
    reference_quad_d(e, t, x, y, d);
    const sh_lod q = {.kind = SH_LOD_QUAD, .dudx = d[0], .dvdx = d[1], .dudy = d[2], .dvdy = d[3]};
    const float lod = sh_surface_lod(&q, &m->albedo_map, tex);
    sh_texture_transform(&m->albedo_map, &u, &v);
    sh_texture_sample(tex, &m->albedo_map.sampler, u, v, lod, texel);
    for (int k = 0; k < 3; k++) rgb[k] = e->ambient * (m->albedo[k] * texel[k]);
}

enum { CHAIN_SIDE = 64, CHAIN_LEVELS = 7 };

/* A 64x64 mip chain over `texels` whose levels differ, so the level decides the texel:
 * byte i of level l is i * a + b + c * l (mod 256). */
static sc_texture make_chain(unsigned char texels[CHAIN_LEVELS][CHAIN_SIDE * CHAIN_SIDE * 4],
                             int a, int b, int c)
{
    sc_texture tex = {.name = "chain", .nlevels = CHAIN_LEVELS};
    for (int l = 0; l < CHAIN_LEVELS; l++) {
        const int side = CHAIN_SIDE >> l;
        tex.levels[l] = (sc_mip_level){side, side, texels[l]};
        for (int i = 0; i < side * side * 4; i++) texels[l][i] = (unsigned char)(i * a + b + c * l);
    }
    return tex;
}

/* The packet tests' scene: two default (untextured) materials, a mip chain from
 * make_chain(a, b, c) that a test may give either of them, one white light at (3, 4, 5),
 * the camera on +z looking at the origin and a geometry box of side 4 about it. Static
 * in each test (the chain is 114 KiB), it points into itself. */
typedef struct {
    unsigned char texels[CHAIN_LEVELS][CHAIN_SIDE * CHAIN_SIDE * 4];
    sc_texture tex;
    sc_material mats[2];
    sc_light light;
    sc_scene scene;
    sc_geometry geo;
} chain_scene;

static void chain_scene_init(chain_scene *s, int a, int b, int c)
{
    s->tex = make_chain(s->texels, a, b, c);
    s->mats[0] = s->mats[1] = sh_default_material;
    s->light = (sc_light){.position = {3, 4, 5}, .color = {1, 1, 1}};
    s->scene = (sc_scene){.materials = s->mats, .nmaterials = 2, .textures = &s->tex, .ntextures = 1,
                          .lights = &s->light, .nlights = 1};
    s->scene.camera = (sc_camera){{0, 0, 5}, {0, 0, 0}, {0, 1, 0}, 45};
    s->geo = (sc_geometry){0};
    for (int i = 0; i < 3; i++) { s->geo.bbox_min[i] = -2; s->geo.bbox_max[i] = 2; }
}

/* The packet kernel's level of detail: fragments at pixels in 2x2 quads (a run of a
 * triangle's fragments per quad, several triangles and two materials per packet, one
 * with a KHR transform) on a mip chain, where the level decides the texel, unlit: the
 * linear colour equals reference_unlit's bit for bit under each instruction set, so
 * the packet's quad setup, derivatives and level (vector, inline) are the scalar
 * formulas'. */
static void test_ps_quad_lod_matches_scalar(void)
{
    static chain_scene s;
    chain_scene_init(&s, 37, 11, 53);
    sc_material *mats = s.mats;
    for (int k = 0; k < 2; k++) {
        mats[k].albedo_map.texture = 0;
        memcpy(mats[k].albedo, (float[3]){0.9f, 0.7f - 0.2f * k, 0.5f}, sizeof mats[k].albedo);
    }
    mats[1].albedo_map.scale[0] = 2.5f, mats[1].albedo_map.rotation = 0.3f, mats[1].albedo_map.offset[1] = 0.25f;
    int bad = 0;
    for (int isa = RT_ISA_BASELINE; isa <= RT_ISA_AVX2; isa++) {
        if (!rt_isa_available((rt_isa)isa)) continue;
        sh_raster_env e;
        sh_raster_env_init(&e, &s.scene, &s.geo, 256, 256, SH_AOV_COLOR);
        e.isa = (rt_isa)isa;
        e.nlights = 0;                            /* ambient only: the colour is the texel's */
        for (int trial = 0; trial < 300; trial++) {
            sh_ps_tri t[8];
            for (int k = 0; k < 8; k++) random_tri(&t[k], 2);
            if (trial % 3 == 0)                   /* one material: the PS's one-material path */
                for (int k = 0; k < 8; k++) t[k].material = (uint32_t)(trial / 3 % 2);
            int n = 1 + trial % SH_PS_MAX;
            float b1[SH_PS_MAX], b2[SH_PS_MAX];
            uint8_t tri[SH_PS_MAX];
            uint16_t x[SH_PS_MAX], y[SH_PS_MAX];
            uint32_t out[SH_PS_MAX];
            float linear[3 * SH_PS_MAX];
            for (int i = 0; i < n; i++) {
                const bool same_quad = i > 0 && rnd(0, 1) < 0.6f;   /* the next pixel of a quad */
                x[i] = same_quad ? (uint16_t)((x[i - 1] & ~1) + (i & 1)) : (uint16_t)rnd(0, 255.99f);
                y[i] = same_quad ? (uint16_t)((y[i - 1] & ~1) + (i >> 1 & 1)) : (uint16_t)rnd(0, 255.99f);
                tri[i] = same_quad && rnd(0, 1) < 0.8f ? tri[i - 1] : (uint8_t)rnd(0, 7.99f);
                b1[i] = rnd(0, 1);
                b2[i] = rnd(0, 1 - b1[i]);
            }
            sh_ps_packet(&e, &(sh_ps_frags){n, t, tri, b1, b2, x, y, linear}, out);
            for (int i = 0; i < n; i++) {
                float want[3];
                reference_unlit(&e, &t[tri[i]], b1[i], b2[i], x[i], y[i], want);
                if (memcmp(&linear[3 * i], want, sizeof want) && bad++ < 5)
                    fprintf(stderr, "  %s fragment %d of %d at (%d, %d): %.9g, expected %.9g\n",
                            rt_isa_name((rt_isa)isa), i, n, x[i], y[i], linear[3 * i], want[0]);
            }
        }
    }
    CHECK_MSG(bad == 0, "%d fragments differ from the scalar level of detail", bad);
}

/* sh_ps_packet_kept (Tile-Shade's: a triangle's quad setup kept across its packets)
 * gives sh_ps_packet's colours bit for bit, both when it fills the kept setups in and
 * when it reads them back in a later packet whose fragments lie in other quads, under
 * each instruction set; every triangle of a textured fragment has its setup made. */
static void test_ps_kept_quads_match(void)
{
    static chain_scene s;
    chain_scene_init(&s, 29, 7, 41);
    s.mats[1].albedo_map.texture = 0;             /* material 0 untextured, 1 textured */
    int bad = 0, unmade = 0;
    for (int isa = RT_ISA_BASELINE; isa <= RT_ISA_AVX2; isa++) {
        if (!rt_isa_available((rt_isa)isa)) continue;
        for (int aov = SH_AOV_COLOR; aov <= SH_AOV_ALBEDO; aov += SH_AOV_ALBEDO - SH_AOV_COLOR) {
            sh_raster_env e;
            sh_raster_env_init(&e, &s.scene, &s.geo, 256, 256, (sh_aov)aov);
            e.isa = (rt_isa)isa;
            for (int trial = 0; trial < 100; trial++) {
                sh_ps_tri t[8];
                sh_ps_quad_setup kept[8];
                sh_ps_quad_setup *quads[8];
                for (int k = 0; k < 8; k++) {
                    random_tri(&t[k], 2);
                    if (trial % 2) t[k].material = 1;   /* one material: the one-material path */
                    kept[k].ready = false;
                    quads[k] = &kept[k];
                }
                for (int pass = 0; pass < 2; pass++) {    /* fill in, then read back */
                    int n = 1 + (trial * 7 + pass * 13) % SH_PS_MAX;
                    float b1[SH_PS_MAX], b2[SH_PS_MAX];
                    uint8_t tri[SH_PS_MAX];
                    uint16_t x[SH_PS_MAX], y[SH_PS_MAX];
                    uint32_t want[SH_PS_MAX], got[SH_PS_MAX];
                    for (int i = 0; i < n; i++) {
                        x[i] = (uint16_t)rnd(0, 255.99f);
                        y[i] = (uint16_t)rnd(0, 255.99f);
                        tri[i] = (uint8_t)rnd(0, 7.99f);
                        b1[i] = rnd(0, 1);
                        b2[i] = rnd(0, 1 - b1[i]);
                    }
                    const sh_ps_frags f = {n, t, tri, b1, b2, x, y, NULL};
                    sh_ps_packet(&e, &f, want);
                    sh_ps_packet_kept(&e, &f, &(sh_ps_kept){quads, 0}, got);
                    for (int i = 0; i < n; i++) {
                        if (got[i] != want[i] && bad++ < 5)
                            fprintf(stderr, "  %s pass %d fragment %d: %08x, expected %08x\n",
                                    rt_isa_name((rt_isa)isa), pass, i, got[i], want[i]);
                        unmade += t[tri[i]].material == 1 && !kept[tri[i]].ready;
                    }
                }
            }
        }
    }
    CHECK_MSG(bad == 0, "%d fragments differ with kept quad setups", bad);
    CHECK_MSG(unmade == 0, "%d textured fragments' triangles have no kept setup", unmade);
}

/* sh_ps_packet_kept told the packet's triangle count (Tile-Shade's: the one-material
 * test once per triangle) gives sh_ps_packet's colours bit for bit, under each
 * instruction set and AOV: one textured material; one material but the last triangle,
 * which fragments use, another (missing it shades those with the wrong material); one
 * material but an unused triangle of another; random materials. */
static void test_ps_ntris_match(void)
{
    static chain_scene s;
    chain_scene_init(&s, 17, 5, 23);
    s.mats[0].albedo_map.texture = 0;
    s.mats[1].albedo[1] = 0.25f;                  /* material 1 untextured, another colour */
    int bad = 0;
    for (int isa = RT_ISA_BASELINE; isa <= RT_ISA_AVX2; isa++) {
        if (!rt_isa_available((rt_isa)isa)) continue;
        for (int aov = SH_AOV_COLOR; aov <= SH_AOV_ALBEDO; aov += SH_AOV_ALBEDO - SH_AOV_COLOR) {
            sh_raster_env e;
            sh_raster_env_init(&e, &s.scene, &s.geo, 256, 256, (sh_aov)aov);
            e.isa = (rt_isa)isa;
            for (int trial = 0; trial < 200; trial++) {
                const int kind = trial % 4, ntris = 2 + trial % 7;
                sh_ps_tri t[8];
                for (int k = 0; k < ntris; k++) {
                    random_tri(&t[k], 2);
                    t[k].material = kind == 3 ? t[k].material : 0;
                }
                if (kind == 1 || kind == 2) t[ntris - 1].material = 1;
                const int used = kind == 2 ? ntris - 1 : ntris;   /* kind 2: the last unused */
                const int n = 1 + (trial * 13) % SH_PS_MAX;
                float b1[SH_PS_MAX], b2[SH_PS_MAX];
                uint8_t tri[SH_PS_MAX];
                uint16_t x[SH_PS_MAX], y[SH_PS_MAX];
                for (int i = 0; i < n; i++) {
                    x[i] = (uint16_t)rnd(0, 255.99f);
                    y[i] = (uint16_t)rnd(0, 255.99f);
                    tri[i] = (uint8_t)(i < used ? i : rnd(0, (float)used - 0.01f));
                    b1[i] = rnd(0, 1);
                    b2[i] = rnd(0, 1 - b1[i]);
                }
                uint32_t want[SH_PS_MAX], got[SH_PS_MAX];
                const sh_ps_frags f = {n, t, tri, b1, b2, x, y, NULL};
                sh_ps_packet(&e, &f, want);
                sh_ps_packet_kept(&e, &f, &(sh_ps_kept){NULL, ntris}, got);
                for (int i = 0; i < n; i++)
                    if (got[i] != want[i] && bad++ < 5)
                        fprintf(stderr, "  %s trial %d fragment %d: %08x, expected %08x\n",
                                rt_isa_name((rt_isa)isa), trial, i, got[i], want[i]);
            }
        }
    }
    CHECK_MSG(bad == 0, "%d fragments differ with the triangle count given", bad);
}

/* Texture coordinates NaN, infinite or 1e30 at some corners: every fragment of a
 * textured material still gets a colour, through the quad's level of detail, in every
 * AOV (the sampler reads a defined texel; no crash, no out-of-range read). */
static void test_ps_bad_uvs(void)
{
    unsigned char texels[4 * 4 * 4];
    for (size_t i = 0; i < sizeof texels; i++) texels[i] = (unsigned char)(i * 29 + 3);
    sc_texture tex = {.name = "t", .nlevels = 1, .levels[0] = {4, 4, texels}};
    sc_material m = sh_default_material;
    m.albedo_map.texture = 0;
    sc_scene scene = {0};
    scene.materials = &m;
    scene.nmaterials = 1;
    scene.textures = &tex;
    scene.ntextures = 1;
    scene.camera = (sc_camera){{0, 0, 5}, {0, 0, 0}, {0, 1, 0}, 45};
    scene.lights = (sc_light[]){{{3, 4, 5}, {0.8f, 0.8f, 0.7f}}};
    scene.nlights = 1;
    sc_geometry geo = {0};
    for (int i = 0; i < 3; i++) { geo.bbox_min[i] = -2; geo.bbox_max[i] = 2; }
    const float bad[] = {NAN, INFINITY, -INFINITY, 1e30f, -1e30f, 0.5f};
    int nbad = sizeof bad / sizeof *bad, wrong = 0;
    for (int aov = 0; aov < SH_AOV_COUNT; aov++) {
        sh_raster_env e;
        sh_raster_env_init(&e, &scene, &geo, 64, 64, (sh_aov)aov);
        for (int j = 0; j < nbad * nbad; j++) {
            sh_ps_tri t = {0};
            const float corner[3][3] = {{-1, -1, 0}, {1, -1, 0}, {-1, 1, 0}};
            for (int k = 0; k < 3; k++) {
                memcpy(t.attr[k], corner[k], sizeof corner[k]);
                t.attr[k][5] = 1;
                t.attr[k][6] = k == 1 ? bad[j % nbad] : 0.25f * k;
                t.attr[k][7] = k == 2 ? bad[j / nbad] : 0.5f;
            }
            uint16_t x[4] = {30, 31, 30, 31}, y[4] = {30, 30, 31, 31};
            float b1[4] = {0.2f, 0.3f, 0.2f, 0.3f}, b2[4] = {0.3f, 0.3f, 0.4f, 0.4f};
            uint8_t tri[4] = {0};
            uint32_t out[4] = {0};
            sh_ps_packet(&e, &(sh_ps_frags){4, &t, tri, b1, b2, x, y, NULL}, out);
            for (int i = 0; i < 4; i++) wrong += (out[i] >> 24) != 255;
        }
    }
    CHECK_MSG(wrong == 0, "%d fragments without a colour", wrong);
}

int main(void)
{
    RUN(test_srgb_table_exact);
    RUN(test_srgb_encode_n);
    RUN(test_vertex_buffer_interleaves);
    RUN(test_position_buffer_renumbers);
    RUN(test_vs_kernel_matches_scalar);
    RUN(test_ps_kernel_matches_scalar);
    RUN(test_quad_derivatives);
    RUN(test_ps_quad_lod_matches_scalar);
    RUN(test_ps_kept_quads_match);
    RUN(test_ps_ntris_match);
    RUN(test_ps_bad_uvs);
    return check_finish();
}
