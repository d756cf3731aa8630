/* pbr.c — glTF 2.0 metallic-roughness shading: the surface gather and the appendix B
 * BRDF (see the header for the formulas, conventions and sources). Compiled for the
 * baseline ISA only: both renderers call these same functions. */
#include "shaders/pbr.h"

#include "shaders/blinn_phong.h"
#include "shaders/texture_sample.h"
#include "shaders/uv_sets.h"

#include <math.h>

#define PBR_PI 3.14159265358979f

static float clamp01(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }   /* NaN -> 0 */

static void cross3(const float a[3], const float b[3], float c[3])
{
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

static bool finite3(const float v[3]) { return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]); }

/* ---- level of detail ------------------------------------------------------------------ */

static bool transform_is_identity(const sc_texture_ref *r)
{
    return r->rotation == 0.0f && r->scale[0] == 1.0f && r->scale[1] == 1.0f;
}

float sh_surface_lod(const sh_lod *q, const sc_texture_ref *ref, const sc_texture *t)
{
    if (q->kind == SH_LOD_CONE) {
        float area = q->uv_area;
        if (!transform_is_identity(ref)) area *= fabsf(ref->scale[0] * ref->scale[1]);
        return sh_texture_cone_lod(t, area, q->world_area, q->cone_width, q->cos_theta);
    }
    if (q->kind != SH_LOD_QUAD) return 0.0f;
    if (transform_is_identity(ref)) return sh_texture_lod(t, q->dudx, q->dvdx, q->dudy, q->dvdy);
    /* The linear part of sh_texture_transform applied to each derivative vector. */
    float c = cosf(ref->rotation), s = sinf(ref->rotation);
    float sx = ref->scale[0], sy = ref->scale[1];
    float dudx = c * sx * q->dudx + s * sy * q->dvdx, dvdx = -s * sx * q->dudx + c * sy * q->dvdx;
    float dudy = c * sx * q->dudy + s * sy * q->dvdy, dvdy = -s * sx * q->dudy + c * sy * q->dvdy;
    return sh_texture_lod(t, dudx, dvdx, dudy, dvdy);
}

/* ---- the surface gather --------------------------------------------------------------- */

bool sh_triangle_tangent(const float p[3][3], const float uv[3][2], float t[3], float b[3])
{
    float du1 = uv[1][0] - uv[0][0], dv1 = uv[1][1] - uv[0][1];
    float du2 = uv[2][0] - uv[0][0], dv2 = uv[2][1] - uv[0][1];
    float det = du1 * dv2 - du2 * dv1;
    for (int i = 0; i < 3; i++) t[i] = b[i] = 0.0f;
    if (!(fabsf(det) > 0.0f) || !isfinite(det)) return false;
    float r = 1.0f / det, tt[3], bb[3];
    for (int i = 0; i < 3; i++) {
        float e1 = p[1][i] - p[0][i], e2 = p[2][i] - p[0][i];
        tt[i] = (e1 * dv2 - e2 * dv1) * r;
        bb[i] = (e2 * du1 - e1 * du2) * r;
    }
    if (!finite3(tt) || !finite3(bb)) return false;
    for (int i = 0; i < 3; i++) t[i] = tt[i], b[i] = bb[i];
    return true;
}

void sh_surface_in_of_vertices(const float p[3][3], const float nrm[3][3], const float uv[3][2],
                               float b1, float b2, sh_surface_in *in)
{
    const float w0 = 1.0f - b1 - b2;
    for (int i = 0; i < 3; i++) in->n[i] = w0 * nrm[0][i] + b1 * nrm[1][i] + b2 * nrm[2][i];
    sh_normalize3(in->n);
    for (int i = 0; i < 2; i++) in->uv[i] = w0 * uv[0][i] + b1 * uv[1][i] + b2 * uv[2][i];
    sh_triangle_tangent(p, uv, in->tangent, in->bitangent);
    in->uv1[0] = in->uv[0], in->uv1[1] = in->uv[1];
    for (int i = 0; i < 3; i++) in->tangent1[i] = in->tangent[i], in->bitangent1[i] = in->bitangent[i];
}

void sh_surface_in_set1(const float p[3][3], const float uv1[3][2], float b1, float b2, const sh_lod *lod1_q,
                        sh_surface_in *in)
{
    const float w0 = 1.0f - b1 - b2;
    for (int i = 0; i < 2; i++) in->uv1[i] = w0 * uv1[0][i] + b1 * uv1[1][i] + b2 * uv1[2][i];
    in->lod1 = *lod1_q;
    sh_triangle_tangent(p, uv1, in->tangent1, in->bitangent1);
}

/* Twice triangle uv's signed area: sh_lod's uv_area. */
static float uv_area2(const float uv[3][2])
{
    return (uv[1][0] - uv[0][0]) * (uv[2][1] - uv[0][1]) - (uv[2][0] - uv[0][0]) * (uv[1][1] - uv[0][1]);
}

