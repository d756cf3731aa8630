/* glTF 2.0 metallic-roughness shading (shaders/pbr.h) against hand-computed values: the
 * BRDF at normal incidence (dielectric and metal, two roughnesses), the lobe of a smooth
 * surface against a rough one, no diffuse for metals, reciprocity f(l, v) = f(v, l) bit
 * for bit, energy (the integral of f cos over the hemisphere is at most 1 for a white base
 * colour, integrated numerically), the light and ambient terms (occlusion on the ambient
 * only), the tangent of known triangles, the normal map in that frame, and the gather of
 * factors x textures with a level of detail per texture through its transform, the
 * interpolation and footprint helpers, the local colour and the mirror weight. */
#include "shaders/pbr.h"
#include "shaders/texture_sample.h"
#include "tests/check.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define PI 3.14159265358979
#define NEAR(a, b, tol) (fabs((double)(a) - (double)(b)) <= (tol))

static sh_surface surface(float r, float g, float b, float metallic, float roughness)
{
    sh_surface s = {.base = {r, g, b}, .alpha = 1, .metallic = metallic, .roughness = roughness,
                    .occlusion = 1, .n = {0, 0, 1}};
    return s;
}

static void dir(double theta_deg, double phi_deg, float d[3])
{
    double t = theta_deg * PI / 180, p = phi_deg * PI / 180;
    d[0] = (float)(sin(t) * cos(p));
    d[1] = (float)(sin(t) * sin(p));
    d[2] = (float)cos(t);
}

/* At normal incidence (l = v = n): h = n, F = F0, D = 1 / (pi a^2), V = 1/4, so
 * f = (1 - F0) c_diff / pi + F0 / (4 pi a^2) with a = roughness^2. */
static void test_normal_incidence(void)
{
    const float n[3] = {0, 0, 1};
    float f[3];
    sh_surface s = surface(0.5f, 0.5f, 0.5f, 0, 1);
    sh_pbr_brdf(&s, n, n, f);
    CHECK_MSG(NEAR(f[0], 0.49 / PI, 1e-6), "dielectric, roughness 1: %g, want %g", f[0], 0.49 / PI);
    s.roughness = 0.5f;                           /* a^2 = 1/16: F0 / (4 pi a^2) = 0.16 / pi */
    sh_pbr_brdf(&s, n, n, f);
    CHECK_MSG(NEAR(f[1], 0.64 / PI, 1e-6), "dielectric, roughness 0.5: %g, want %g", f[1], 0.64 / PI);
    s = surface(1.0f, 0.5f, 0.25f, 1, 1);         /* metal: F0 = base, no diffuse */
    sh_pbr_brdf(&s, n, n, f);
    for (int c = 0; c < 3; c++)
        CHECK_MSG(NEAR(f[c], s.base[c] / (4 * PI), 1e-6), "metal channel %d: %g", c, f[c]);
    s = surface(0.5f, 0.5f, 0.5f, 0, 0);          /* roughness 0 is clamped, not a NaN */
    sh_pbr_brdf(&s, n, n, f);
    double a = (double)SH_PBR_MIN_ROUGHNESS * SH_PBR_MIN_ROUGHNESS;
    CHECK_MSG(NEAR(f[0] / (0.48 / PI + 0.01 / (PI * a * a)), 1, 1e-4), "roughness 0: %g", f[0]);
}

/* Roughness 0.05 concentrates the specular in a narrow lobe around the mirror direction;
 * roughness 1 spreads it nearly evenly. */
