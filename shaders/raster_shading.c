/* raster_shading.c — vertex transform and per-pixel Blinn-Phong (see the header). */
#include "shaders/raster_shading.h"

#include "shaders/blinn_phong.h"
#include "shaders/lighting.h"
#include "shaders/pbr.h"
#include "shaders/texture_sample.h"
#include "shaders/texture_sample_body.h"
#include "shaders/texture_sample_packet.h"
#include "shaders/uv_sets.h"
#if defined(__x86_64__)
#include "raytracer/simd.h"
#endif

#include <math.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif


/* Clip planes around the scene's view extent, with margins that scale with it. */
static void depth_range(sh_raster_env *e, const sc_geometry *g)
{
    sh_view_extent x = sh_view_extent_of(g, &e->frame);
    float diag = x.diagonal > 0 ? x.diagonal : 1;
    e->near = x.nearest > diag * 1e-3f ? x.nearest * 0.9f : diag * 1e-3f;
    e->far = x.farthest > e->near ? x.farthest * 1.01f + diag * 1e-3f : e->near + diag;
}

void sh_raster_env_init(sh_raster_env *e, const sc_scene *s, const sc_geometry *g,
                        int width, int height, sh_aov aov)
{
    memset(e, 0, sizeof *e);
    sh_srgb_init();                       /* the PS uses sh_srgb8_lookup */
    e->isa = rt_isa_best();
    e->scene = s;
    e->geo = g;
    e->aov = aov;
    e->width = width;
    e->height = height;
    sc_camera_frame_init(&e->frame, &s->camera, width, height);
    depth_range(e, g);
    e->nlights = sh_lights_of(s, e->frame.eye, e->lights);
    e->ambient = SH_AMBIENT;
    e->background[0] = e->background[1] = e->background[2] = SH_BACKGROUND;
}

static uint32_t pack_rgb(const float c[3])
{
    return (uint32_t)sh_to_srgb8(c[0]) | (uint32_t)sh_to_srgb8(c[1]) << 8 |
           (uint32_t)sh_to_srgb8(c[2]) << 16 | 0xff000000u;
}

/* ---- texture coordinates per pixel, for the level of detail -----------------------------
 * The perspective-correct weights at a pixel are P_k / (P_0 + P_1 + P_2) with
 * P_k = l_k / w_k and l_k the screen barycentrics, which extend to pixels outside the
 * triangle: a quad's helper pixels get the values the triangle's interpolation would
 * give there. */
/* Forced, so that the AVX2 compile of the packet kernel gets the functions it calls in
 * its own compile. */
#define PS_INLINE static inline __attribute__((always_inline))

/* Four doubles, one IEEE operation per lane: the corners' (or the planes') scalar
 * arithmetic done side by side, so the bits are the scalar formulas'. */
typedef double qs_v4 __attribute__((vector_size(4 * sizeof(double))));

/* A triangle's texture coordinates as uv = (U / W, V / W), U, V and W affine in the
 * pixel centre relative to its first corner (x0, y0): lane c of at, dx and dy is
 * {U, V, W}[c]'s value there and its d/dx and d/dy. The caller's kept type, so the
 * shader reads a kept one where it is (ready unused here). */
typedef sh_ps_quad_setup quad_setup;

PS_INLINE void quad_setup_of(const sh_raster_env *e, const sh_ps_tri *t, const float uv[3][2], quad_setup *q)
{
    const sc_camera_frame *fr = &e->frame;
    qs_v4 p[3];                                  /* lane k: corner k (lane 3 repeats corner 0) */
    for (int c = 0; c < 3; c++)
        p[c] = (qs_v4){t->attr[0][c], t->attr[1][c], t->attr[2][c], t->attr[0][c]} - (double)fr->eye[c];
    /* the VS's projection (rs_project), in double, unsnapped */
    const qs_v4 depth = p[0] * (double)fr->forward[0] + p[1] * (double)fr->forward[1] +
                        p[2] * (double)fr->forward[2];
    const qs_v4 c0 = (p[0] * (double)fr->right[0] + p[1] * (double)fr->right[1] +
                      p[2] * (double)fr->right[2]) / (double)fr->half_w;
    const qs_v4 c1 = (p[0] * (double)fr->up[0] + p[1] * (double)fr->up[1] + p[2] * (double)fr->up[2]) /
                     (double)fr->half_h;
    const qs_v4 iw = 1.0 / depth;
    const qs_v4 sx = (c0 * iw * 0.5 + 0.5) * (double)e->width;
    const qs_v4 sy = (0.5 - c1 * iw * 0.5) * (double)e->height;
    const double ax = sx[1] - sx[0], ay = sy[1] - sy[0], bx = sx[2] - sx[0], by = sy[2] - sy[0];
    const double inv_area = 1.0 / (ax * by - bx * ay);
    /* screen barycentrics of corners 1 and 2: l1 = (px by - bx py) / area,
     * l2 = (ax py - px ay) / area, l0 = 1 - l1 - l2 */
    const double l1x = by * inv_area, l1y = -bx * inv_area, l2x = -ay * inv_area, l2y = ax * inv_area;
    /* corner k's {U, V, W}: iw_k uv_k and iw_k */
    const qs_v4 v0 = {iw[0] * uv[0][0], iw[0] * uv[0][1], iw[0], 0.0};
    const qs_v4 v1 = {iw[1] * uv[1][0], iw[1] * uv[1][1], iw[1], 0.0};
    const qs_v4 v2 = {iw[2] * uv[2][0], iw[2] * uv[2][1], iw[2], 0.0};
    const qs_v4 dx = (v1 - v0) * l1x + (v2 - v0) * l2x, dy = (v1 - v0) * l1y + (v2 - v0) * l2y;
    memcpy(q->at, &v0, sizeof q->at);
    memcpy(q->dx, &dx, sizeof q->dx);
    memcpy(q->dy, &dy, sizeof q->dy);
    q->x0 = sx[0];
    q->y0 = sy[0];
}

