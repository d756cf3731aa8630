/* shade.cl — rt.shade's OpenCL kernel: a hit's Blinn-Phong (albedo texture sampled at
 * the ray cone's level of detail) or glTF metallic-roughness shading (every map), for
 * scenes without blended materials (shade_opencl.c says what it refuses). One work-item
 * per ray; it writes the ambient (and emissive) term, each lit light's term, the mirror
 * ray's weight and cone, and the hit's primitive (the host's copy of the hit is stale
 * where Intersect's output stayed on the device), and apart, read back only for a hit
 * whose rays the host makes, the hit point and normal and the mirror direction. Where rt.shadow and rt.intersect run on the device
 * too, it appends the shadow rays and the mirror ray to their queues' device memory
 * (accel/opencl.h, ac_append) and says where; the host (rt.shade's emit) pushes them,
 * making on the host, as shaders/ray_shading.c does, the rays it could not append.
 * Sections: the append, the texture sampler (shaders/texture_sample_body.h), the
 * footprint and texture references, metallic-roughness (shaders/pbr.c), the kernel.
 *
 * Same bits as shaders/ray_shading.c, texture_sample.c and pbr.c: every operation in
 * the C order, no contraction into FMAs, divisions and square roots correctly rounded
 * (the build options), the specular power as shaders/spec_pow.h computes it, and the
 * ray cone's log2f as float(log2(double)), correctly rounded but for values within
 * its error of a float rounding boundary, where glibc's log2f need not be
 * (docs/opencl.md). */
#pragma OPENCL FP_CONTRACT OFF
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define MAX_LIGHTS 8                  /* scenes/limits.h: SH_MAX_LIGHTS */
#define NO_HIT 0xffffffffu

typedef struct { float org[3]; float tmin; float dir[3]; float tmax; } ray_t;   /* rt_ray */
typedef struct { float t, u, v; uint prim; } hit_t;                        /* rt_hit */
/* pipelines/raytrace/packets.h: plrt_ray (80 bytes) */
typedef struct { ray_t ray; float weight[3]; uint pixel, depth; hit_t hit; float cone[2]; uint layers; } rt_ray_elem;
/* pipelines/raytrace/shade_opencl.h: plrt_shade_material, plrt_shade_info, plrt_shade_result */
/* pipelines/raytrace/shade_opencl.h: plrt_shade_texref, plrt_shade_material */
typedef struct { int texture; uint uv_set, wrap_u, wrap_v, filter, transform, lod_scale;
                 float offset[2], scale[2], cos_r, sin_r; uint pad[3]; } texref_t;
enum { MAP_ALBEDO, MAP_METALLIC_ROUGHNESS, MAP_EMISSIVE, MAP_NORMAL, MAP_OCCLUSION, MAPS };
typedef struct { float albedo[3], reflectivity, specular, specular_exponent, metallic, roughness,
                 emissive[3], normal_scale, occlusion_strength; uint metallic_roughness, pad[2];
                 texref_t maps[MAPS]; } material_t;
#define MAX_LEVELS 16                 /* scenes/scene.h: SC_MAX_MIP_LEVELS */
typedef struct { uint nlevels, pad[3]; uint offset[MAX_LEVELS], width[MAX_LEVELS], height[MAX_LEVELS]; } texture_t;
typedef struct { float position[3], color[3]; } light_t;
typedef struct { uint nmaterials, nlights, ntriangles, has_materials; float ambient, eps;
                 uint set1_at, has_uvs, lead_bytes, pad[3]; light_t lights[MAX_LIGHTS]; } shade_info;
/* A work-item's shading: first pipelines/raytrace/shade_opencl.h's plrt_shade_result
 * (`lit` its flags once write_result has added REFLECTS and SPILLS; written up to
 * info->lead_bytes: the lights the scene has), then what plrt_shade_spill takes of it
 * (the point, the normal, the mirror direction; after every result). */
typedef struct { float direct[3]; uint lit, shadow_at, reflect_at, prim; float reflect_cone[2];
                 float reflect_weight[3]; float light_color[MAX_LIGHTS][3];
                 float p[3], n[3]; uint reflect; ray_t reflected; } shade_result;
#define REFLECTS (1u << 8)
#define SPILLS (1u << 9)
#define SPILL_WORDS 9
/* accel/opencl.h: AC_APPEND_SLOTS, the append counter and slots of a launch */
#define APPEND_SLOTS 64
typedef struct { uint counter, limit, per_slot, nslots; uint slots[APPEND_SLOTS]; } append_ctl;