static void test_lobes(void)
{
    float v[3], mirror[3], off[3], f_peak[3], f_off[3];
    dir(30, 0, v);
    dir(30, 180, mirror);
    dir(40, 180, off);                            /* 10 degrees off the mirror direction */
    sh_surface smooth = surface(0.5f, 0.5f, 0.5f, 0, 0.05f);
    sh_pbr_brdf(&smooth, mirror, v, f_peak);
    sh_pbr_brdf(&smooth, off, v, f_off);
    /* peak: h = n: D = 1 / (pi a^2), F = F0 + 0.96 (1 - cos 30)^5, V from the formula */
    double a2 = pow(0.05, 4), c = cos(PI / 6);
    double vis = 0.5 / (2 * c * sqrt(c * c * (1 - a2) + a2));
    double F = 0.04 + 0.96 * pow(1 - c, 5);
    double want = (1 - F) * 0.5 / PI + F * vis / (PI * a2);
    CHECK_MSG(NEAR(f_peak[0] / want, 1, 1e-4), "smooth peak %g, want %g", f_peak[0], want);
    CHECK_MSG(f_off[0] < 0.2, "smooth, 10 degrees off: %g (diffuse only, about 0.15)", f_off[0]);
    CHECK_MSG(f_peak[0] > 1000 * f_off[0], "smooth lobe %g vs %g", f_peak[0], f_off[0]);
    sh_surface rough = surface(0.5f, 0.5f, 0.5f, 0, 1);
    sh_pbr_brdf(&rough, mirror, v, f_peak);
    sh_pbr_brdf(&rough, off, v, f_off);
    CHECK_MSG(NEAR(f_off[0] / f_peak[0], 1, 0.1), "rough lobe %g vs %g", f_peak[0], f_off[0]);
}

/* Metallic 1: no diffuse term, so away from a smooth lobe nothing is reflected; its
 * ambient is F0 = base. */
static void test_metal_no_diffuse(void)
{
    float v[3], l[3], f[3], amb[3];
    dir(0, 0, v);
    dir(60, 90, l);
    sh_surface metal = surface(0.9f, 0.6f, 0.3f, 1, 0.05f);
    sh_pbr_brdf(&metal, l, v, f);
    for (int c = 0; c < 3; c++) CHECK_MSG(f[c] < 1e-4f, "metal off-lobe channel %d: %g", c, f[c]);
    sh_surface dielectric = surface(0.9f, 0.6f, 0.3f, 0, 0.05f);
    sh_pbr_brdf(&dielectric, l, v, f);
    CHECK(f[0] > 0.2f);
    sh_pbr_ambient(&metal, 0.1f, amb);
    for (int c = 0; c < 3; c++) CHECK(NEAR(amb[c], 0.1 * metal.base[c], 1e-7));
}

/* f(l, v) = f(v, l), bit for bit (the code evaluates the symmetric formula symmetrically). */
static void test_reciprocity(void)
{
    const float rough[] = {0.05f, 0.3f, 0.7f, 1.0f}, metal[] = {0, 0.5f, 1};
    int bad = 0;
    for (int r = 0; r < 4; r++)
        for (int m = 0; m < 3; m++)
            for (int i = 0; i < 200; i++) {
                sh_surface s = surface(0.8f, 0.4f, 0.1f, metal[m], rough[r]);
                float a[3], b[3], fab[3], fba[3];
                dir(i * 0.43 + 0.1, i * 37.0, a);
                dir(89.0 - i * 0.41, i * 101.0 + 13, b);
                sh_pbr_brdf(&s, a, b, fab);
                sh_pbr_brdf(&s, b, a, fba);
                bad += memcmp(fab, fba, sizeof fab) != 0;
            }
    CHECK_MSG(bad == 0, "%d pairs differ", bad);
}

/* The integral of f cos over the hemisphere of l for view v, by multiple importance
 * sampling over stratified grids: cosine-weighted and the GGX distribution of normals
 * (balance heuristic, so the sharpest lobe is integrated as well as the diffuse). */
static double ggx_d(double nh, double a2)
{
    double k = nh * nh * (a2 - 1) + 1;
    return a2 / (PI * k * k);
}

static double pdf_ggx(const double l[3], const double v[3], double a2)
{
    double h[3] = {l[0] + v[0], l[1] + v[1], l[2] + v[2]};
    double len = sqrt(h[0] * h[0] + h[1] * h[1] + h[2] * h[2]);
    if (len == 0) return 0;
    double nh = h[2] / len, vh = (v[0] * h[0] + v[1] * h[1] + v[2] * h[2]) / len;
    return vh > 0 ? ggx_d(nh, a2) * nh / (4 * vh) : 0;
}