PS_INLINE void quad_derivatives(const quad_setup *q, int x, int y, float d[4])
{
    qs_v4 at0, dx, dy;
    memcpy(&at0, q->at, sizeof at0);
    memcpy(&dx, q->dx, sizeof dx);
    memcpy(&dy, q->dy, sizeof dy);
    const double px = (double)(x & ~1) + 0.5 - q->x0, py = (double)(y & ~1) + 0.5 - q->y0;
    const qs_v4 at = at0 + dx * px + dy * py;           /* at the quad's top-left pixel */
    const qs_v4 right = at + dx, below = at + dy;
    const qs_v4 r = 1.0 / (qs_v4){at[2], right[2], below[2], 1.0};
    /* d = {right U, right V, below U, below V} x their 1/W - {U, V, U, V} x the quad's
     * 1/W: per lane the scalar formula's operations (and rounding to float), four at once */
    typedef long long qs_i4 __attribute__((vector_size(4 * sizeof(long long))));
    typedef float qs_f4 __attribute__((vector_size(4 * sizeof(float))));
    const qs_v4 ends = __builtin_shuffle(right, below, (qs_i4){0, 1, 4, 5});
    const qs_v4 end_r = __builtin_shuffle(r, (qs_i4){1, 1, 2, 2});
    const qs_v4 start = __builtin_shuffle(at, (qs_i4){0, 1, 0, 1});
    const qs_f4 v = __builtin_convertvector(ends * end_r - start * r[0], qs_f4);
    memcpy(d, &v, sizeof v);
}

/* t's corners' set 0: the VS's attributes 6 and 7. */
static void tri_set0(const sh_ps_tri *t, float uv[3][2])
{
    for (int k = 0; k < 3; k++) uv[k][0] = t->attr[k][6], uv[k][1] = t->attr[k][7];
}

void sh_ps_tri_uvs(const sh_raster_env *e, const sh_ps_tri *t, const sc_texture_ref *r, float uv[3][2])
{
    if (!sh_reads_set1(e->geo, r)) { tri_set0(t, uv); return; }
    for (int k = 0; k < 3; k++) sh_set1_at(e->geo, t->prim, t->attr[k], uv[k]);
}

void sh_ps_quad_derivatives_of(const sh_raster_env *e, const sh_ps_tri *t, const float uv[3][2], int x,
                               int y, float d[4])
{
    quad_setup q;
    quad_setup_of(e, t, uv, &q);
    quad_derivatives(&q, x, y, d);
}

void sh_ps_quad_derivatives(const sh_raster_env *e, const sh_ps_tri *t, int x, int y, float d[4])
{
    float uv[3][2];
    tri_set0(t, uv);
    sh_ps_quad_derivatives_of(e, t, uv, x, y, d);
}

/* ---- the pixel shader packet kernel -------------------------------------------------------
 * Structure of arrays, one loop per step across the fragments, so each loop vectorizes.
 * Conditionals are selects and every lane computes what the scalar formula would
 * (normalize: v / |v| unless |v| is 0; two-sided: n or -n; unlit light: add nothing), so
 * results are bit-identical to shading one fragment at a time. */

#define PS_LOOP(i, n) for (int i = 0; i < (n); i++)

typedef struct ps_vec3 { float x[SH_PS_MAX], y[SH_PS_MAX], z[SH_PS_MAX]; } ps_vec3;

/* One fragment's RS_ATTRS (= 8) attributes at once: each vertex's attributes are one
 * 8-float vector, so interpolation is three multiplies and two adds across attributes
 * (the same IEEE operations per attribute as the scalar formula), then a transpose into
 * the packet's arrays. */
typedef float ps_attr_vec __attribute__((vector_size(RS_ATTRS * sizeof(float))));

#if defined(__x86_64__)
/* ps_interpolate's loop eight fragments at a time, for the packet's whole groups of
 * eight: each fragment's attributes as one vector, the same operations in the same
 * order ((b0 a0 + b1 a1) + b2 a2, b0 = (1 - b1) - b2), then transposed into the arrays
 * in eight stores. Returns how many fragments it did. */
__attribute__((target("avx2"), noinline))
static int interpolate_avx2(const sh_ps_frags *f, float a[RS_ATTRS][SH_PS_MAX])
{
    _Static_assert(RS_ATTRS == 8, "a triangle corner's attributes are one 8-float vector");
    int i = 0;
    for (; i + 8 <= f->n; i += 8) {
        __m256 v[8];
        for (int j = 0; j < 8; j++) {
            const sh_ps_tri *t = &f->tris[f->tri[i + j]];
            const __m256 b1 = _mm256_set1_ps(f->b1[i + j]), b2 = _mm256_set1_ps(f->b2[i + j]);
            const __m256 b0 = _mm256_sub_ps(_mm256_sub_ps(_mm256_set1_ps(1.0f), b1), b2);
            const __m256 s01 = _mm256_add_ps(_mm256_mul_ps(b0, _mm256_loadu_ps(t->attr[0])),
                                             _mm256_mul_ps(b1, _mm256_loadu_ps(t->attr[1])));
            v[j] = _mm256_add_ps(s01, _mm256_mul_ps(b2, _mm256_loadu_ps(t->attr[2])));
        }
        v8_transpose8(v);
        for (int k = 0; k < RS_ATTRS; k++) _mm256_storeu_ps(&a[k][i], v[k]);
    }
    return i;
}
#endif

PS_INLINE void ps_interpolate(const sh_raster_env *e, const sh_ps_frags *f, float a[RS_ATTRS][SH_PS_MAX])
{
    int i = 0;
#if defined(__x86_64__)
    if (e->isa == RT_ISA_AVX2) i = interpolate_avx2(f, a);
#else
    (void)e;
#endif
    for (; i < f->n; i++) {
        const sh_ps_tri *t = &f->tris[f->tri[i]];
        ps_attr_vec a0, a1, a2;
        memcpy(&a0, t->attr[0], sizeof a0);
        memcpy(&a1, t->attr[1], sizeof a1);
        memcpy(&a2, t->attr[2], sizeof a2);
        const float b1 = f->b1[i], b2 = f->b2[i], b0 = 1.0f - b1 - b2;
        ps_attr_vec v = b0 * a0 + b1 * a1 + b2 * a2;
        for (int k = 0; k < RS_ATTRS; k++) a[k][i] = v[k];
    }
}

