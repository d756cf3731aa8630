/* shade_opencl.c — the host side of rt.shade's OpenCL kernel (see shade_opencl.h). */
#include "pipelines/raytrace/shade_opencl.h"

#include "pipelines/frame.h"
#include "pipelines/raytrace/device_copy.h"
#include "shaders/blinn_phong.h"
#include "shaders/texture_sample.h"
#include "shaders/uv_sets.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(plrt_shade_texref) == 64, "shade.cl's texref_t is 64 bytes");
_Static_assert(sizeof(plrt_shade_material) == 64 + PLRT_MAPS * 64, "shade.cl's material_t");
_Static_assert(sizeof(plrt_shade_texture) == 16 + SC_MAX_MIP_LEVELS * 12, "shade.cl's texture_t");
_Static_assert(SC_MAX_MIP_LEVELS == 16, "shade.cl's MAX_LEVELS");
_Static_assert(sizeof(plrt_shade_info) == 48 + SH_MAX_LIGHTS * 24, "shade.cl's shade_info");
_Static_assert(sizeof(plrt_shade_result) == 48 + SH_MAX_LIGHTS * 12, "shade.cl's result_t");
_Static_assert(sizeof(plrt_shade_spill) == 36, "shade.cl's spill_t");
_Static_assert(sizeof(sc_light) == 24, "shade.cl's light_t is 24 bytes");

/* The scene's normals, indices, per-triangle materials, positions and texture
 * coordinates (set 0, then set 1 if there is one) on the device, and its textures'
 * texels and mip table (texture_opencl.c). */
typedef struct plrt_device_shading {
    plrt_device_copy copy;
    plrt_device_textures textures;
} plrt_device_shading;

static void device_shading_free(void *data)
{
    plrt_device_shading *d = data;
    if (!d) return;
    plrt_copy_free(&d->copy);
    plrt_device_textures_free(&d->textures);
    free(d);
}

/* Set 0's coordinates, then set 1's where the geometry has them (a float of zero when
 * it has none: the kernel reads them only for a textured material). NULL: out of memory;
 * &no_uvs when there are none. */
static float no_uvs;

static size_t uvs_bytes(const sc_geometry *g)
{
    if (!g->texcoords) return sizeof no_uvs;
    return (g->texcoords1 ? 2 : 1) * 2 * g->nvertices * sizeof(float);
}

static float *uvs_of(const sc_geometry *g)
{
    if (!g->texcoords) return &no_uvs;
    const size_t set = 2 * g->nvertices;
    float *both = malloc(uvs_bytes(g) + 1);
    if (!both) return NULL;
    memcpy(both, g->texcoords, set * sizeof *both);
    if (g->texcoords1) memcpy(both + set, g->texcoords1, set * sizeof *both);
    return both;
}

static plrt_device_shading *upload(const sc_scene *s, const sc_geometry *g, char err[AC_ERR_MAX])
{
    ac_device *dev = ac_open(err);
    plrt_device_shading *d = dev ? calloc(1, sizeof *d) : NULL;
    if (!d) return NULL;
    const uint32_t none = 0;                 /* no per-triangle materials: one word */
    float *uvs = uvs_of(g);
    const plrt_host_range parts[] = {
        {g->normals, 3 * g->nvertices * sizeof(float)},
        {g->indices, 3 * g->ntriangles * sizeof(uint32_t)},
        g->materials ? (plrt_host_range){g->materials, g->ntriangles * sizeof(uint32_t)}
                     : (plrt_host_range){&none, sizeof none},
        {g->positions, 3 * g->nvertices * sizeof(float)},
        {uvs, uvs_bytes(g)}};
    if (!uvs) snprintf(err, AC_ERR_MAX, "out of memory");
    int rc = uvs ? plrt_copy_upload(&d->copy, dev, parts, 5, err) : -1;
    if (uvs != &no_uvs) free(uvs);
    if (rc == 0 && !plrt_device_textures_make(&d->textures, dev, s, err)) return d;
    device_shading_free(d);
    return NULL;
}

/* Why the last upload on this thread failed (the resource hook has no message). */
static _Thread_local char upload_err[AC_ERR_MAX];

static void *device_shading_create(void *frame, const char *owner)
{
    (void)owner;
    pl_scene_data *data = ((pl_frame *)frame)->data;
    if (!data->device_shading && (data->device_shading = upload(data->scene, data->geo, upload_err)))
        data->device_shading_free = device_shading_free;
    return data->device_shading;
}