static double sample_weight(const sh_surface *s, const double l[3], const double v[3], double a2)
{
    if (l[2] <= 0) return 0;
    float lf[3] = {(float)l[0], (float)l[1], (float)l[2]}, vf[3] = {(float)v[0], (float)v[1], (float)v[2]};
    float f[3];
    sh_pbr_brdf(s, lf, vf, f);
    double pdf = l[2] / PI + pdf_ggx(l, v, a2);
    return pdf > 0 ? f[0] * l[2] / pdf : 0;
}

static double albedo_integral(const sh_surface *s, double view_deg)
{
    const int N = 300;
    double r = s->roughness > SH_PBR_MIN_ROUGHNESS ? s->roughness : SH_PBR_MIN_ROUGHNESS;
    double a2 = r * r * r * r, t = view_deg * PI / 180, v[3] = {sin(t), 0, cos(t)}, sum = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double x = (i + 0.5) / N, y = (j + 0.5) / N, phi = 2 * PI * y;
            /* cosine-weighted */
            double st = sqrt(x), l[3] = {st * cos(phi), st * sin(phi), sqrt(1 - x)};
            sum += sample_weight(s, l, v, a2);
            /* GGX: a half vector, reflected */
            double c2 = (1 - x) / (1 + (a2 - 1) * x), ch = sqrt(c2), sh = sqrt(1 - c2);
            double h[3] = {sh * cos(phi), sh * sin(phi), ch};
            double vh = v[0] * h[0] + v[1] * h[1] + v[2] * h[2];
            double lr[3] = {2 * vh * h[0] - v[0], 2 * vh * h[1] - v[1], 2 * vh * h[2] - v[2]};
            sum += sample_weight(s, lr, v, a2);
        }
    return sum / ((double)N * N);
}

/* Energy: for a white metal the integral is at most 1 at every view and roughness (less
 * where single-scattering GGX loses energy: 1 - ln 2 at roughness 1 seen head on, which
 * checks the integrator). For a white dielectric the appendix B mix weights the diffuse
 * term by 1 - F(v.h), which at grazing views leaves more than 1 (1.35 at 80 degrees,
 * roughness 0.05, as the specification's formula gives): bounded here up to 30 degrees.
 * EPS: the integrator's error (about 4e-4 at worst on these grids). */
#define EPS 2e-3
static void test_energy(void)
{
    const float rough[] = {0.05f, 0.3f, 0.6f, 1.0f};
    const double views[] = {0, 30, 60, 80};
    for (int r = 0; r < 4; r++)
        for (int k = 0; k < 4; k++) {
            sh_surface metal = surface(1, 1, 1, 1, rough[r]);
            double e = albedo_integral(&metal, views[k]);
            CHECK_MSG(e <= 1 + EPS && e > 0.25, "metal, roughness %g, view %g: %g", rough[r], views[k], e);
            if (views[k] > 30) continue;
            sh_surface dielectric = surface(1, 1, 1, 0, rough[r]);
            e = albedo_integral(&dielectric, views[k]);
            CHECK_MSG(e <= 1 + EPS && e > 0.9, "dielectric, roughness %g, view %g: %g", rough[r], views[k], e);
        }
    sh_surface s = surface(1, 1, 1, 1, 1);
    double e = albedo_integral(&s, 0);
    CHECK_MSG(NEAR(e, 1 - log(2.0), 1e-3), "white metal, roughness 1, head on: %g, want 1 - ln 2", e);
    s.roughness = 0.05f;                          /* a smooth metal reflects nearly all */
    e = albedo_integral(&s, 0);
    CHECK_MSG(NEAR(e, 1, 2e-3), "smooth white metal: %g", e);
}

/* A point light: pi f n.l colour; behind the surface, nothing (false). */
static void test_light(void)
{
    sh_surface s = surface(0.5f, 0.5f, 0.5f, 0, 1);
    const float p[3] = {0, 0, 0}, view[3] = {0, 0, 1};
    sc_light l = {.position = {0, 0, 10}, .color = {1, 0.5f, 2}};
    float out[3] = {0, 0, 0};
    CHECK(sh_pbr_light(&s, p, view, &l, out));
    for (int c = 0; c < 3; c++)                   /* pi * 0.49 / pi * colour */
        CHECK_MSG(NEAR(out[c], 0.49 * l.color[c], 1e-6), "channel %d: %g", c, out[c]);
    sc_light behind = {.position = {0, 0, -10}, .color = {1, 1, 1}};
    float untouched[3] = {7, 7, 7};
    CHECK(!sh_pbr_light(&s, p, view, &behind, untouched));
    CHECK(untouched[0] == 7 && untouched[1] == 7 && untouched[2] == 7);
}