/* Per-fragment material terms, gathered once so the lighting loops run across the packet. */
typedef struct ps_material {
    float albedo[3][SH_PS_MAX];
    float specular[SH_PS_MAX], exponent[SH_PS_MAX];
    int metallic_roughness;               /* fragments whose material is glTF's model */
    uint64_t quad_ready;                  /* bit k: quad[k] is set up for tris[k] */
    int last_tri, last_x, last_y;         /* the quad whose derivatives last_d holds */
    float last_d[4];
    int lod_tri, lod_x, lod_y;            /* the triangle and quad whose albedo level is lod */
    float lod;
    quad_setup quad[SH_PS_MAX];           /* textured triangles, once per packet */
    sh_ps_quad_setup *const *kept;        /* NULL, or the caller's per triangle (sh_ps_packet_kept) */
    int ntris;                            /* 0, or the caller's sh_ps_kept.ntris */
} ps_material;

static const sc_material *material_of(const sh_raster_env *e, uint32_t m)
{
    return m < e->scene->nmaterials ? &e->scene->materials[m] : &sh_default_material;
}

PS_INLINE void ps_normalize(ps_vec3 *v, int n)
{
    PS_LOOP(i, n) {
        float l = sqrtf(v->x[i] * v->x[i] + v->y[i] * v->y[i] + v->z[i] * v->z[i]);
        float d = l > 0 ? l : 1.0f;
        v->x[i] /= d;
        v->y[i] /= d;
        v->z[i] /= d;
    }
}

/* to - p for a fixed point `to`, normalized. */
PS_INLINE void ps_direction_to(const float to[3], float a[RS_ATTRS][SH_PS_MAX], int n, ps_vec3 *d)
{
    PS_LOOP(i, n) {
        d->x[i] = to[0] - a[0][i];
        d->y[i] = to[1] - a[1][i];
        d->z[i] = to[2] - a[2][i];
    }
    ps_normalize(d, n);
}

PS_INLINE float ps_dot(const ps_vec3 *a, const ps_vec3 *b, int i)
{
    return a->x[i] * b->x[i] + a->y[i] * b->y[i] + a->z[i] * b->z[i];
}

/* Triangle tris[k]'s quad setup (set 0): the caller's kept one, made on its first use in
 * any packet, else made on its first use in the packet. */
PS_INLINE const quad_setup *ps_quad_of(const sh_raster_env *e, const sh_ps_frags *f, unsigned k,
                                       ps_material *pm)
{
    quad_setup *q = pm->kept ? pm->kept[k] : &pm->quad[k];
    const bool made = pm->kept ? q->ready : pm->quad_ready >> k & 1;
    if (!made) {
        float uv[3][2];
        tri_set0(&f->tris[k], uv);
        quad_setup_of(e, &f->tris[k], uv, q);
        q->ready = true;
        pm->quad_ready |= 1ull << k;
    }
    return q;
}

/* The coarse derivatives of fragment i's quad (x and y given), in pm->last_d: its
 * triangle set up once per packet, the derivatives once per run of its fragments in
 * one quad. */
PS_INLINE const float *ps_quad_d(const sh_raster_env *e, const sh_ps_frags *f, int i, ps_material *pm)
{
    const unsigned k = f->tri[i];
    const quad_setup *q = ps_quad_of(e, f, k, pm);
    const int qx = f->x[i] & ~1, qy = f->y[i] & ~1;
    if ((int)k != pm->last_tri || qx != pm->last_x || qy != pm->last_y) {   /* neighbours share it */
        quad_derivatives(q, qx, qy, pm->last_d);
        pm->last_tri = (int)k, pm->last_x = qx, pm->last_y = qy;
    }
    return pm->last_d;
}

/* Fragment i's footprint for the level of detail: its quad's derivatives, or level 0
 * without pixel positions. */
PS_INLINE sh_lod ps_footprint(const sh_raster_env *e, const sh_ps_frags *f, int i, ps_material *pm)
{
    sh_lod q = {.kind = SH_LOD_BASE};
    if (!f->x) return q;
    const float *d = ps_quad_d(e, f, i, pm);
    q.kind = SH_LOD_QUAD;
    q.dudx = d[0], q.dvdx = d[1], q.dudy = d[2], q.dvdy = d[3];
    return q;
}

/* Fragment i's triangle's corners in set 1 and the fragment's footprint there; no cache:
 * only materials that read set 1 come here. */
static void ps_set1(const sh_raster_env *e, const sh_ps_frags *f, int i, float c[3][2], sh_lod *q)
{
    const sh_ps_tri *t = &f->tris[f->tri[i]];
    const sc_texture_ref set1 = {.uv_set = 1};
    sh_ps_tri_uvs(e, t, &set1, c);
    *q = (sh_lod){.kind = SH_LOD_BASE};
    if (!f->x) return;
    float d[4];
    sh_ps_quad_derivatives_of(e, t, c, f->x[i], f->y[i], d);
    *q = (sh_lod){.kind = SH_LOD_QUAD, .dudx = d[0], .dvdx = d[1], .dudy = d[2], .dvdy = d[3]};
}

/* The texel of m's albedo map for fragment i where the map reads set 1: its corners in
 * set 1, its quad's footprint there, one scalar sample. */
static void ps_texel_set1(const sh_raster_env *e, const sh_ps_frags *f, int i, const sc_material *m,
                          const sc_texture *tex, float texel[4])
{
    float c[3][2], uv[2];
    sh_lod q1;
    ps_set1(e, f, i, c, &q1);
    const float b1 = f->b1[i], b2 = f->b2[i], b0 = 1.0f - b1 - b2;
    for (int k = 0; k < 2; k++) uv[k] = b0 * c[0][k] + b1 * c[1][k] + b2 * c[2][k];
    float lod = sh_surface_lod(&q1, &m->albedo_map, tex);
    sh_texture_transform(&m->albedo_map, &uv[0], &uv[1]);
    sh_texture_sample(tex, &m->albedo_map.sampler, uv[0], uv[1], lod, texel);
}