static void scene_owned(void *data) { (void)data; }

const cp_resource_type plrt_device_shading_resource = {
    "shading.opencl", "the scene's normals, indices, triangle materials, positions, texture "
    "coordinates and textures (with their mip chains) copied to the OpenCL device once per scene, for rt.shade placed there; device memory, not counted in "
    "the host estimate", "f32 normals + u32 indices", 0, CP_PER_SCENE, false, CP_CLEAR_NONE, NULL,
    device_shading_create, scene_owned, NULL};

const char *plrt_shade_unsupported(const sh_ray_env *env, sh_aov aov)
{
    if (aov != SH_AOV_COLOR) return "the OpenCL kernel shades colour only, not another --aov";
    for (size_t i = 0; i < env->scene->nmaterials; i++) {
        const sc_material *m = &env->scene->materials[i];
        if (m->alpha_mode == SC_ALPHA_BLEND)
            return "the scene has blended materials, which the OpenCL kernel does not shade";
    }
    return NULL;
}

/* pbr.c's test for whether the cone's area is scaled (offsets do not count). */
static bool scales_area(const sc_texture_ref *r)
{
    return !(r->rotation == 0.0f && r->scale[0] == 1.0f && r->scale[1] == 1.0f);
}

/* ref as shade.cl samples it; none where the scene has no such texture, or (`needs_uvs`:
 * ray_shading.c's albedo) the geometry no coordinates. */
static plrt_shade_texref texref_of(const sh_ray_env *env, const sc_texture_ref *r, bool needs_uvs)
{
    plrt_shade_texref d = {.texture = -1};
    if (!sh_texture_of(env->scene, r) || (needs_uvs && !sh_uv_array(env->geo, r))) return d;
    d.texture = r->texture;
    d.uv_set = r->uv_set == 1;
    d.wrap_u = r->sampler.wrap_u;
    d.wrap_v = r->sampler.wrap_v;
    d.filter = r->sampler.filter;
    d.transform = !sh_texture_transform_is_identity(r);
    d.lod_scale = scales_area(r);
    d.offset[0] = r->offset[0];
    d.offset[1] = r->offset[1];
    d.scale[0] = r->scale[0];
    d.scale[1] = r->scale[1];
    d.cos_r = cosf(r->rotation);
    d.sin_r = sinf(r->rotation);
    return d;
}

/* m as shade.cl reads it: a Blinn-Phong material's albedo texture only where
 * ray_shading.c's surface_of samples one; a metallic-roughness material's maps as
 * pbr.c's gather does (with or without coordinates). */
static plrt_shade_material material_of(const sh_ray_env *env, const sc_material *m)
{
    const bool pbr = m->model == SC_SHADING_METALLIC_ROUGHNESS;
    plrt_shade_material d = {{m->albedo[0], m->albedo[1], m->albedo[2]}, m->reflectivity,
                             m->specular, m->specular_exponent, m->metallic, m->roughness,
                             {m->emissive[0], m->emissive[1], m->emissive[2]}, m->normal_scale,
                             m->occlusion_strength, pbr, {0}, {{0}}};
    const plrt_shade_texref none = {.texture = -1};
    d.maps[PLRT_MAP_ALBEDO] = texref_of(env, &m->albedo_map, !pbr);
    d.maps[PLRT_MAP_METALLIC_ROUGHNESS] = pbr ? texref_of(env, &m->metallic_roughness_map, false) : none;
    d.maps[PLRT_MAP_EMISSIVE] = pbr ? texref_of(env, &m->emissive_map, false) : none;
    d.maps[PLRT_MAP_NORMAL] = pbr ? texref_of(env, &m->normal_map, false) : none;
    d.maps[PLRT_MAP_OCCLUSION] = pbr ? texref_of(env, &m->occlusion_map, false) : none;
    return d;
}

