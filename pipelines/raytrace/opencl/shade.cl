/* shade.cl — rt.shade's OpenCL kernel: Blinn-Phong at a hit, albedo textures sampled at
 * the ray cone's level of detail, for scenes whose materials have no metallic-roughness
 * model and no blending (shade_opencl.c says which it refuses). One work-item per ray; it writes the ambient term, the hit point
 * and normal, each lit light's term and the mirror ray. Where rt.shadow and
 * rt.intersect run on the device too, it appends the shadow rays and the mirror ray
 * to their queues' device memory (accel/opencl.h, ac_append) and says where; the host
 * (rt.shade's emit) pushes them, making on the host, as shaders/ray_shading.c does, the
 * rays it could not append.
 *
 * Same bits as shaders/ray_shading.c: every operation in the C order, no contraction
 * into FMAs, divisions and square roots correctly rounded (the build options), and
 * powf as float(pow(double, double)), which rounds as glibc's powf does except where the
 * double result lies within its error of a float rounding boundary (docs/opencl.md). */
#pragma OPENCL FP_CONTRACT OFF
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define MAX_LIGHTS 8                  /* scenes/limits.h: SH_MAX_LIGHTS */
#define NO_HIT 0xffffffffu

typedef struct { float org[3]; float tmin; float dir[3]; float tmax; } ray_t;   /* rt_ray */
typedef struct { float t, u, v; uint prim; } hit_t;                        /* rt_hit */
/* pipelines/raytrace/packets.h: plrt_ray (80 bytes) */
typedef struct { ray_t ray; float weight[3]; uint pixel, depth; hit_t hit; float cone[2]; uint layers; } rt_ray_elem;
/* pipelines/raytrace/shade_opencl.h: plrt_shade_material, plrt_shade_info, plrt_shade_result */
typedef struct { float albedo[3], reflectivity, specular, specular_exponent;
                 int texture; uint uv_set, wrap_u, wrap_v, filter, transform;
                 float offset[2], scale[2], cos_r, sin_r; uint lod_scale; float pad; } material_t;
#define MAX_LEVELS 16                 /* scenes/scene.h: SC_MAX_MIP_LEVELS */
typedef struct { uint nlevels, pad[3]; uint offset[MAX_LEVELS], width[MAX_LEVELS], height[MAX_LEVELS]; } texture_t;
typedef struct { float position[3], color[3]; } light_t;
typedef struct { uint nmaterials, nlights, ntriangles, has_materials; float ambient, eps;
                 uint set1_at, pad; light_t lights[MAX_LIGHTS]; } shade_info;
typedef struct { float direct[3], p[3], n[3]; uint lit; uint reflect; ray_t reflected;
                 float reflect_weight[3]; float light_color[MAX_LIGHTS][3];
                 uint shadow_at, reflect_at; } shade_result;
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