/* Occlusion scales the ambient term and nothing else. */
static void test_occlusion_ambient_only(void)
{
    sh_surface s = surface(0.5f, 0.25f, 1, 0, 0.5f);
    const float p[3] = {0, 0, 0}, view[3] = {0, 0.6f, 0.8f};
    sc_light l = {.position = {3, 1, 5}, .color = {1, 1, 1}};
    float a1[3], a0[3], l1[3], l0[3];
    sh_pbr_ambient(&s, 0.1f, a1);
    CHECK(sh_pbr_light(&s, p, view, &l, l1));
    s.occlusion = 0.25f;
    sh_pbr_ambient(&s, 0.1f, a0);
    CHECK(sh_pbr_light(&s, p, view, &l, l0));
    CHECK(memcmp(l0, l1, sizeof l0) == 0);
    for (int c = 0; c < 3; c++) CHECK(NEAR(a0[c], 0.25 * a1[c], 1e-7));
    /* a dielectric's ambient: A (c (1 - 0.04) + 0.04) */
    CHECK(NEAR(a1[0], 0.1 * (0.5 * 0.96 + 0.04), 1e-7));
}

static void test_tangent(void)
{
    const float p[3][3] = {{0, 0, 0}, {2, 0, 0}, {0, 3, 0}};
    const float uv[3][2] = {{0, 0}, {1, 0}, {0, 1}};
    float t[3], b[3];
    CHECK(sh_triangle_tangent(p, uv, t, b));
    CHECK(t[0] == 2 && t[1] == 0 && t[2] == 0);
    CHECK(b[0] == 0 && b[1] == 3 && b[2] == 0);
    /* offset positions and uvs, u along x, v along z */
    const float q[3][3] = {{1, 1, 1}, {1, 1, 5}, {3, 1, 1}};
    const float quv[3][2] = {{0.5f, 0.5f}, {0.5f, 1.5f}, {1.5f, 0.5f}};
    CHECK(sh_triangle_tangent(q, quv, t, b));
    CHECK(t[0] == 2 && t[1] == 0 && t[2] == 0);
    CHECK(b[0] == 0 && b[1] == 0 && b[2] == 4);
    const float flat[3][2] = {{0, 0}, {1, 1}, {2, 2}};           /* degenerate mapping */
    CHECK(!sh_triangle_tangent(p, flat, t, b));
    CHECK(t[0] == 0 && b[1] == 0);
    const float bad[3][2] = {{0, 0}, {NAN, 0}, {0, 1}};
    CHECK(!sh_triangle_tangent(p, bad, t, b));
}

/* 1x1 textures: every filter reads exactly byte / 255. */
static unsigned char texels[5][4] = {
    {128, 128, 255, 255},                         /* 0: flat normal */
    {255, 128, 128, 255},                         /* 1: normal along +T */
    {255, 128, 0, 64},                            /* 2: base colour */
    {0, 102, 255, 255},                           /* 3: metallic-roughness: G 0.4, B 1 */
    {0, 0, 0, 255},                               /* 4: occlusion R 0 / emissive black */
};

static void scene_with_textures(sc_scene *s, sc_texture t[5])
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < 5; i++) {
        memset(&t[i], 0, sizeof t[i]);
        t[i].nlevels = 1;
        t[i].levels[0] = (sc_mip_level){1, 1, texels[i]};
    }
    s->textures = t;
    s->ntextures = 5;
}