int plrt_shade_device_make(plrt_shade_device *d, const cp_stage_init *i, const sh_ray_env *env,
                           char err[CP_ERR_MAX])
{
    char why[AC_ERR_MAX];
    ac_device *dev = ac_open(why);
    if (!dev || !(d->scene = pl_frame_use(i, "shading.opencl", err))) {
        snprintf(err, CP_ERR_MAX, "the scene's shading data is not on the OpenCL device: %.900s",
                 dev ? upload_err : why);
        return -1;
    }
    const size_t nm = env->scene->nmaterials;
    plrt_shade_material *table = malloc((nm + 1) * sizeof *table);
    plrt_shade_info info = {.nmaterials = (uint32_t)nm, .nlights = (uint32_t)env->nlights,
                            .ntriangles = (uint32_t)env->geo->ntriangles,
                            .has_materials = env->geo->materials != NULL, .ambient = env->ambient,
                            .eps = env->eps,
                            .set1_at = env->geo->texcoords && env->geo->texcoords1
                                           ? (uint32_t)(2 * env->geo->nvertices) : 0,
                            .has_uvs = env->geo->texcoords != NULL,
                            .lead_bytes = (uint32_t)plrt_shade_lead_bytes(env->nlights)};
    for (int l = 0; l < env->nlights; l++) info.lights[l] = env->lights[l];
    if (!table) {
        snprintf(err, CP_ERR_MAX, "out of memory");
        return -1;
    }
    for (size_t m = 0; m < nm; m++) table[m] = material_of(env, &env->scene->materials[m]);
    table[nm] = material_of(env, &sh_default_material);
    const plrt_host_range parts[] = {{table, (nm + 1) * sizeof *table}, {&info, sizeof info}};
    int rc = plrt_copy_upload(&d->tables, dev, parts, 2, why);
    free(table);
    if (rc) snprintf(err, CP_ERR_MAX, "%.1000s", why);
    return rc;
}

void plrt_shade_device_free(plrt_shade_device *d) { plrt_copy_free(&d->tables); }

int plrt_shade_device_buffers(const plrt_shade_device *d, const ac_buffer *out[CP_KERNEL_BUFFERS])
{
    if (!d->scene || !d->tables.n) return -1;
    /* shade.cl's argument order: normals, indices, materials, the material table, the
     * lights, positions, texture coordinates, texels, the mip table. */
    const plrt_device_copy *scene = &d->scene->copy;
    const ac_buffer *order[] = {scene->buf[0], scene->buf[1], scene->buf[2], d->tables.buf[0],
                                d->tables.buf[1], scene->buf[3], scene->buf[4],
                                d->scene->textures.texels, d->scene->textures.table};
    int n = (int)(sizeof order / sizeof *order);
    for (int k = 0; k < n; k++) out[k] = order[k];
    return n;
}

/* ray_shading.c's push_shadow and mirror origin: p + n eps, toward the light. */
static void offset_origin(const sh_ray_env *e, const float p[3], const float n[3], rt_ray *r)
{
    for (int i = 0; i < 3; i++) r->org[i] = p[i] + n[i] * e->eps;
    r->tmin = 0.0f;
}

bool plrt_shade_spills(const void *result)
{
    return ((const plrt_shade_result *)result)->flags & PLRT_SHADE_SPILLS;
}

/* The spill's point and normal, or zeros (rays that all became handles). */
static const plrt_shade_spill *spill_of(const sh_ray_env *env, const plrt_shade_result *r)
{
    static const plrt_shade_spill none;
    if (!plrt_shade_spills(r)) return &none;
    return (const plrt_shade_spill *)((const char *)r + plrt_shade_lead_bytes(env->nlights));
}

void plrt_shade_result_of(const sh_ray_env *env, const plrt_shade_result *r, sh_ray_result *out)
{
    const plrt_shade_spill *sp = spill_of(env, r);
    for (int i = 0; i < 3; i++) out->direct[i] = r->direct[i];
    out->nshadow = 0;
    for (int l = 0; l < env->nlights; l++) {
        if (!(r->flags >> l & 1)) continue;
        int k = out->nshadow++;
        rt_ray *s = &out->shadow[k];
        offset_origin(env, sp->p, sp->n, s);
        for (int i = 0; i < 3; i++) {
            s->dir[i] = env->lights[l].position[i] - sp->p[i];
            out->shadow_color[k][i] = r->light_color[l][i];
        }
        s->tmax = 0.9999f;
    }
    out->reflect = (r->flags & PLRT_SHADE_REFLECTS) != 0;
    if (out->reflect) {
        for (int i = 0; i < 3; i++) out->reflected.dir[i] = sp->reflect_dir[i];
        offset_origin(env, sp->p, sp->n, &out->reflected);
        out->reflected.tmax = INFINITY;
        for (int i = 0; i < 3; i++) out->reflect_weight[i] = r->reflect_weight[i];
    }
    out->pass = false;
}