/* The level of detail of m's albedo map for fragment i: its quad's, computed once for the
 * run of fragments of one triangle in one quad (a triangle has one material). */
PS_INLINE float ps_albedo_lod(const sh_raster_env *e, const sh_ps_frags *f, int i, const sc_material *m,
                              const sc_texture *tex, ps_material *pm)
{
    const int qx = f->x ? f->x[i] & ~1 : 0, qy = f->x ? f->y[i] & ~1 : 0;
    if (f->tri[i] == pm->lod_tri && qx == pm->lod_x && qy == pm->lod_y) return pm->lod;
    if (f->x && sh_texture_transform_is_identity(&m->albedo_map)) {   /* sh_surface_lod's case, inline */
        const float *d = ps_quad_d(e, f, i, pm);
        pm->lod = ts_lod(tex, d[0], d[1], d[2], d[3]);
    } else {
        const sh_lod q = ps_footprint(e, f, i, pm);
        pm->lod = sh_surface_lod(&q, &m->albedo_map, tex);
    }
    pm->lod_tri = f->tri[i], pm->lod_x = qx, pm->lod_y = qy;
    return pm->lod;
}

/* Fragments whose albedo map reads set 0, queued for the packet sampler: the fragment,
 * its material, its coordinates (before the map's transform) and level of detail;
 * one_material: every queued fragment has material[0]. */
typedef struct ps_albedo_queue {
    int n;
    bool one_material;
    uint8_t frag[SH_PS_MAX];
    const sc_material *material[SH_PS_MAX];
    float u[SH_PS_MAX], v[SH_PS_MAX], lod[SH_PS_MAX];
} ps_albedo_queue;

PS_INLINE void ps_queue_albedo(const sh_raster_env *e, const sh_ps_frags *f, int i, const sc_material *m,
                               const sc_texture *tex, float u, float v, ps_material *pm, ps_albedo_queue *q)
{
    q->lod[q->n] = ps_albedo_lod(e, f, i, m, tex, pm);
    q->u[q->n] = u;
    q->v[q->n] = v;
    q->frag[q->n] = (uint8_t)i;
    q->material[q->n] = m;
    q->n++;
}

/* Samples n fragments of material m (coordinates u, v before the map's transform, level
 * lod) and sets their albedo, factor x texel: of fragments frag[j], or (frag NULL) of the
 * packet's first n in order. */
static void ps_sample_material(const sh_raster_env *e, const sc_material *m, int n, float *u, float *v,
                               const float *lod, const uint8_t *frag, ps_material *pm)
{
    float out[3][SH_PS_MAX];
    float *const rgba[4] = {out[0], out[1], out[2], NULL};    /* the albedo: colour only */
    if (!sh_texture_transform_is_identity(&m->albedo_map))
        for (int j = 0; j < n; j++) sh_texture_transform(&m->albedo_map, &u[j], &v[j]);
    sh_texture_sample_n(sh_texture_of(e->scene, &m->albedo_map), &m->albedo_map.sampler, u, v, lod, n, rgba,
                        e->isa == RT_ISA_AVX2);
    if (!frag) {
        for (int k = 0; k < 3; k++) PS_LOOP(j, n) pm->albedo[k][j] = m->albedo[k] * out[k][j];
        return;
    }
    for (int j = 0; j < n; j++)
        for (int k = 0; k < 3; k++) pm->albedo[k][frag[j]] = m->albedo[k] * out[k][j];
}

/* Samples the queued fragments of a packet of n, one sh_texture_sample_n per material. */
static void ps_sample_albedo(const sh_raster_env *e, int n_packet, ps_albedo_queue *q, ps_material *pm)
{
    if (q->n > 0 && q->one_material) {            /* every fragment queued: the j-th is j */
        const uint8_t *frag = q->n == n_packet ? NULL : q->frag;
        ps_sample_material(e, q->material[0], q->n, q->u, q->v, q->lod, frag, pm);
        return;
    }
    float u[SH_PS_MAX], v[SH_PS_MAX], lod[SH_PS_MAX];
    uint8_t frag[SH_PS_MAX];
    while (q->n > 0) {
        const sc_material *m = q->material[0];
        int n = 0, rest = 0;
        for (int j = 0; j < q->n; j++) {            /* m's fragments out, the others kept */
            if (q->material[j] == m) {
                u[n] = q->u[j], v[n] = q->v[j], lod[n] = q->lod[j], frag[n] = q->frag[j];
                n++;
                continue;
            }
            q->u[rest] = q->u[j], q->v[rest] = q->v[j], q->lod[rest] = q->lod[j];
            q->frag[rest] = q->frag[j], q->material[rest] = q->material[j];
            rest++;
        }
        q->n = rest;
        ps_sample_material(e, m, n, u, v, lod, frag, pm);
    }
}

/* What the PS reads of a packet triangle's material, looked up once per packet. */
typedef struct ps_tri_material {
    const sc_material *m;
    const sc_texture *tex;                /* the albedo map; NULL: none */
    bool queued;                          /* tex, read in set 0: the packet sampler's */
} ps_tri_material;

PS_INLINE const ps_tri_material *ps_tri_material_of(const sh_raster_env *e, const sh_ps_frags *f, int i,
                                                    uint64_t *known, ps_tri_material *tm)
{
    const unsigned k = f->tri[i];
    ps_tri_material *t = &tm[k];
    if (*known >> k & 1) return t;
    *known |= 1ull << k;
    t->m = material_of(e, f->tris[k].material);
    t->tex = sh_texture_of(e->scene, &t->m->albedo_map);
    t->queued = t->tex && !sh_reads_set1(e->geo, &t->m->albedo_map);
    return t;
}

/* Whether the packet's triangles in `known` whose fragments are queued share one
 * material (tested per triangle, not per fragment). */