static sc_material pbr_material(void)
{
    sc_material m;
    memset(&m, 0, sizeof m);
    m.albedo[0] = 0.5f, m.albedo[1] = 1, m.albedo[2] = 1;
    m.alpha = 0.5f;
    m.model = SC_SHADING_METALLIC_ROUGHNESS;
    m.metallic = 0.75f, m.roughness = 1;
    m.emissive[0] = 0.25f;
    m.albedo_map = m.metallic_roughness_map = m.emissive_map = sc_texture_ref_none();
    m.normal_map = m.occlusion_map = sc_texture_ref_none();
    m.normal_scale = 1, m.occlusion_strength = 1;
    return m;
}

static sh_surface_in looked_at(void)
{
    sh_surface_in in = {.uv = {0.3f, 0.7f}, .n = {0, 0, 1}, .facing = 1, .tangent = {2, 0, 0.5f},
                        .bitangent = {0, 3, 0}, .lod = {.kind = SH_LOD_BASE}};
    return in;
}

static void test_gather_factors_and_maps(void)
{
    sc_scene s;
    sc_texture t[5];
    scene_with_textures(&s, t);
    sc_material m = pbr_material();
    sh_surface_in in = looked_at();
    sh_surface o;
    sh_surface_gather(&s, &m, &in, &o);           /* factors only */
    CHECK(o.base[0] == 0.5f && o.base[1] == 1 && o.alpha == 0.5f && o.metallic == 0.75f);
    CHECK(o.roughness == 1 && o.emissive[0] == 0.25f && o.occlusion == 1);
    CHECK(o.n[0] == 0 && o.n[1] == 0 && o.n[2] == 1);
    m.albedo_map.texture = 2;
    m.metallic_roughness_map.texture = 3;
    m.emissive_map.texture = 4;
    m.occlusion_map.texture = 4;
    m.occlusion_strength = 0.5f;
    sh_surface_gather(&s, &m, &in, &o);
    CHECK(o.base[0] == 0.5f && o.base[1] == 1.0f * (128 / 255.0f) && o.base[2] == 0);
    CHECK(o.alpha == 0.5f * (64 / 255.0f));
    CHECK(o.metallic == 0.75f && o.roughness == 102 / 255.0f);
    CHECK(o.emissive[0] == 0 && o.occlusion == 0.5f);
    m.albedo_map.texture = 99;                    /* out of range: no texture */
    sh_surface_gather(&s, &m, &in, &o);
    CHECK(o.base[0] == 0.5f && o.alpha == 0.5f);
}

static void test_normal_map(void)
{
    sc_scene s;
    sc_texture t[5];
    scene_with_textures(&s, t);
    sc_material m = pbr_material();
    sh_surface_in in = looked_at();
    sh_surface o;
    m.normal_map.texture = 0;                     /* (0.5, 0.5, 1): the normal stays */
    sh_surface_gather(&s, &m, &in, &o);
    CHECK_MSG(o.n[2] > 0.99997f, "flat normal map moved the normal to %g %g %g", o.n[0], o.n[1], o.n[2]);
    m.normal_map.texture = 1;                     /* (1, 0.5, 0.5): along the tangent, +x */
    sh_surface_gather(&s, &m, &in, &o);
    CHECK_MSG(o.n[0] > 0.9999f, "normal %g %g %g, want about +x", o.n[0], o.n[1], o.n[2]);
    CHECK(NEAR(o.n[0] * o.n[0] + o.n[1] * o.n[1] + o.n[2] * o.n[2], 1, 1e-6));
    in.facing = -1;                               /* a back face: the whole frame flips */
    sh_surface back;
    sh_surface_gather(&s, &m, &in, &back);
    for (int i = 0; i < 3; i++) CHECK(back.n[i] == -o.n[i]);
    in.facing = 1;
    m.normal_scale = 0;                           /* xy scaled to 0: z alone */
    sh_surface_gather(&s, &m, &in, &o);
    CHECK(NEAR(o.n[2], 1, 1e-6));
    m.normal_scale = 1;                           /* no tangent frame: the normal map is ignored */
    memset(in.tangent, 0, sizeof in.tangent);
    sh_surface_gather(&s, &m, &in, &o);
    CHECK(o.n[0] == 0 && o.n[1] == 0 && o.n[2] == 1);
    /* mirrored uvs (bitangent against cross(n, T)): y of the texel goes the other way */
    unsigned char up[4] = {128, 255, 128, 255};
    t[1].levels[0].rgba = up;
    in = looked_at();
    sh_surface_gather(&s, &m, &in, &o);
    CHECK_MSG(o.n[1] > 0.999f, "normal %g %g %g, want about +y", o.n[0], o.n[1], o.n[2]);
    in.bitangent[1] = -3;
    sh_surface_gather(&s, &m, &in, &o);
    CHECK_MSG(o.n[1] < -0.999f, "mirrored: normal %g %g %g, want about -y", o.n[0], o.n[1], o.n[2]);
    t[1].levels[0].rgba = texels[1];
}