/* The first of `count` positions appended, or NO_HIT when they do not all fit. */
static uint append(global append_ctl *c, uint count)
{
    if (count == 0 || c->limit == 0) return NO_HIT;
    const uint at = atomic_add(&c->counter, count);
    return at <= c->limit - count && count <= c->limit ? at : NO_HIT;
}

static global ray_t *entry(global ray_t *entries, global const append_ctl *c, uint at)
{
    return entries + c->slots[at / c->per_slot] * c->per_slot + at % c->per_slot;
}

/* ray_shading.c's push_shadow and mirror origin: p + n eps, tmin 0. */
static void offset_origin(const shade_result *r, float eps, ray_t *out)
{
    for (int i = 0; i < 3; i++) out->org[i] = r->p[i] + r->n[i] * eps;
    out->tmin = 0.0f;
}

/* The lit lights' shadow rays, in light order, as shade_opencl.c's plrt_shade_result_of
 * makes them; r->shadow_at says where (NO_HIT: the host makes them). */
static void append_shadows(shade_result *r, global const shade_info *info, global ray_t *entries,
                           global append_ctl *c)
{
    r->shadow_at = append(c, popcount(r->lit));
    if (r->shadow_at == NO_HIT) return;
    uint k = 0;
    for (uint l = 0; l < info->nlights && l < MAX_LIGHTS; l++) {
        if (!(r->lit >> l & 1)) continue;
        ray_t s;
        offset_origin(r, info->eps, &s);
        for (int i = 0; i < 3; i++) s.dir[i] = info->lights[l].position[i] - r->p[i];
        s.tmax = 0.9999f;
        *entry(entries, c, r->shadow_at + k++) = s;
    }
}

static void append_reflection(shade_result *r, float eps, global ray_t *entries, global append_ctl *c)
{
    r->reflect_at = append(c, r->reflect ? 1 : 0);
    if (r->reflect_at == NO_HIT) return;
    ray_t m = r->reflected;
    offset_origin(r, eps, &m);
    m.tmax = INFINITY;
    *entry(entries, c, r->reflect_at) = m;
}