static bool ps_one_queued_material(uint64_t known, const ps_tri_material *tm)
{
    const sc_material *m = NULL;
    for (; known; known &= known - 1) {
        const ps_tri_material *t = &tm[__builtin_ctzll(known)];
        if (!t->queued) continue;
        if (m && t->m != m) return false;
        m = t->m;
    }
    return true;
}

/* The packet's one material, when every fragment's triangle has it (looked up where the
 * triangle changes from one fragment to the next, or, given the caller's ntris, once per
 * triangle), else NULL. */
PS_INLINE const sc_material *ps_packet_material(const sh_raster_env *e, const sh_ps_frags *f, int ntris)
{
    if (f->n < 1) return NULL;
    const uint32_t first = f->tris[f->tri[0]].material;
    if (ntris > 0) {
        for (int k = 0; k < ntris; k++)
            if (f->tris[k].material != first) return NULL;
        return material_of(e, first);
    }
    for (int i = 1; i < f->n; i++)
        if (f->tri[i] != f->tri[i - 1] && f->tris[f->tri[i]].material != first) return NULL;
    return material_of(e, first);
}

/* Every kept quad setup of the packet's triangles made before the fragments ask for
 * them: in a loop over the triangles, whose test is taken for all but a triangle carried
 * over from the last packet, instead of a test per (triangle, quad) whose outcome follows
 * the triangles' sizes. Without kept setups ps_quad_of makes them on first use. */
PS_INLINE void ps_make_kept_quads(const sh_raster_env *e, const sh_ps_frags *f, ps_material *pm)
{
    if (!pm->kept) return;
    for (int k = 0; k < pm->ntris; k++) (void)ps_quad_of(e, f, (unsigned)k, pm);
}

/* The level of m's albedo map tex for each fragment of a packet whose fragments all
 * have material m: ps_albedo_lod's values (a pure function of the triangle and the
 * quad), computed once per run of a triangle's fragments in one quad. Callers list a
 * triangle's fragments quad by quad (tile_shade.c), so a run is a whole quad; another
 * order only makes more runs, with the same values. The runs are found and listed
 * without a branch per fragment: where a run starts depends on the triangles' sizes,
 * which no predictor follows. */
PS_INLINE void ps_albedo_lods(const sh_raster_env *e, const sh_ps_frags *f, const sc_material *m,
                              const sc_texture *tex, ps_material *pm, float *lod)
{
    if (!f->x || !sh_texture_transform_is_identity(&m->albedo_map)) {
        for (int i = 0; i < f->n; i++) lod[i] = ps_albedo_lod(e, f, i, m, tex, pm);
        return;
    }
    const int n = f->n;
    uint32_t key[SH_PS_MAX];              /* fragment i's quad, in a loop that vectorizes */
    uint8_t starts[SH_PS_MAX];            /* 1: fragment i starts a run */
    uint8_t run_first[SH_PS_MAX];         /* per run: its first fragment */
    uint8_t frag_run[SH_PS_MAX];          /* fragment i's run */
    float d[4][SH_PS_MAX], level[SH_PS_MAX];   /* per run: derivatives, level */
    PS_LOOP(i, n) key[i] = (uint32_t)(f->x[i] >> 1) | (uint32_t)(f->y[i] >> 1) << 15;
    if (n > 0) starts[0] = 1;
    for (int i = 1; i < n; i++) starts[i] = (key[i] != key[i - 1]) | (f->tri[i] != f->tri[i - 1]);
    int nq = 0;
    for (int i = 0; i < n; i++) {
        run_first[nq] = (uint8_t)i;       /* kept only when i starts a run */
        nq += starts[i];
        frag_run[i] = (uint8_t)(nq - 1);
    }
    ps_make_kept_quads(e, f, pm);
    for (int j = 0; j < nq; j++) {
        const int i = run_first[j];
        float qd[4];
        quad_derivatives(ps_quad_of(e, f, f->tri[i], pm), f->x[i], f->y[i], qd);
        for (int c = 0; c < 4; c++) d[c][j] = qd[c];
    }
    /* the levels in one branch-free loop across the runs, which vectorizes */
    const float w = (float)tex->levels[0].width, h = (float)tex->levels[0].height;
    PS_LOOP(j, nq) level[j] = ts_lod_of_size(w, h, d[0][j], d[1][j], d[2][j], d[3][j]);
    PS_LOOP(i, n) lod[i] = level[frag_run[i]];
}

/* ps_gather_material for a packet of one material m whose albedo map, if any, reads
 * set 0: the same values, without the per-fragment lookups and queue. */
PS_INLINE void ps_gather_one_material(const sh_raster_env *e, const sh_ps_frags *f, const sc_material *m,
                                      float a[RS_ATTRS][SH_PS_MAX], ps_material *pm)
{
    const int n = f->n;
    pm->metallic_roughness = m->model == SC_SHADING_METALLIC_ROUGHNESS ? n : 0;
    PS_LOOP(i, n) {
        pm->specular[i] = m->specular;
        pm->exponent[i] = m->specular_exponent;
    }
    const sc_texture *tex = sh_texture_of(e->scene, &m->albedo_map);
    if (!tex) {
        for (int k = 0; k < 3; k++) PS_LOOP(i, n) pm->albedo[k][i] = m->albedo[k];
        return;
    }
    float lod[SH_PS_MAX];
    ps_albedo_lods(e, f, m, tex, pm, lod);
    if (sh_texture_transform_is_identity(&m->albedo_map)) {   /* a[6], a[7] read as they are */
        ps_sample_material(e, m, n, a[6], a[7], lod, NULL, pm);
        return;
    }
    float u[SH_PS_MAX], v[SH_PS_MAX];             /* transformed in place */
    memcpy(u, a[6], (size_t)n * sizeof(float));
    memcpy(v, a[7], (size_t)n * sizeof(float));
    ps_sample_material(e, m, n, u, v, lod, NULL, pm);
}