/* The level of detail per texture: with an identity transform the bits of
 * sh_texture_lod / sh_texture_cone_lod; a KHR scale of 2 is one level up. */
static void test_lod(void)
{
    static unsigned char big[64 * 32 * 4];
    sc_texture tex = {.nlevels = 1, .levels[0] = {64, 32, big}};
    sc_texture_ref ref = sc_texture_ref_none();
    ref.texture = 0;
    sh_lod q = {.kind = SH_LOD_QUAD, .dudx = 0.01f, .dvdx = 0.002f, .dudy = -0.003f, .dvdy = 0.02f};
    float want = sh_texture_lod(&tex, q.dudx, q.dvdx, q.dudy, q.dvdy);
    CHECK(sh_surface_lod(&q, &ref, &tex) == want);
    ref.scale[0] = ref.scale[1] = 2;
    CHECK(NEAR(sh_surface_lod(&q, &ref, &tex), want + 1, 1e-5));
    ref.rotation = 0.7f;                          /* a rotation keeps the lengths of square steps */
    sh_lod iso = {.kind = SH_LOD_QUAD, .dudx = 0.01f, .dudy = 0, .dvdx = 0, .dvdy = 0.01f};
    sc_texture sq = {.nlevels = 1, .levels[0] = {32, 32, big}};
    sc_texture_ref plain = sc_texture_ref_none();
    CHECK(NEAR(sh_surface_lod(&iso, &ref, &sq), sh_surface_lod(&iso, &plain, &sq) + 1, 1e-5));
    sh_lod cone = {.kind = SH_LOD_CONE, .uv_area = 0.5f, .world_area = 2, .cone_width = 0.01f,
                   .cos_theta = 0.8f};
    ref = sc_texture_ref_none();
    CHECK(sh_surface_lod(&cone, &ref, &tex) == sh_texture_cone_lod(&tex, 0.5f, 2, 0.01f, 0.8f));
    ref.scale[0] = ref.scale[1] = 2;
    CHECK(NEAR(sh_surface_lod(&cone, &ref, &tex), sh_texture_cone_lod(&tex, 0.5f, 2, 0.01f, 0.8f) + 1, 1e-5));
    sh_lod base = {.kind = SH_LOD_BASE};
    CHECK(sh_surface_lod(&base, &ref, &tex) == 0);
}