/* sh_ray_hit_normal: interpolated, unit, facing the ray. */
static void hit_normal(global const float *normals, global const uint *indices, const rt_ray_elem *h,
                       float *n)
{
    const uint i0 = indices[3 * h->hit.prim], i1 = indices[3 * h->hit.prim + 1],
               i2 = indices[3 * h->hit.prim + 2];
    const float w0 = 1.0f - h->hit.u - h->hit.v;
    for (int i = 0; i < 3; i++)
        n[i] = w0 * normals[3 * i0 + i] + h->hit.u * normals[3 * i1 + i] + h->hit.v * normals[3 * i2 + i];
    normalize3(n);
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

static float4 nearest(const level_t *l, const material_t *m, float u, float v)    /* ts_nearest */
{
    const float x = reduce(u, m->wrap_u) * (float)l->width, y = reduce(v, m->wrap_v) * (float)l->height;
    const int tx = address((int)floor(x), l->width, m->wrap_u);
    const int ty = l->height - 1 - address((int)floor(y), l->height, m->wrap_v);
    return texel4(l, tx, ty) / 255.0f;
}

static float4 bilinear(const level_t *l, const material_t *m, float ru, float rv)  /* ts_bilinear4 */
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

static float4 sample(global const uchar4 *texels, global const texture_t *t, const material_t *m,
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
static float cone_lod(global const texture_t *t, const material_t *m, float uv_area, float world_area,
                      float width, float cos_theta)
{
    if (m->lod_scale) uv_area *= fabs(m->scale[0] * m->scale[1]);
    const float texels = fabs(uv_area) * (float)t->width[0] * (float)t->height[0];
    const float c = fabs(cos_theta);
    if (!(texels > 0.0f) || !(world_area > 0.0f) || !(width > 0.0f) || !(c > 0.0f)) return 0.0f;
    const float lod = 0.5f * log2_f(texels / world_area) + log2_f(width / c);
    return isfinite(lod) ? lod : 0.0f;
}

/* ray_shading.c's surface_of for a textured material: the albedo times the texel at the
 * hit's coordinates, at the ray cone's level of detail (hit_footprint). */
static void albedo_of(const rt_ray_elem *h, const material_t *m, global const float *positions,
                      global const uint *indices, global const float *uvs, global const uchar4 *texels,
                      global const texture_t *textures, uint set1_at, float *rgb)
{
    global const texture_t *t = &textures[m->texture];
    global const float *tc = uvs + (m->uv_set ? set1_at : 0);
    const uint prim = h->hit.prim;
    float p[3][3], q[3][2];
    for (int k = 0; k < 3; k++) {
        const uint v = indices[3 * prim + k];
        for (int i = 0; i < 3; i++) p[k][i] = positions[3 * v + i];
        for (int i = 0; i < 2; i++) q[k][i] = tc[2 * v + i];
    }
    const float w0 = 1.0f - h->hit.u - h->hit.v;
    float uv[2];
    for (int i = 0; i < 2; i++) uv[i] = w0 * q[0][i] + h->hit.u * q[1][i] + h->hit.v * q[2][i];
    float e1[3], e2[3], g[3];
    for (int i = 0; i < 3; i++) { e1[i] = p[1][i] - p[0][i]; e2[i] = p[2][i] - p[0][i]; }
    g[0] = e1[1] * e2[2] - e1[2] * e2[1];
    g[1] = e1[2] * e2[0] - e1[0] * e2[2];
    g[2] = e1[0] * e2[1] - e1[1] * e2[0];
    const float world2 = sqrt(dot3(g, g));
    const float dlen = sqrt(dot3(h->ray.dir, h->ray.dir));
    const float uv_area = (q[1][0] - q[0][0]) * (q[2][1] - q[0][1]) - (q[2][0] - q[0][0]) * (q[1][1] - q[0][1]);
    const float width = h->cone[0] + h->cone[1] * h->hit.t;           /* rt_cone_width_at */
    const float lod = cone_lod(t, m, uv_area, world2, width, dot3(g, h->ray.dir) / (world2 * dlen));
    float u = uv[0], v = uv[1];
    if (m->transform) {                                                 /* sh_texture_transform */
        const float su = m->scale[0] * u, sv = m->scale[1] * v;
        u = m->offset[0] + m->cos_r * su + m->sin_r * sv;
        v = m->offset[1] - m->sin_r * su + m->cos_r * sv;
    }
    const float4 texel = sample(texels, t, m, u, v, lod);
    rgb[0] *= texel.x;
    rgb[1] *= texel.y;
    rgb[2] *= texel.z;
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
    float spec = m->specular * (float)pow((double)fmax(dot3(n, h), 0.0f), (double)m->specular_exponent);
    for (int i = 0; i < 3; i++) out[i] = (albedo[i] * ndotl + spec) * l->color[i];
    return 1;
}

kernel void rt_shade(global const rt_ray_elem *rays, uint n, global shade_result *results,
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
    if (h.hit.prim == NO_HIT || h.hit.prim >= info->ntriangles) {   /* the host handles these */
        results[i] = r;
        return;
    }
    const uint mi = info->has_materials ? materials[h.hit.prim] : 0xffffffffu;
    const material_t m = table[mi < info->nmaterials ? mi : info->nmaterials];  /* last: the default */
    float view[3], albedo[3] = {m.albedo[0], m.albedo[1], m.albedo[2]};
    if (m.texture >= 0) albedo_of(&h, &m, positions, indices, uvs, texels, textures, info->set1_at, albedo);
    hit_normal(normals, indices, &h, r.n);
    for (int k = 0; k < 3; k++) {
        r.p[k] = h.ray.org[k] + h.hit.t * h.ray.dir[k];
        view[k] = -h.ray.dir[k];
    }
    normalize3(view);
    float unreflected = 1.0f - m.reflectivity, scale[3];
    for (int k = 0; k < 3; k++) {
        scale[k] = h.weight[k] * unreflected;
        r.direct[k] = scale[k] * info->ambient * albedo[k];
    }
    for (uint l = 0; l < info->nlights && l < MAX_LIGHTS; l++) {
        const light_t light = info->lights[l];
        float c[3];
        if (!blinn_phong(r.p, r.n, view, &light, &m, albedo, c)) continue;
        r.lit |= 1u << l;
        for (int k = 0; k < 3; k++) r.light_color[l][k] = scale[k] * c[k];
    }
    r.reflect = m.reflectivity > 0;
    if (r.reflect) {
        /* shaders/ray_shading.c: mirror(), about the normal; the origin is the host's */
        float d[3] = {-view[0], -view[1], -view[2]};
        float dn = dot3(d, r.n);
        for (int k = 0; k < 3; k++) r.reflected.dir[k] = d[k] - 2.0f * dn * r.n[k];
        for (int k = 0; k < 3; k++) r.reflect_weight[k] = h.weight[k] * m.reflectivity;
    }
    append_shadows(&r, info, shadow_entries, shadow_ctl);
    append_reflection(&r, info->eps, reflect_entries, reflect_ctl);
    results[i] = r;
}
