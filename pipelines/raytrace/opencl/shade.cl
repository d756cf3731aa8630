/* shade.cl — rt.shade's OpenCL kernel: Blinn-Phong at a hit, for scenes whose materials
 * have no textures, no metallic-roughness model and no blending (shade_opencl.c says
 * which it refuses). One work-item per ray; it writes the ambient term, the hit point
 * and normal (the host makes each shadow ray from them, as shaders/ray_shading.c does),
 * each lit light's term and the mirror ray. The host (rt.shade's emit) pushes them.
 *
 * Same bits as shaders/ray_shading.c: every operation in the C order, no contraction
 * into FMAs, divisions and square roots correctly rounded (the build options), and the
 * specular power as shaders/spec_pow.h computes it. */
#pragma OPENCL FP_CONTRACT OFF
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define MAX_LIGHTS 8                  /* scenes/limits.h: SH_MAX_LIGHTS */
#define NO_HIT 0xffffffffu

typedef struct { float org[3]; float tmin; float dir[3]; float tmax; } ray_t;   /* rt_ray */
typedef struct { float t, u, v; uint prim; } hit_t;                        /* rt_hit */
/* pipelines/raytrace/packets.h: plrt_ray (80 bytes) */
typedef struct { ray_t ray; float weight[3]; uint pixel, depth; hit_t hit; float cone[2]; uint layers; } rt_ray_elem;
/* pipelines/raytrace/shade_opencl.h: plrt_shade_material, plrt_shade_info, plrt_shade_result */
typedef struct { float albedo[3], reflectivity, specular, specular_exponent, pad[2]; } material_t;
typedef struct { float position[3], color[3]; } light_t;
typedef struct { uint nmaterials, nlights, ntriangles, has_materials; float ambient, pad[3];
                 light_t lights[MAX_LIGHTS]; } shade_info;
typedef struct { float direct[3], p[3], n[3]; uint lit; uint reflect; ray_t reflected;
                 float reflect_weight[3]; float light_color[MAX_LIGHTS][3]; } shade_result;

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
                       const material_t *m, float *out)
{
    float L[3] = {l->position[0] - p[0], l->position[1] - p[1], l->position[2] - p[2]};
    normalize3(L);
    float ndotl = dot3(n, L);
    if (ndotl <= 0) return 0;
    float h[3] = {L[0] + view[0], L[1] + view[1], L[2] + view[2]};
    normalize3(h);
    float spec = m->specular * spec_pow(fmax(dot3(n, h), 0.0f), m->specular_exponent);
    for (int i = 0; i < 3; i++) out[i] = (m->albedo[i] * ndotl + spec) * l->color[i];
    return 1;
}

kernel void rt_shade(global const rt_ray_elem *rays, uint n, global shade_result *results,
                     global const float *normals, global const uint *indices,
                     global const uint *materials, global const material_t *table,
                     global const shade_info *info)
{
    const size_t i = get_global_id(0);
    if (i >= n) return;
    const rt_ray_elem h = rays[i];
    shade_result r;
    r.lit = 0;
    r.reflect = 0;
    if (h.hit.prim == NO_HIT || h.hit.prim >= info->ntriangles) {   /* the host handles these */
        results[i] = r;
        return;
    }
    const uint mi = info->has_materials ? materials[h.hit.prim] : 0xffffffffu;
    const material_t m = table[mi < info->nmaterials ? mi : info->nmaterials];  /* last: the default */
    float view[3];
    hit_normal(normals, indices, &h, r.n);
    for (int k = 0; k < 3; k++) {
        r.p[k] = h.ray.org[k] + h.hit.t * h.ray.dir[k];
        view[k] = -h.ray.dir[k];
    }
    normalize3(view);
    float unreflected = 1.0f - m.reflectivity, scale[3];
    for (int k = 0; k < 3; k++) {
        scale[k] = h.weight[k] * unreflected;
        r.direct[k] = scale[k] * info->ambient * m.albedo[k];
    }
    for (uint l = 0; l < info->nlights && l < MAX_LIGHTS; l++) {
        const light_t light = info->lights[l];
        float c[3];
        if (!blinn_phong(r.p, r.n, view, &light, &m, c)) continue;
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
    results[i] = r;
}