static float dot3(const float *a, const float *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void normalize3(float *v)
{
    float l = sqrt(dot3(v, v));
    if (l > 0) { v[0] /= l; v[1] /= l; v[2] /= l; }
}

/* The interpolated normal, unit (pbr.c's sh_surface_in.n), and sh_ray_hit_normal's
 * (the same, facing the ray). */
static void hit_normal(global const float *normals, global const uint *indices, const rt_ray_elem *h,
                       float *interpolated, float *n)
{
    const uint i0 = indices[3 * h->hit.prim], i1 = indices[3 * h->hit.prim + 1],
               i2 = indices[3 * h->hit.prim + 2];
    const float w0 = 1.0f - h->hit.u - h->hit.v;
    for (int i = 0; i < 3; i++)
        n[i] = w0 * normals[3 * i0 + i] + h->hit.u * normals[3 * i1 + i] + h->hit.v * normals[3 * i2 + i];
    normalize3(n);
    for (int i = 0; i < 3; i++) interpolated[i] = n[i];
    if (dot3(n, h->ray.dir) > 0) { n[0] = -n[0]; n[1] = -n[1]; n[2] = -n[2]; }
}

/* ---- the albedo texture, as shaders/texture_sample_body.h samples it ---------------- */

enum { WRAP_REPEAT, WRAP_CLAMP, WRAP_MIRROR };
enum { FILTER_TRILINEAR, FILTER_BILINEAR, FILTER_NEAREST, FILTER_NEAREST_NO_MIPS, FILTER_LINEAR_NO_MIPS };

/* log2f as float(log2(double)): glibc's log2f to within its error (docs/opencl.md). */
static float log2_f(float x) { return (float)log2((double)x); }

static float reduce(float c, uint w)              /* ts_reduce */
{
    if (!isfinite(c)) return 0.0f;
    if (w == WRAP_REPEAT) {
        c -= floor(c);
        return c < 1.0f ? c : 0.0f;
    }
    if (w == WRAP_MIRROR) {
        c -= 2.0f * floor(c * 0.5f);
        return c < 2.0f && c >= 0.0f ? c : 0.0f;
    }
    return c < -1.0f ? -1.0f : c > 2.0f ? 2.0f : c;
}

static int address_any(int i, int n, uint w)      /* ts_address_any */
{
    if (w == WRAP_CLAMP) return i < 0 ? 0 : i >= n ? n - 1 : i;
    if (w == WRAP_MIRROR) {
        int m = i % (2 * n);
        if (m < 0) m += 2 * n;
        return m < n ? m : 2 * n - 1 - m;
    }
    int m = i % n;
    return m < 0 ? m + n : m;
}

static int address(int i, int n, uint w)          /* ts_address */
{
    if (w == WRAP_REPEAT) {
        if (i < 0) i += n;
        else if (i >= n) i -= n;
        if (i >= 0 && i < n) return i;
    } else if (w == WRAP_MIRROR && i >= -1 && i <= 2 * n) {
        int m = i < 0 ? i + 2 * n : i >= 2 * n ? i - 2 * n : i;
        return m < n ? m : 2 * n - 1 - m;
    }
    return address_any(i, n, w);
}

/* Level l of texture t: its texels (rows top first), width and height. */
typedef struct { global const uchar4 *rgba; int width, height; } level_t;

static level_t level_of(global const uchar4 *texels, global const texture_t *t, int l)
{
    level_t v = {texels + t->offset[l], (int)t->width[l], (int)t->height[l]};
    return v;
}

static float4 texel4(const level_t *l, int x, int y)   /* ts_texel4 at (x, y), addressed */
{
    return convert_float4(l->rgba[(size_t)y * (size_t)l->width + (size_t)x]);
}

static float4 nearest(const level_t *l, const texref_t *m, float u, float v)    /* ts_nearest */
{
    const float x = reduce(u, m->wrap_u) * (float)l->width, y = reduce(v, m->wrap_v) * (float)l->height;
    const int tx = address((int)floor(x), l->width, m->wrap_u);
    const int ty = l->height - 1 - address((int)floor(y), l->height, m->wrap_v);
    return texel4(l, tx, ty) / 255.0f;
}

static float4 bilinear(const level_t *l, const texref_t *m, float ru, float rv)  /* ts_bilinear4 */
{
    const float x = ru * (float)l->width - 0.5f, y = rv * (float)l->height - 0.5f;
    const float fx0 = floor(x), fy0 = floor(y);
    const int x0 = (int)fx0, y0 = (int)fy0;
    const float ax = x - fx0, ay = y - fy0;
    const int xa = address(x0, l->width, m->wrap_u), xb = address(x0 + 1, l->width, m->wrap_u);
    const int ya = l->height - 1 - address(y0, l->height, m->wrap_v);
    const int yb = l->height - 1 - address(y0 + 1, l->height, m->wrap_v);
    const float4 a = texel4(l, xa, ya), b = texel4(l, xb, ya), c = texel4(l, xa, yb), d = texel4(l, xb, yb);
    const float4 lower = a + ax * (b - a), upper = c + ax * (d - c);
    return (lower + ay * (upper - lower)) / 255.0f;
}

static float4 sample(global const uchar4 *texels, global const texture_t *t, const texref_t *m,
                     float u, float v, float lod)         /* sh_texture_sample_inline */
{
    const int top = (int)t->nlevels - 1;
    if (!isfinite(lod)) lod = 0.0f;
    const float l = lod < 0.0f ? 0.0f : lod > (float)top ? (float)top : lod;
    level_t lv;
    switch (m->filter) {
    case FILTER_NEAREST_NO_MIPS: lv = level_of(texels, t, 0); return nearest(&lv, m, u, v);
    case FILTER_LINEAR_NO_MIPS:
        lv = level_of(texels, t, 0);
        return bilinear(&lv, m, reduce(u, m->wrap_u), reduce(v, m->wrap_v));
    case FILTER_NEAREST: lv = level_of(texels, t, (int)floor(l + 0.5f)); return nearest(&lv, m, u, v);
    case FILTER_BILINEAR:
        lv = level_of(texels, t, (int)floor(l + 0.5f));
        return bilinear(&lv, m, reduce(u, m->wrap_u), reduce(v, m->wrap_v));
    default: break;
    }
    const int l0 = (int)floor(l);
    const float f = l - (float)l0;
    const float ru = reduce(u, m->wrap_u), rv = reduce(v, m->wrap_v);
    lv = level_of(texels, t, l0);
    float4 r = bilinear(&lv, m, ru, rv);
    if (f != 0.0f && l0 != top) {
        level_t next = level_of(texels, t, l0 + 1);
        r += f * (bilinear(&next, m, ru, rv) - r);
    }
    return r;
}

/* sh_texture_cone_lod, with sh_surface_lod's scaled area. */
static float cone_lod(global const texture_t *t, const texref_t *m, float uv_area, float world_area,
                      float width, float cos_theta)
{
    if (m->lod_scale) uv_area *= fabs(m->scale[0] * m->scale[1]);
    const float texels = fabs(uv_area) * (float)t->width[0] * (float)t->height[0];
    const float c = fabs(cos_theta);
    if (!(texels > 0.0f) || !(world_area > 0.0f) || !(width > 0.0f) || !(c > 0.0f)) return 0.0f;
    const float lod = 0.5f * log2_f(texels / world_area) + log2_f(width / c);
    return isfinite(lod) ? lod : 0.0f;
}

/* The scene's device data the shading reads. */
typedef struct {
    global const float *normals, *positions, *uvs;
    global const uint *indices;
    global const uchar4 *texels;
    global const texture_t *textures;
    global const shade_info *info;
} scene_t;

/* What a hit's texture lookups need (ray_shading.c's hit_footprint, pbr.c's
 * sh_surface_in_of_hit): the triangle's corners, the interpolated coordinates of both
 * sets (set 1 = set 0 without one; zeros without coordinates), twice their uv areas, and
 * the cone's footprint. */
typedef struct {
    float p[3][3], q[3][2], q1[3][2];
    float uv[2], uv1[2], area, area1, world2, width, cos_theta;
} hit_in;

static float uv_area2(const float q[3][2])
{
    return (q[1][0] - q[0][0]) * (q[2][1] - q[0][1]) - (q[2][0] - q[0][0]) * (q[1][1] - q[0][1]);
}

static void hit_in_of(const scene_t *sc, const rt_ray_elem *h, hit_in *in)
{
    const uint prim = h->hit.prim, set1 = sc->info->set1_at;
    for (int k = 0; k < 3; k++) {
        const uint v = sc->indices[3 * prim + k];
        for (int i = 0; i < 3; i++) in->p[k][i] = sc->positions[3 * v + i];
        for (int i = 0; i < 2; i++) {
            in->q[k][i] = sc->info->has_uvs ? sc->uvs[2 * v + i] : 0.0f;
            in->q1[k][i] = set1 ? sc->uvs[set1 + 2 * v + i] : in->q[k][i];
        }
    }
    const float w0 = 1.0f - h->hit.u - h->hit.v;
    for (int i = 0; i < 2; i++) {
        in->uv[i] = w0 * in->q[0][i] + h->hit.u * in->q[1][i] + h->hit.v * in->q[2][i];
        in->uv1[i] = w0 * in->q1[0][i] + h->hit.u * in->q1[1][i] + h->hit.v * in->q1[2][i];
    }
    float e1[3], e2[3], g[3];
    for (int i = 0; i < 3; i++) { e1[i] = in->p[1][i] - in->p[0][i]; e2[i] = in->p[2][i] - in->p[0][i]; }
    g[0] = e1[1] * e2[2] - e1[2] * e2[1];
    g[1] = e1[2] * e2[0] - e1[0] * e2[2];
    g[2] = e1[0] * e2[1] - e1[1] * e2[0];
    in->world2 = sqrt(dot3(g, g));
    const float dlen = sqrt(dot3(h->ray.dir, h->ray.dir));
    in->area = uv_area2(in->q);
    in->area1 = uv_area2(in->q1);
    in->width = h->cone[0] + h->cone[1] * h->hit.t;                     /* rt_cone_width_at */
    in->cos_theta = dot3(g, h->ray.dir) / (in->world2 * dlen);
}

/* Texture reference m at the hit (pbr.c's sample, ray_shading.c's surface_of): its set's
 * coordinates through its transform, at its own level of detail. */
static float4 sample_ref(const scene_t *sc, const texref_t *m, const hit_in *in)
{
    global const texture_t *t = &sc->textures[m->texture];
    const float lod = cone_lod(t, m, m->uv_set ? in->area1 : in->area, in->world2, in->width, in->cos_theta);
    float u = m->uv_set ? in->uv1[0] : in->uv[0], v = m->uv_set ? in->uv1[1] : in->uv[1];
    if (m->transform) {                                                 /* sh_texture_transform */
        const float su = m->scale[0] * u, sv = m->scale[1] * v;
        u = m->offset[0] + m->cos_r * su + m->sin_r * sv;
        v = m->offset[1] - m->sin_r * su + m->cos_r * sv;
    }
    return sample(sc->texels, t, m, u, v, lod);
}

/* shaders/spec_pow.h: sh_pow_log2, sh_pow_exp2, sh_spec_pow, operation for operation. */
static float pow_log2(float x)
{
    const uint bits = as_uint(x);
    const int big = (bits & 0x7fffffu) > 0x3504f3u;
    const int k = (int)(bits >> 23) - 127 + big;
    const float m = as_float((bits & 0x7fffffu) | (big ? 0x3f000000u : 0x3f800000u));
    const float t = (m - 1.0f) / (m + 1.0f), s = t * t;
    const float series = 2.8853900818f + s * (0.9617966939f + s * (0.5770780164f +
                         s * (0.4121985831f + s * 0.3205988979f)));
    return (float)k + t * series;
}

static float pow_exp2(float y)
{
    const float r = (y + 0x1.8p23f) - 0x1.8p23f;
    const float f = y - r;
    const float p = 1.0f + f * (0.6931471806f + f * (0.2402265070f + f * (0.0555041087f +
                    f * (0.0096181291f + f * (0.0013333558f + f * (0.0001540353f +
                    f * 0.0000152527f))))));
    return p * as_float((uint)((int)r + 127) << 23);
}

static float spec_pow(float x, float e)
{
    const int positive = x >= 0x1p-126f && x <= 0x1.fffffep127f;
    float y = e * pow_log2(positive ? x : 1.0f);
    const int vanishes = !positive || y < -125.0f;
    y = y < -125.0f ? -125.0f : y > 127.0f ? 127.0f : y;
    const float p = pow_exp2(y);
    return e == 0.0f ? 1.0f : vanishes ? 0.0f : p;
}

/* sh_blinn_phong: false when the light is behind the surface. */
static int blinn_phong(const float *p, const float *n, const float *view, const light_t *l,
                       const material_t *m, const float *albedo, float *out)
{
    float L[3] = {l->position[0] - p[0], l->position[1] - p[1], l->position[2] - p[2]};
    normalize3(L);
    float ndotl = dot3(n, L);
    if (ndotl <= 0) return 0;
    float h[3] = {L[0] + view[0], L[1] + view[1], L[2] + view[2]};
    normalize3(h);
    float spec = m->specular * spec_pow(fmax(dot3(n, h), 0.0f), m->specular_exponent);
    for (int i = 0; i < 3; i++) out[i] = (albedo[i] * ndotl + spec) * l->color[i];
    return 1;
}

/* ---- metallic-roughness, as shaders/pbr.c -------------------------------------------- */

#define PBR_PI 3.14159265358979f
#define MIN_ROUGHNESS 0.045f          /* shaders/pbr.h: SH_PBR_MIN_ROUGHNESS */

static float clamp01(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }   /* NaN -> 0 */

static void cross3(const float *a, const float *b, float *c)
{
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

static int finite3(const float *v) { return isfinite(v[0]) && isfinite(v[1]) && isfinite(v[2]); }

/* sh_triangle_tangent: zero (false) without a usable frame. */
static int triangle_tangent(const float p[3][3], const float uv[3][2], float *t, float *b)
{
    const float du1 = uv[1][0] - uv[0][0], dv1 = uv[1][1] - uv[0][1];
    const float du2 = uv[2][0] - uv[0][0], dv2 = uv[2][1] - uv[0][1];
    const float det = du1 * dv2 - du2 * dv1;
    for (int i = 0; i < 3; i++) t[i] = b[i] = 0.0f;
    if (!(fabs(det) > 0.0f) || !isfinite(det)) return 0;
    const float r = 1.0f / det;
    float tt[3], bb[3];
    for (int i = 0; i < 3; i++) {
        const float e1 = p[1][i] - p[0][i], e2 = p[2][i] - p[0][i];
        tt[i] = (e1 * dv2 - e2 * dv1) * r;
        bb[i] = (e2 * du1 - e1 * du2) * r;
    }
    if (!finite3(tt) || !finite3(bb)) return 0;
    for (int i = 0; i < 3; i++) { t[i] = tt[i]; b[i] = bb[i]; }
    return 1;
}

/* pbr.c's mapped_normal: the normal map's texel in the frame (T, B, N). */
static int mapped_normal(const float *N, const float *tangent, const float *bitangent, float4 texel,
                         float scale, float *n)
{
    float T[3], B[3];
    const float d = dot3(tangent, N);
    for (int i = 0; i < 3; i++) T[i] = tangent[i] - d * N[i];
    const float len = sqrt(dot3(T, T));
    if (!(len > 0.0f) || !isfinite(len)) return 0;
    for (int i = 0; i < 3; i++) T[i] /= len;
    cross3(N, T, B);
    if (dot3(B, bitangent) < 0.0f)
        for (int i = 0; i < 3; i++) B[i] = -B[i];
    const float x = (2.0f * texel.x - 1.0f) * scale, y = (2.0f * texel.y - 1.0f) * scale;
    const float z = 2.0f * texel.z - 1.0f;
    for (int i = 0; i < 3; i++) n[i] = x * T[i] + y * B[i] + z * N[i];
    const float l = sqrt(dot3(n, n));
    if (!(l > 0.0f) || !isfinite(l)) return 0;
    for (int i = 0; i < 3; i++) n[i] /= l;
    return 1;
}

typedef struct { float base[3], metallic, roughness, emissive[3], occlusion, n[3]; } surface_t;

/* sh_surface_gather at the hit: N the interpolated normal, facing +1 or -1. */
static void gather(const scene_t *sc, const material_t *m, const hit_in *in, const float *N, float facing,
                   surface_t *s)
{
    const texref_t *maps = m->maps;
    float4 t;
    int has = maps[MAP_ALBEDO].texture >= 0;
    if (has) t = sample_ref(sc, &maps[MAP_ALBEDO], in);
    s->base[0] = has ? m->albedo[0] * t.x : m->albedo[0];
    s->base[1] = has ? m->albedo[1] * t.y : m->albedo[1];
    s->base[2] = has ? m->albedo[2] * t.z : m->albedo[2];
    has = maps[MAP_METALLIC_ROUGHNESS].texture >= 0;
    if (has) t = sample_ref(sc, &maps[MAP_METALLIC_ROUGHNESS], in);
    s->metallic = clamp01(has ? m->metallic * t.z : m->metallic);
    s->roughness = clamp01(has ? m->roughness * t.y : m->roughness);
    has = maps[MAP_EMISSIVE].texture >= 0;
    if (has) t = sample_ref(sc, &maps[MAP_EMISSIVE], in);
    s->emissive[0] = has ? m->emissive[0] * t.x : m->emissive[0];
    s->emissive[1] = has ? m->emissive[1] * t.y : m->emissive[1];
    s->emissive[2] = has ? m->emissive[2] * t.z : m->emissive[2];
    has = maps[MAP_OCCLUSION].texture >= 0;
    if (has) t = sample_ref(sc, &maps[MAP_OCCLUSION], in);
    s->occlusion = has ? 1.0f + m->occlusion_strength * (t.x - 1.0f) : 1.0f;
    int mapped = 0;
    if (maps[MAP_NORMAL].texture >= 0) {
        float tangent[3], bitangent[3];
        triangle_tangent(in->p, maps[MAP_NORMAL].uv_set ? in->q1 : in->q, tangent, bitangent);
        mapped = mapped_normal(N, tangent, bitangent, sample_ref(sc, &maps[MAP_NORMAL], in),
                               m->normal_scale, s->n);
    }
    for (int i = 0; i < 3; i++) s->n[i] = (mapped ? s->n[i] : N[i]) * facing;
}

static float f0_of(float base, float metallic) { return 0.04f + (base - 0.04f) * metallic; }
static float cdiff_of(float base, float metallic) { return base * (1.0f - metallic); }

static void pbr_brdf(const surface_t *s, const float *l, const float *v, float *f)     /* sh_pbr_brdf */
{
    const float nl = clamp01(dot3(s->n, l)), nv = clamp01(dot3(s->n, v));
    f[0] = f[1] = f[2] = 0.0f;
    if (!(nl > 0.0f) || !(nv > 0.0f)) return;
    float h[3] = {l[0] + v[0], l[1] + v[1], l[2] + v[2]};
    normalize3(h);
    const float nh = clamp01(dot3(s->n, h));
    const float vh = clamp01(0.5f * (fabs(dot3(v, h)) + fabs(dot3(l, h))));
    const float r = s->roughness > MIN_ROUGHNESS ? fmin(s->roughness, 1.0f) : MIN_ROUGHNESS;
    const float a = r * r, a2 = a * a;
    float nxh[3];
    cross3(s->n, h, nxh);
    const float k = dot3(nxh, nxh) + nh * nh * a2;
    const float D = a2 / (PBR_PI * k * k);
    const float vis = 0.5f / (nl * sqrt(nv * nv * (1.0f - a2) + a2) + nv * sqrt(nl * nl * (1.0f - a2) + a2));
    const float x = 1.0f - vh, x2 = x * x, fres = x2 * x2 * x;
    const float metal = clamp01(s->metallic);
    for (int c = 0; c < 3; c++) {
        const float f0 = f0_of(s->base[c], metal);
        const float F = f0 + (1.0f - f0) * fres;
        f[c] = (1.0f - F) * cdiff_of(s->base[c], metal) / PBR_PI + F * D * vis;
    }
}

static int pbr_light(const surface_t *s, const float *p, const float *view, const light_t *l, float *out)
{
    float L[3] = {l->position[0] - p[0], l->position[1] - p[1], l->position[2] - p[2]};
    normalize3(L);
    const float nl = dot3(s->n, L);
    if (!(nl > 0.0f)) return 0;
    float f[3];
    pbr_brdf(s, L, view, f);
    for (int c = 0; c < 3; c++) out[c] = PBR_PI * f[c] * nl * l->color[c];
    return 1;
}

static void pbr_ambient(const surface_t *s, float ambient, float *out)
{
    const float metal = clamp01(s->metallic), a = ambient * s->occlusion;
    for (int c = 0; c < 3; c++) {
        const float f0 = f0_of(s->base[c], metal);
        out[c] = a * (cdiff_of(s->base[c], metal) * (1.0f - f0) + f0);
    }
}

static void pbr_reflectance(const surface_t *s, const float *view, float *w)
{
    const float x = 1.0f - clamp01(dot3(s->n, view)), x2 = x * x, fres = x2 * x2 * x;
    const float gloss = 1.0f - clamp01(s->roughness), metal = clamp01(s->metallic);
    for (int c = 0; c < 3; c++) {
        const float f0 = f0_of(s->base[c], metal);
        w[c] = (f0 + (1.0f - f0) * fres) * gloss * gloss;
    }
}

/* ray_shading.c's mirror(): the direction of -view about normal r. */
static void mirror_dir(const float *view, const float *r, float *dir)
{
    const float d[3] = {-view[0], -view[1], -view[2]};
    const float dn = dot3(d, r);
    for (int k = 0; k < 3; k++) dir[k] = d[k] - 2.0f * dn * r[k];
}

/* ray_shading.c's shade_metallic_roughness; r->p and r->n (facing the ray) are set. */
static void shade_metallic_roughness(const scene_t *sc, const rt_ray_elem *h, const material_t *m,
                                     const float *N, const float *view, shade_result *r)
{
    hit_in in;
    hit_in_of(sc, h, &in);
    surface_t s;
    gather(sc, m, &in, N, dot3(N, h->ray.dir) > 0 ? -1.0f : 1.0f, &s);
    float amb[3], rw[3];
    pbr_ambient(&s, sc->info->ambient, amb);
    for (int c = 0; c < 3; c++) r->direct[c] = h->weight[c] * (amb[c] + s.emissive[c]);
    for (uint l = 0; l < sc->info->nlights && l < MAX_LIGHTS; l++) {
        const light_t light = sc->info->lights[l];
        float c[3];
        if (!pbr_light(&s, r->p, view, &light, c)) continue;
        r->lit |= 1u << l;
        for (int k = 0; k < 3; k++) r->light_color[l][k] = h->weight[k] * c[k];
    }
    pbr_reflectance(&s, view, rw);
    r->reflect = rw[0] > 0 || rw[1] > 0 || rw[2] > 0;
    if (!r->reflect) return;
    mirror_dir(view, s.n, r->reflected.dir);
    if (dot3(r->reflected.dir, r->n) <= 0.0f) mirror_dir(view, r->n, r->reflected.dir);
    for (int k = 0; k < 3; k++) r->reflect_weight[k] = h->weight[k] * rw[k];
}

/* ray_shading.c's Blinn-Phong; r->p and r->n are set. */
static void shade_blinn_phong(const scene_t *sc, const rt_ray_elem *h, const material_t *m,
                              const float *view, shade_result *r)
{
    float albedo[3] = {m->albedo[0], m->albedo[1], m->albedo[2]};
    if (m->maps[MAP_ALBEDO].texture >= 0) {
        hit_in in;
        hit_in_of(sc, h, &in);
        const float4 t = sample_ref(sc, &m->maps[MAP_ALBEDO], &in);
        albedo[0] *= t.x;
        albedo[1] *= t.y;
        albedo[2] *= t.z;
    }
    const float unreflected = 1.0f - m->reflectivity;
    float scale[3];
    for (int k = 0; k < 3; k++) {
        scale[k] = h->weight[k] * unreflected;
        r->direct[k] = scale[k] * sc->info->ambient * albedo[k];
    }
    for (uint l = 0; l < sc->info->nlights && l < MAX_LIGHTS; l++) {
        const light_t light = sc->info->lights[l];
        float c[3];
        if (!blinn_phong(r->p, r->n, view, &light, m, albedo, c)) continue;
        r->lit |= 1u << l;
        for (int k = 0; k < 3; k++) r->light_color[l][k] = scale[k] * c[k];
    }
    r->reflect = m->reflectivity > 0;
    if (!r->reflect) return;
    mirror_dir(view, r->n, r->reflected.dir);      /* the origin is made with the shadow rays' */
    for (int k = 0; k < 3; k++) r->reflect_weight[k] = h->weight[k] * m->reflectivity;
}

/* raytracer/ray.h's rt_cone_at_hit for the mirror ray: the cone's width at the hit and
 * its spread per unit of the new ray's t, in the C order (the host reads them from the
 * result: a hit that stayed on the device has a stale ray and hit on the host). */
static void reflect_cone(const rt_ray_elem *h, shade_result *r)
{
    const float *d = r->reflected.dir, *o = h->ray.dir;
    r->reflect_cone[0] = h->cone[0] + h->cone[1] * h->hit.t;
    if (d[0] == o[0] && d[1] == o[1] && d[2] == o[2]) {
        r->reflect_cone[1] = h->cone[1];
        return;
    }
    const float lr = o[0] * o[0] + o[1] * o[1] + o[2] * o[2];
    const float ln = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    r->reflect_cone[1] = h->cone[1] * sqrt(ln / lr);
}

/* Whether the host makes one of r's rays: a lit light's or the mirror's not appended. */
static bool spills(const shade_result *r)
{
    return (r->lit && r->shadow_at == NO_HIT) || (r->reflect && r->reflect_at == NO_HIT);
}

/* Result i of n: the first `bytes` of r (a multiple of 4) at i * bytes, its spill after
 * all n results (accel/opencl.h, ac_launch.spill_bytes). */
static void write_result(global uint *results, uint bytes, uint n, size_t i, shade_result *r)
{
    r->lit |= (r->reflect ? REFLECTS : 0) | (spills(r) ? SPILLS : 0);
    const uint *from = (const uint *)r;
    global uint *to = results + i * (bytes / 4);
    for (uint k = 0; k < bytes / 4; k++) to[k] = from[k];
    global float *spill = (global float *)(results + (size_t)n * (bytes / 4) + i * SPILL_WORDS);
    for (int k = 0; k < 3; k++) {
        spill[k] = r->p[k];
        spill[3 + k] = r->n[k];
        spill[6 + k] = r->reflected.dir[k];
    }
}

kernel void rt_shade(global const rt_ray_elem *rays, uint n, global uint *results,
                     global const float *normals, global const uint *indices,
                     global const uint *materials, global const material_t *table,
                     global const shade_info *info, global const float *positions,
                     global const float *uvs, global const uchar4 *texels,
                     global const texture_t *textures, global ray_t *shadow_entries,
                     global append_ctl *shadow_ctl, global ray_t *reflect_entries,
                     global append_ctl *reflect_ctl)
{
    const size_t i = get_global_id(0);
    if (i >= n) return;
    const rt_ray_elem h = rays[i];
    shade_result r;
    r.lit = 0;
    r.reflect = 0;
    r.shadow_at = r.reflect_at = NO_HIT;
    r.prim = h.hit.prim;
    if (h.hit.prim == NO_HIT || h.hit.prim >= info->ntriangles) {   /* the host handles these */
        write_result(results, info->lead_bytes, n, i, &r);
        return;
    }
    const scene_t sc = {normals, positions, uvs, indices, texels, textures, info};
    const uint mi = info->has_materials ? materials[h.hit.prim] : 0xffffffffu;
    const material_t m = table[mi < info->nmaterials ? mi : info->nmaterials];  /* last: the default */
    float view[3], interpolated[3];
    hit_normal(normals, indices, &h, interpolated, r.n);
    for (int k = 0; k < 3; k++) {
        r.p[k] = h.ray.org[k] + h.hit.t * h.ray.dir[k];
        view[k] = -h.ray.dir[k];
    }
    normalize3(view);
    if (m.metallic_roughness) shade_metallic_roughness(&sc, &h, &m, interpolated, view, &r);
    else shade_blinn_phong(&sc, &h, &m, view, &r);
    if (r.reflect) reflect_cone(&h, &r);
    append_shadows(&r, info, shadow_entries, shadow_ctl);
    append_reflection(&r, info->eps, reflect_entries, reflect_ctl);
    write_result(results, info->lead_bytes, n, i, &r);
}
