/* shade.cl — rt.shade's OpenCL kernel: Blinn-Phong at a hit, for scenes whose materials
 * have no textures, no metallic-roughness model and no blending (shade_opencl.c says
 * which it refuses). One work-item per ray; it writes the ambient term, the hit point
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
typedef struct { float albedo[3], reflectivity, specular, specular_exponent, pad[2]; } material_t;
typedef struct { float position[3], color[3]; } light_t;
typedef struct { uint nmaterials, nlights, ntriangles, has_materials; float ambient, eps, pad[2];
                 light_t lights[MAX_LIGHTS]; } shade_info;
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
    float spec = m->specular * (float)pow((double)fmax(dot3(n, h), 0.0f), (double)m->specular_exponent);
    for (int i = 0; i < 3; i++) out[i] = (m->albedo[i] * ndotl + spec) * l->color[i];
    return 1;
}

kernel void rt_shade(global const rt_ray_elem *rays, uint n, global shade_result *results,
                     global const float *normals, global const uint *indices,
                     global const uint *materials, global const material_t *table,
                     global const shade_info *info, global ray_t *shadow_entries,
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
    append_shadows(&r, info, shadow_entries, shadow_ctl);
    append_reflection(&r, info->eps, reflect_entries, reflect_ctl);
    results[i] = r;
}