PS_INLINE void ps_gather_material(const sh_raster_env *e, const sh_ps_frags *f, const sh_ps_kept *kept,
                                  float a[RS_ATTRS][SH_PS_MAX], ps_material *pm)
{
    pm->kept = kept ? kept->quads : NULL;
    pm->ntris = kept ? kept->ntris : 0;
    pm->quad_ready = 0;
    pm->last_tri = -1;
    pm->lod_tri = -1;
    const sc_material *one = ps_packet_material(e, f, pm->ntris);
    if (one && !sh_reads_set1(e->geo, &one->albedo_map)) {
        ps_gather_one_material(e, f, one, a, pm);
        return;
    }
    ps_albedo_queue queue;
    queue.n = 0;
    pm->metallic_roughness = 0;
    uint64_t known = 0;                   /* bit k: tm[k] is looked up for tris[k] */
    ps_tri_material tm[SH_PS_MAX];
    for (int i = 0; i < f->n; i++) {
        const ps_tri_material *t = ps_tri_material_of(e, f, i, &known, tm);
        const sc_material *m = t->m;
        pm->metallic_roughness += m->model == SC_SHADING_METALLIC_ROUGHNESS;
        pm->specular[i] = m->specular;
        pm->exponent[i] = m->specular_exponent;
        if (t->queued) {
            ps_queue_albedo(e, f, i, m, t->tex, a[6][i], a[7][i], pm, &queue);
            continue;
        }
        float texel[4] = {1, 1, 1, 1};
        if (t->tex) ps_texel_set1(e, f, i, m, t->tex, texel);
        for (int k = 0; k < 3; k++) pm->albedo[k][i] = t->tex ? m->albedo[k] * texel[k] : m->albedo[k];
    }
    queue.one_material = ps_one_queued_material(known, tm);
    ps_sample_albedo(e, f->n, &queue, pm);
}

/* Adds one point light's Blinn-Phong term (as sh_blinn_phong) to c. */
PS_INLINE void ps_light(const sc_light *l, const ps_material *pm, float a[RS_ATTRS][SH_PS_MAX],
                        const ps_vec3 *nrm, const ps_vec3 *view, int n, ps_vec3 *c)
{
    ps_vec3 L, h;
    float ndotl[SH_PS_MAX], ndoth[SH_PS_MAX], spec[SH_PS_MAX];
    ps_direction_to(l->position, a, n, &L);
    PS_LOOP(i, n) {
        ndotl[i] = ps_dot(nrm, &L, i);
        h.x[i] = L.x[i] + view->x[i];
        h.y[i] = L.y[i] + view->y[i];
        h.z[i] = L.z[i] + view->z[i];
    }
    ps_normalize(&h, n);
    PS_LOOP(i, n) {                               /* fmaxf(d, 0), as a select: it vectorizes */
        float d = ps_dot(nrm, &h, i);
        ndoth[i] = d > 0.0f ? d : 0.0f;
    }
    PS_LOOP(i, n) {                               /* sh_spec_pow: branch-free, it vectorizes */
        float s = pm->specular[i] * sh_spec_pow(ndoth[i], pm->exponent[i]);
        spec[i] = ndotl[i] > 0 ? s : 0.0f;
    }
    PS_LOOP(i, n) {
        bool lit = ndotl[i] > 0;
        float rx = (pm->albedo[0][i] * ndotl[i] + spec[i]) * l->color[0];
        float ry = (pm->albedo[1][i] * ndotl[i] + spec[i]) * l->color[1];
        float rz = (pm->albedo[2][i] * ndotl[i] + spec[i]) * l->color[2];
        c->x[i] = lit ? c->x[i] + rx : c->x[i];
        c->y[i] = lit ? c->y[i] + ry : c->y[i];
        c->z[i] = lit ? c->z[i] + rz : c->z[i];
    }
}

/* Fragments of metallic-roughness materials: their colour is glTF's BRDF
 * (shaders/pbr.h: the surface gathered at the fragment's weights with its quad's
 * footprint, ambient, emissive and each light), replacing the Blinn-Phong sum in c. The
 * two-sided rule as the packet's: the interpolated normal turned to the viewer. */
static void ps_metallic_roughness(const sh_raster_env *e, const sh_ps_frags *f,
                                  float a[RS_ATTRS][SH_PS_MAX], const ps_vec3 *view, ps_material *pm,
                                  ps_vec3 *c)
{
    for (int i = 0; i < f->n; i++) {
        const sh_ps_tri *t = &f->tris[f->tri[i]];
        const sc_material *m = material_of(e, t->material);
        if (m->model != SC_SHADING_METALLIC_ROUGHNESS) continue;
        float p[3][3], nrm[3][3], uv[3][2];
        for (int k = 0; k < 3; k++) {
            memcpy(p[k], t->attr[k], sizeof p[k]);
            memcpy(nrm[k], t->attr[k] + 3, sizeof nrm[k]);
            memcpy(uv[k], t->attr[k] + 6, sizeof uv[k]);
        }
        sh_surface_in in;
        sh_surface_in_of_vertices(p, nrm, uv, f->b1[i], f->b2[i], &in);
        const float v[3] = {view->x[i], view->y[i], view->z[i]};
        in.facing = in.n[0] * v[0] + in.n[1] * v[1] + in.n[2] * v[2] < 0 ? -1.0f : 1.0f;
        if (m->normal_map.texture >= 0) sh_triangle_tangent(p, uv, in.tangent, in.bitangent);
        in.lod = ps_footprint(e, f, i, pm);
        in.lod1 = in.lod;
        if (e->geo->texcoords1) {
            float c1[3][2];
            sh_lod q1;
            ps_set1(e, f, i, c1, &q1);
            sh_surface_in_set1(p, c1, f->b1[i], f->b2[i], &q1, &in);
        }
        sh_surface s;
        sh_surface_gather(e->scene, m, &in, &s);
        const float pos[3] = {a[0][i], a[1][i], a[2][i]};
        float rgb[3];
        sh_pbr_shade_local(&s, pos, v, e->lights, e->nlights, e->ambient, rgb);
        c->x[i] = rgb[0];
        c->y[i] = rgb[1];
        c->z[i] = rgb[2];
    }
}