void sh_surface_in_of_hit(const sc_geometry *g, uint32_t prim, float b1, float b2,
                          const float dir[3], float cone_width, sh_surface_in *in)
{
    const uint32_t *idx = g->indices + 3 * (size_t)prim;
    float p[3][3], nrm[3][3], uv[3][2] = {{0, 0}, {0, 0}, {0, 0}};
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 3; i++) {
            p[k][i] = g->positions[3 * (size_t)idx[k] + i];
            nrm[k][i] = g->normals[3 * (size_t)idx[k] + i];
            if (i < 2 && g->texcoords) uv[k][i] = g->texcoords[2 * (size_t)idx[k] + i];
        }
    sh_surface_in_of_vertices(p, nrm, uv, b1, b2, in);
    /* Ray Tracing Gems ch. 20, eq. 34: twice each area (their ratio is what counts). */
    float e1[3], e2[3], gn[3];
    for (int i = 0; i < 3; i++) e1[i] = p[1][i] - p[0][i], e2[i] = p[2][i] - p[0][i];
    cross3(e1, e2, gn);
    float world2 = sqrtf(sh_dot3(gn, gn)), dlen = sqrtf(sh_dot3(dir, dir));
    in->lod = (sh_lod){.kind = SH_LOD_CONE, .world_area = world2, .cone_width = cone_width,
                       .uv_area = uv_area2(uv), .cos_theta = sh_dot3(gn, dir) / (world2 * dlen)};
    in->lod1 = in->lod;
    if (!g->texcoords1) return;
    float uv1[3][2];
    sh_triangle_uvs(g, g->texcoords1, prim, uv1);
    sh_lod q1 = in->lod;
    q1.uv_area = uv_area2(uv1);
    sh_surface_in_set1(p, uv1, b1, b2, &q1, in);
}

/* ref's texture at in's uv (through its transform, at its own level of detail) into
 * rgba; false, rgba untouched, when the material has no such texture. */
static bool sample(const sc_scene *s, const sc_texture_ref *ref, const sh_surface_in *in, float rgba[4])
{
    const sc_texture *t = sh_texture_of(s, ref);
    if (!t) return false;
    const bool set1 = ref->uv_set == 1;
    float u = set1 ? in->uv1[0] : in->uv[0], v = set1 ? in->uv1[1] : in->uv[1];
    sh_texture_transform(ref, &u, &v);
    sh_texture_sample(t, &ref->sampler, u, v, sh_surface_lod(set1 ? &in->lod1 : &in->lod, ref, t), rgba);
    return true;
}

/* The normal map's tangent-space normal texel (2 rgb - 1, xy scaled) in the frame
 * (T, B, n) of in (of its uv set: set1), into n (unit); false when there is no usable
 * frame or result. */
static bool mapped_normal(const sh_surface_in *in, bool set1, const float texel[4], float scale, float n[3])
{
    const float *N = in->n, *tangent = set1 ? in->tangent1 : in->tangent;
    const float *bitangent = set1 ? in->bitangent1 : in->bitangent;
    float T[3], B[3];
    float d = sh_dot3(tangent, N);
    for (int i = 0; i < 3; i++) T[i] = tangent[i] - d * N[i];
    float len = sqrtf(sh_dot3(T, T));
    if (!(len > 0.0f) || !isfinite(len)) return false;
    for (int i = 0; i < 3; i++) T[i] /= len;
    cross3(N, T, B);
    if (sh_dot3(B, bitangent) < 0.0f)
        for (int i = 0; i < 3; i++) B[i] = -B[i];
    float x = (2.0f * texel[0] - 1.0f) * scale, y = (2.0f * texel[1] - 1.0f) * scale;
    float z = 2.0f * texel[2] - 1.0f;
    for (int i = 0; i < 3; i++) n[i] = x * T[i] + y * B[i] + z * N[i];
    float l = sqrtf(sh_dot3(n, n));
    if (!(l > 0.0f) || !isfinite(l)) return false;
    for (int i = 0; i < 3; i++) n[i] /= l;
    return true;
}

static void shading_normal(const sc_scene *s, const sc_material *m, const sh_surface_in *in, float n[3])
{
    float texel[4];
    if (!sample(s, &m->normal_map, in, texel) ||
        !mapped_normal(in, m->normal_map.uv_set == 1, texel, m->normal_scale, n))
        for (int i = 0; i < 3; i++) n[i] = in->n[i];
    for (int i = 0; i < 3; i++) n[i] *= in->facing;
}