/* Interpolation and the triangle's frame from its vertices; a hit's cone footprint. */
static void test_surface_in(void)
{
    const float p[3][3] = {{0, 0, 0}, {2, 0, 0}, {0, 3, 0}};
    const float nrm[3][3] = {{0, 0, 1}, {0, 0, 1}, {0, 1, 0}};
    const float uv[3][2] = {{0, 0}, {1, 0}, {0, 1}};
    sh_surface_in in;
    sh_surface_in_of_vertices(p, nrm, uv, 0.25f, 0.5f, &in);
    CHECK(in.uv[0] == 0.25f && in.uv[1] == 0.5f);
    CHECK(NEAR(in.n[1], 0.5 / sqrt(0.5), 1e-6) && NEAR(in.n[2], 0.5 / sqrt(0.5), 1e-6));
    CHECK(in.tangent[0] == 2 && in.bitangent[1] == 3);
    float positions[9] = {0, 0, 0, 2, 0, 0, 0, 3, 0}, normals[9] = {0, 0, 1, 0, 0, 1, 0, 0, 1};
    float texcoords[6] = {0, 0, 0.5f, 0, 0, 0.25f};
    uint32_t indices[3] = {0, 1, 2};
    sc_geometry g = {.nvertices = 3, .ntriangles = 1, .positions = positions, .normals = normals,
                     .texcoords = texcoords, .indices = indices};
    const float d[3] = {0, 0.6f, -0.8f};
    sh_surface_in_of_hit(&g, 0, 0.5f, 0.25f, d, 0.125f, &in);
    CHECK(in.lod.kind == SH_LOD_CONE && in.lod.cone_width == 0.125f);
    CHECK(in.lod.world_area == 6 && in.lod.uv_area == 0.125f);   /* twice each area */
    CHECK(NEAR(in.lod.cos_theta, -0.8, 1e-6));
    CHECK(in.uv[0] == 0.25f && in.uv[1] == 0.0625f && in.n[2] == 1);
    CHECK(in.uv1[0] == in.uv[0] && in.tangent1[0] == in.tangent[0]);   /* no set 1: set 0's */
    float set1[6] = {1, 0, 0.5f, 0, 1, 0.25f};    /* set 0 mirrored in u about 0.5 */
    g.texcoords1 = set1;
    sh_surface_in_of_hit(&g, 0, 0.5f, 0.25f, d, 0.125f, &in);
    CHECK(in.uv1[0] == 0.75f && in.uv1[1] == 0.0625f && in.lod1.uv_area == -0.125f);
    CHECK(in.tangent1[0] == -in.tangent[0] && in.bitangent1[1] == in.bitangent[1]);
    g.texcoords1 = NULL;
    g.texcoords = NULL;                           /* no texture coordinates: zeros, no frame */
    sh_surface_in_of_hit(&g, 0, 0.5f, 0.25f, d, 0.125f, &in);
    CHECK(in.uv[0] == 0 && in.tangent[0] == 0 && in.lod.uv_area == 0);
}

/* ambient + emissive (unlit) + lights; the mirror weight of smooth and rough surfaces. */
static void test_shade_local_and_reflectance(void)
{
    sh_surface s = surface(0.5f, 0.5f, 0.5f, 0, 1);
    s.emissive[0] = 0.25f;
    const float p[3] = {0, 0, 0}, view[3] = {0, 0, 1};
    sc_light l[2] = {{.position = {0, 0, 10}, .color = {1, 1, 1}}, {.position = {0, 0, -10}, .color = {1, 1, 1}}};
    float rgb[3];
    sh_pbr_shade_local(&s, p, view, l, 0, 0.0f, rgb);
    CHECK(rgb[0] == 0.25f && rgb[1] == 0 && rgb[2] == 0);
    sh_pbr_shade_local(&s, p, view, l, 2, 0.1f, rgb);
    CHECK_MSG(NEAR(rgb[1], 0.1 * (0.5 * 0.96 + 0.04) + 0.49, 1e-6), "%g", rgb[1]);
    CHECK(NEAR(rgb[0], rgb[1] + 0.25, 1e-6));
    float w[3];
    sh_surface metal = surface(0.9f, 0.6f, 0.3f, 1, 0);
    sh_pbr_reflectance(&metal, view, w);
    CHECK(w[0] == 0.9f && w[1] == 0.6f && w[2] == 0.3f);
    metal.roughness = 1;
    sh_pbr_reflectance(&metal, view, w);
    CHECK(w[0] == 0 && w[1] == 0 && w[2] == 0);
    sh_surface glass = surface(1, 1, 1, 0, 0);
    sh_pbr_reflectance(&glass, view, w);
    CHECK(NEAR(w[0], 0.04, 1e-7));
    float grazing[3];
    dir(89, 0, grazing);
    sh_pbr_reflectance(&glass, grazing, w);
    CHECK(w[0] > 0.9f);
}

int main(void)
{
    RUN(test_normal_incidence);
    RUN(test_lobes);
    RUN(test_metal_no_diffuse);
    RUN(test_reciprocity);
    RUN(test_energy);
    RUN(test_light);
    RUN(test_occlusion_ambient_only);
    RUN(test_tangent);
    RUN(test_gather_factors_and_maps);
    RUN(test_normal_map);
    RUN(test_lod);
    RUN(test_surface_in);
    RUN(test_shade_local_and_reflectance);
    return check_finish();
}