PS_INLINE void ps_color(const sh_raster_env *e, const sh_ps_frags *f, const sh_ps_kept *kept,
                        float a[RS_ATTRS][SH_PS_MAX],
                        uint32_t *rgba)
{
    const int n = f->n;
    ps_vec3 nrm, view, c = {0};             /* c: only its first n lanes are read */
    ps_material pm;
    memcpy(nrm.x, a[3], (size_t)n * sizeof(float));
    memcpy(nrm.y, a[4], (size_t)n * sizeof(float));
    memcpy(nrm.z, a[5], (size_t)n * sizeof(float));
    ps_normalize(&nrm, n);
    ps_direction_to(e->frame.eye, a, n, &view);
    PS_LOOP(i, n) {                               /* two-sided: face the viewer */
        float s = ps_dot(&nrm, &view, i) < 0 ? -1.0f : 1.0f;
        nrm.x[i] *= s;
        nrm.y[i] *= s;
        nrm.z[i] *= s;
    }
    ps_gather_material(e, f, kept, a, &pm);
    PS_LOOP(i, n) {
        c.x[i] = e->ambient * pm.albedo[0][i];
        c.y[i] = e->ambient * pm.albedo[1][i];
        c.z[i] = e->ambient * pm.albedo[2][i];
    }
    for (int k = 0; k < e->nlights; k++) ps_light(&e->lights[k], &pm, a, &nrm, &view, n, &c);
    if (pm.metallic_roughness) ps_metallic_roughness(e, f, a, &view, &pm, &c);
    if (f->linear)
        for (int i = 0; i < n; i++) {
            f->linear[3 * i] = c.x[i];
            f->linear[3 * i + 1] = c.y[i];
            f->linear[3 * i + 2] = c.z[i];
        }
    uint8_t r[SH_PS_MAX], g[SH_PS_MAX], b[SH_PS_MAX];
    const bool avx2 = e->isa == RT_ISA_AVX2;
    sh_srgb8_encode_n(c.x, r, n, avx2);
    sh_srgb8_encode_n(c.y, g, n, avx2);
    sh_srgb8_encode_n(c.z, b, n, avx2);
    PS_LOOP(i, n) rgba[i] = (uint32_t)r[i] | (uint32_t)g[i] << 8 | (uint32_t)b[i] << 16 | 0xff000000u;
}

PS_INLINE void ps_depth(const sh_raster_env *e, float a[RS_ATTRS][SH_PS_MAX], int n, uint32_t *rgba)
{
    const float *f = e->frame.forward, *eye = e->frame.eye;
    for (int i = 0; i < n; i++) {
        float d = (a[0][i] - eye[0]) * f[0] + (a[1][i] - eye[1]) * f[1] + (a[2][i] - eye[2]) * f[2];
        float v = 1.0f - (d - e->near) / (e->far - e->near);
        uint32_t g = (uint32_t)(fminf(fmaxf(v, 0), 1) * 255.0f + 0.5f);
        rgba[i] = g | g << 8 | g << 16 | 0xff000000u;
    }
}

PS_INLINE void ps_normal(float a[RS_ATTRS][SH_PS_MAX], int n, uint32_t *rgba)
{
    ps_vec3 nrm;
    memcpy(nrm.x, a[3], (size_t)n * sizeof(float));
    memcpy(nrm.y, a[4], (size_t)n * sizeof(float));
    memcpy(nrm.z, a[5], (size_t)n * sizeof(float));
    ps_normalize(&nrm, n);
    for (int i = 0; i < n; i++) {
        float v[3] = {nrm.x[i], nrm.y[i], nrm.z[i]};
        uint32_t r = 0;
        for (int k = 0; k < 3; k++) r |= (uint32_t)((v[k] * 0.5f + 0.5f) * 255.0f + 0.5f) << (8 * k);
        rgba[i] = r | 0xff000000u;
    }
}

/* The albedo AOV: the base colour after texturing, unlit, 8-bit linear. */
PS_INLINE void ps_albedo(const sh_raster_env *e, const sh_ps_frags *f, const sh_ps_kept *kept,
                         float a[RS_ATTRS][SH_PS_MAX],
                         uint32_t *rgba)
{
    ps_material pm;
    ps_gather_material(e, f, kept, a, &pm);
    for (int i = 0; i < f->n; i++)
        rgba[i] = (uint32_t)sh_to_linear8(pm.albedo[0][i]) | (uint32_t)sh_to_linear8(pm.albedo[1][i]) << 8 |
                  (uint32_t)sh_to_linear8(pm.albedo[2][i]) << 16 | 0xff000000u;
}

PS_INLINE void ps_packet(const sh_raster_env *e, const sh_ps_frags *f, const sh_ps_kept *kept,
                         uint32_t *rgba)
{
    if (e->aov == SH_AOV_PRIMID) {
        for (int i = 0; i < f->n; i++) {
            uint8_t b[4];
            sh_encode_primid(f->tris[f->tri[i]].prim + 1, b);
            rgba[i] = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | 0xff000000u;
        }
        return;
    }
    float a[RS_ATTRS][SH_PS_MAX];
    ps_interpolate(e, f, a);
    if (e->aov == SH_AOV_DEPTH) ps_depth(e, a, f->n, rgba);
    else if (e->aov == SH_AOV_NORMAL) ps_normal(a, f->n, rgba);
    else if (e->aov == SH_AOV_ALBEDO) ps_albedo(e, f, kept, a, rgba);
    else ps_color(e, f, kept, a, rgba);
}

/* ---- the vertex kernel ----------------------------------------------------------------
 * to_clip, rs_outcode_of and rs_project per vertex, as loops over arrays: the positions
 * are gathered first so the arithmetic loop has none. The projection's constants are
 * to_clip's subexpressions, evaluated the same way. */
#define VS_SNAP_LIMIT 0x1p30f             /* beyond: not a vertex rs_setup_projected uses */

PS_INLINE int32_t vs_snap(float pixels)
{
    float v = rs_subpixels(pixels);
    v = v >= -VS_SNAP_LIMIT && v <= VS_SNAP_LIMIT ? v : 0.0f;   /* also NaN */
    return (int32_t)rintf(v);
}