void sh_surface_gather(const sc_scene *s, const sc_material *m, const sh_surface_in *in,
                       sh_surface *out)
{
    float t[4];
    bool has = sample(s, &m->albedo_map, in, t);
    for (int k = 0; k < 3; k++) out->base[k] = has ? m->albedo[k] * t[k] : m->albedo[k];
    out->alpha = has ? m->alpha * t[3] : m->alpha;
    has = sample(s, &m->metallic_roughness_map, in, t);
    out->metallic = clamp01(has ? m->metallic * t[2] : m->metallic);
    out->roughness = clamp01(has ? m->roughness * t[1] : m->roughness);
    has = sample(s, &m->emissive_map, in, t);
    for (int k = 0; k < 3; k++) out->emissive[k] = has ? m->emissive[k] * t[k] : m->emissive[k];
    has = sample(s, &m->occlusion_map, in, t);
    out->occlusion = has ? 1.0f + m->occlusion_strength * (t[0] - 1.0f) : 1.0f;
    shading_normal(s, m, in, out->n);
}

/* ---- the BRDF --------------------------------------------------------------------------- */

/* Schlick's F0 and the diffuse colour of one channel. */
static float f0_of(float base, float metallic) { return 0.04f + (base - 0.04f) * metallic; }
static float cdiff_of(float base, float metallic) { return base * (1.0f - metallic); }

void sh_pbr_brdf(const sh_surface *s, const float l[3], const float v[3], float f[3])
{
    float nl = clamp01(sh_dot3(s->n, l)), nv = clamp01(sh_dot3(s->n, v));
    f[0] = f[1] = f[2] = 0.0f;
    if (!(nl > 0.0f) || !(nv > 0.0f)) return;
    float h[3] = {l[0] + v[0], l[1] + v[1], l[2] + v[2]};   /* l + v: the same bits as v + l */
    sh_normalize3(h);
    float nh = clamp01(sh_dot3(s->n, h));
    /* |v.h| = |l.h|; their mean keeps f(l, v) and f(v, l) the same bits. */
    float vh = clamp01(0.5f * (fabsf(sh_dot3(v, h)) + fabsf(sh_dot3(l, h))));
    float r = s->roughness > SH_PBR_MIN_ROUGHNESS ? fminf(s->roughness, 1.0f) : SH_PBR_MIN_ROUGHNESS;
    float a = r * r, a2 = a * a;
    /* D's denominator (n.h)^2 (a^2 - 1) + 1 as (1 - (n.h)^2) + (n.h)^2 a^2, with
     * 1 - (n.h)^2 = |n x h|^2: near the peak of a smooth lobe the plain form loses most
     * of its bits to cancellation (1.5% of D at roughness 0.045). */
    float nxh[3];
    cross3(s->n, h, nxh);
    float k = sh_dot3(nxh, nxh) + nh * nh * a2;
    float D = a2 / (PBR_PI * k * k);
    float vis = 0.5f / (nl * sqrtf(nv * nv * (1.0f - a2) + a2) + nv * sqrtf(nl * nl * (1.0f - a2) + a2));
    float x = 1.0f - vh, x2 = x * x, fres = x2 * x2 * x;
    float metal = clamp01(s->metallic);
    for (int c = 0; c < 3; c++) {
        float f0 = f0_of(s->base[c], metal);
        float F = f0 + (1.0f - f0) * fres;
        f[c] = (1.0f - F) * cdiff_of(s->base[c], metal) / PBR_PI + F * D * vis;
    }
}

bool sh_pbr_light(const sh_surface *s, const float p[3], const float view[3],
                  const sc_light *l, float out[3])
{
    float L[3] = {l->position[0] - p[0], l->position[1] - p[1], l->position[2] - p[2]};
    sh_normalize3(L);
    float nl = sh_dot3(s->n, L);
    if (!(nl > 0.0f)) return false;
    float f[3];
    sh_pbr_brdf(s, L, view, f);
    for (int c = 0; c < 3; c++) out[c] = PBR_PI * f[c] * nl * l->color[c];
    return true;
}

void sh_pbr_ambient(const sh_surface *s, float ambient, float out[3])
{
    float metal = clamp01(s->metallic), a = ambient * s->occlusion;
    for (int c = 0; c < 3; c++) {
        float f0 = f0_of(s->base[c], metal);
        out[c] = a * (cdiff_of(s->base[c], metal) * (1.0f - f0) + f0);
    }
}

void sh_pbr_shade_local(const sh_surface *s, const float p[3], const float view[3],
                        const sc_light *lights, int nlights, float ambient, float rgb[3])
{
    sh_pbr_ambient(s, ambient, rgb);
    for (int c = 0; c < 3; c++) rgb[c] += s->emissive[c];
    for (int k = 0; k < nlights; k++) {
        float l[3];
        if (sh_pbr_light(s, p, view, &lights[k], l))
            for (int c = 0; c < 3; c++) rgb[c] += l[c];
    }
}

void sh_pbr_reflectance(const sh_surface *s, const float view[3], float w[3])
{
    float x = 1.0f - clamp01(sh_dot3(s->n, view)), x2 = x * x, fres = x2 * x2 * x;
    float gloss = 1.0f - clamp01(s->roughness), metal = clamp01(s->metallic);
    for (int c = 0; c < 3; c++) {
        float f0 = f0_of(s->base[c], metal);
        w[c] = (f0 + (1.0f - f0) * fres) * gloss * gloss;
    }
}