PS_INLINE void vs_vertices(const sh_raster_env *e, const float *positions, size_t stride, const uint32_t *vertex,
                           int n, int width, int height, sh_vs_vertices *restrict o)
{
    float px[SH_VS_MAX], py[SH_VS_MAX], pz[SH_VS_MAX];
    for (int i = 0; i < n; i++) {
        const float *p = positions + stride * vertex[i];
        px[i] = p[0];
        py[i] = p[1];
        pz[i] = p[2];
    }
    const sc_camera_frame *fr = &e->frame;
    const float ex = fr->eye[0], ey = fr->eye[1], ez = fr->eye[2];
    const float f0 = fr->forward[0], f1 = fr->forward[1], f2 = fr->forward[2];
    const float r0 = fr->right[0], r1 = fr->right[1], r2 = fr->right[2];
    const float u0 = fr->up[0], u1 = fr->up[1], u2 = fr->up[2];
    const float half_w = fr->half_w, half_h = fr->half_h, nr = e->near, fa = e->far;
    const float scale = (fa + nr) / (fa - nr), offset = 2.0f * fa * nr / (fa - nr);
    PS_LOOP(i, n) {
        float d0 = px[i] - ex, d1 = py[i] - ey, d2 = pz[i] - ez;
        float depth = d0 * f0 + d1 * f1 + d2 * f2;
        float c0 = (d0 * r0 + d1 * r1 + d2 * r2) / half_w;
        float c1 = (d0 * u0 + d1 * u1 + d2 * u2) / half_h;
        float c2 = scale * depth - offset;
        o->clip[0][i] = c0;
        o->clip[1][i] = c1;
        o->clip[2][i] = c2;
        o->clip[3][i] = depth;
        o->code[i] = (uint8_t)rs_outcode_of(c0, c1, c2, depth);
        float iw, z, sx, sy;
        rs_project(c0, c1, c2, depth, width, height, &iw, &z, &sx, &sy);
        o->inv_w[i] = iw;
        o->z[i] = z;
        o->x[i] = vs_snap(sx);
        o->y[i] = vs_snap(sy);
    }
}

/* The kernel's bodies: from the interleaved vertex buffer (SH_VERTEX_FLOATS floats a
 * vertex) or from packed positions (3 floats a vertex); the stride a constant in each. */
#define SH_VERTEX_FLOATS (sizeof(sh_vertex) / sizeof(float))

static void vs_vertices_baseline(const sh_raster_env *e, const sh_vertex *vertices, const uint32_t *vertex,
                                 int n, int width, int height, sh_vs_vertices *o)
{
    vs_vertices(e, (const float *)vertices, SH_VERTEX_FLOATS, vertex, n, width, height, o);
}

static void vs_positions_baseline(const sh_raster_env *e, const float *positions, const uint32_t *vertex,
                                  int n, int width, int height, sh_vs_vertices *o)
{
    vs_vertices(e, positions, 3, vertex, n, width, height, o);
}

#if defined(__x86_64__)
__attribute__((target("avx2")))
static void vs_vertices_avx2(const sh_raster_env *e, const sh_vertex *vertices, const uint32_t *vertex,
                             int n, int width, int height, sh_vs_vertices *o)
{
    vs_vertices(e, (const float *)vertices, SH_VERTEX_FLOATS, vertex, n, width, height, o);
}

__attribute__((target("avx2")))
static void vs_positions_avx2(const sh_raster_env *e, const float *positions, const uint32_t *vertex,
                              int n, int width, int height, sh_vs_vertices *o)
{
    vs_vertices(e, positions, 3, vertex, n, width, height, o);
}
#endif

void sh_vs_vertices_of(const sh_raster_env *e, const sh_vertex *vertices, const uint32_t *vertex,
                       int n, int width, int height, sh_vs_vertices *out)
{
#if defined(__x86_64__)
    if (e->isa == RT_ISA_AVX2) {
        vs_vertices_avx2(e, vertices, vertex, n, width, height, out);
        return;
    }
#endif
    vs_vertices_baseline(e, vertices, vertex, n, width, height, out);
}

void sh_vs_positions_of(const sh_raster_env *e, const float *positions, const uint32_t *vertex,
                        int n, int width, int height, sh_vs_vertices *out)
{
#if defined(__x86_64__)
    if (e->isa == RT_ISA_AVX2) {
        vs_positions_avx2(e, positions, vertex, n, width, height, out);
        return;
    }
#endif
    vs_positions_baseline(e, positions, vertex, n, width, height, out);
}

/* One body, compiled for the baseline and, on x86-64, for AVX2; the choice is the
 * env's, made once from the CPU by rt_isa_best (raytracer/isa.h). */
static void ps_packet_baseline(const sh_raster_env *e, const sh_ps_frags *f, const sh_ps_kept *kept,
                               uint32_t *rgba)
{
    ps_packet(e, f, kept, rgba);
}

#if defined(__x86_64__)
__attribute__((target("avx2")))
static void ps_packet_avx2(const sh_raster_env *e, const sh_ps_frags *f, const sh_ps_kept *kept,
                           uint32_t *rgba)
{
    ps_packet(e, f, kept, rgba);
}
#endif

void sh_ps_packet_kept(const sh_raster_env *e, const sh_ps_frags *f, const sh_ps_kept *kept, uint32_t *rgba)
{
#if defined(__x86_64__)
    if (e->isa == RT_ISA_AVX2) {
        ps_packet_avx2(e, f, kept, rgba);
        return;
    }
#endif
    ps_packet_baseline(e, f, kept, rgba);
}

void sh_ps_packet(const sh_raster_env *e, const sh_ps_frags *f, uint32_t *rgba)
{
    sh_ps_packet_kept(e, f, NULL, rgba);
}

uint32_t sh_background(const sh_raster_env *e)
{
    if (e->aov == SH_AOV_COLOR) return pack_rgb(e->background);
    return 0xff000000u;
}
