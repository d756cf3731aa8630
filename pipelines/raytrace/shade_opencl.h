/* shade_opencl.h — rt.shade on the OpenCL device: the kernel of
 * pipelines/raytrace/opencl/shade.cl, the device copy of the scene's normals, indices and
 * per-triangle materials it reads (the frame resource "shading.opencl", once per scene),
 * each instance's material table and lights, and the host's half of a hit's shading
 * from the kernel's result (docs/opencl.md). */
#ifndef PIPELINES_RAYTRACE_SHADE_OPENCL_H
#define PIPELINES_RAYTRACE_SHADE_OPENCL_H

#include "accel/opencl.h"
#include "compose/compose.h"
#include "pipelines/raytrace/device_copy.h"
#include "shaders/ray_shading.h"

#include <stddef.h>

/* shade.cl's material_t, shade_info and shade_result. */
/* A texture reference as shade.cl samples it (shaders/texture_sample.h): the texture
 * (-1: none), whether it reads coordinate set 1 (set 0 where the geometry has no set 1),
 * the sampler, and the transform: `transform` when sh_texture_transform is not the
 * identity (cos_r, sin_r: cosf and sinf of its rotation, the host's bits), `lod_scale`
 * when sh_surface_lod scales the cone's area. */
typedef struct plrt_shade_texref {
    int32_t texture;
    uint32_t uv_set, wrap_u, wrap_v, filter, transform, lod_scale;
    float offset[2], scale[2], cos_r, sin_r;
    uint32_t pad[3];
} plrt_shade_texref;
/* Its maps, in shade.cl's order. */
enum { PLRT_MAP_ALBEDO, PLRT_MAP_METALLIC_ROUGHNESS, PLRT_MAP_EMISSIVE, PLRT_MAP_NORMAL,
       PLRT_MAP_OCCLUSION, PLRT_MAPS };
typedef struct plrt_shade_material {
    float albedo[3], reflectivity, specular, specular_exponent, metallic, roughness;
    float emissive[3], normal_scale, occlusion_strength;
    uint32_t metallic_roughness;          /* the model: 0 Blinn-Phong, 1 metallic-roughness */
    uint32_t pad[2];
    plrt_shade_texref maps[PLRT_MAPS];
} plrt_shade_material;

/* shade.cl's texture_t: where each mip level's texels (RGBA bytes, rows top first) start
 * in the scene's texel buffer, in texels, and its size. */
typedef struct plrt_shade_texture {
    uint32_t nlevels, pad[3];
    uint32_t offset[SC_MAX_MIP_LEVELS], width[SC_MAX_MIP_LEVELS], height[SC_MAX_MIP_LEVELS];
} plrt_shade_texture;
typedef struct plrt_shade_info {
    uint32_t nmaterials, nlights, ntriangles, has_materials;
    float ambient, eps;
    uint32_t set1_at;                     /* where set 1 starts in the uv buffer (floats); 0: none */
    uint32_t has_uvs;                     /* the geometry has texture coordinates */
    uint32_t lead_bytes, pad[3];          /* plrt_shade_lead_bytes(nlights) */
    sc_light lights[SH_MAX_LIGHTS];
} plrt_shade_info;
/* A hit's result, what the host reads of it for every hit: the direct term, the lit
 * lights and whether the hit reflects, where the kernel appended their rays, the mirror
 * ray's weight and cone and each light's term. The point, normal and mirror direction
 * the host needs only to make the rays the kernel did not append (plrt_shade_spill)
 * follow it, and come back only for hits whose flags say PLRT_SHADE_SPILLS
 * (cp_kernel.spill_bytes). */
enum { PLRT_SHADE_LIT = 0xff,             /* bit l: light l adds light_color[l] if unoccluded */
       PLRT_SHADE_REFLECTS = 1 << 8,      /* it sends a mirror ray */
       PLRT_SHADE_SPILLS = 1 << 9 };      /* a lit light's or the mirror's ray is not appended */
typedef struct plrt_shade_result {
    float direct[3];
    uint32_t flags;
    /* Where the kernel appended the lit lights' shadow rays (in light order) and the
     * mirror ray on the device, as positions for cp_device_appended; AC_NO_ENTRY: it
     * did not (the queue is on the host, or full), the host makes them. */
    uint32_t shadow_at, reflect_at;
    /* The hit's primitive (RT_NO_HIT: a miss) and, when it reflects, the mirror ray's cone
     * (rt_cone_at_hit): what emit would read of the hit and the ray, which are stale on
     * the host where the hits queue keeps its elements on the device. */
    uint32_t prim;
    rt_cone reflect_cone;
    float reflect_weight[3];
    /* Last: the kernel writes only the scene's lights' (plrt_shade_lead_bytes). */
    float light_color[SH_MAX_LIGHTS][3];
} plrt_shade_result;
typedef struct plrt_shade_spill {
    float p[3], n[3], reflect_dir[3];
} plrt_shade_spill;

/* The bytes of a result before its spill for a scene of nlights lights, and with it: the
 * results of a launch are plrt_shade_result_bytes apart on the host. */
static inline size_t plrt_shade_lead_bytes(int nlights)
{
    return offsetof(plrt_shade_result, light_color) + (size_t)nlights * sizeof(float[3]);
}

static inline size_t plrt_shade_result_bytes(int nlights)
{
    return plrt_shade_lead_bytes(nlights) + sizeof(plrt_shade_spill);
}

/* The bytes a result of a scene of the most lights may have (cp_kernel.result_bytes). */
#define PLRT_SHADE_RESULT_MAX (sizeof(plrt_shade_result) + sizeof(plrt_shade_spill))

/* The scene's textures on the device (texture_opencl.c): every mip level's texels side
 * by side (a texel: 4 bytes), and a plrt_shade_texture per texture. */
typedef struct plrt_device_textures {
    struct ac_buffer *texels, *table;
} plrt_device_textures;
/* 0, or -1 with a message (a buffer that does not fit, a scene past 4G texels). */
int plrt_device_textures_make(plrt_device_textures *t, ac_device *dev, const sc_scene *s,
                              char err[AC_ERR_MAX]);
void plrt_device_textures_free(plrt_device_textures *t);

extern const cp_resource_type plrt_device_shading_resource;
extern const char cl_pipelines_raytrace_opencl_shade[];
#define PLRT_SHADE_CL "pipelines/raytrace/opencl/shade.cl"

/* What an instance placed on the device holds there. */
typedef struct plrt_shade_device {
    const struct plrt_device_shading *scene;   /* the frame resource */
    plrt_device_copy tables;                   /* materials (the default last), lights */
} plrt_shade_device;

/* NULL, or why the kernel cannot shade this scene and AOV (textures, metallic-roughness,
 * blended materials, an AOV other than colour). */
const char *plrt_shade_unsupported(const sh_ray_env *env, sh_aov aov);
/* The instance's buffers, from the frame resource and env. -1 with a message. */
int plrt_shade_device_make(plrt_shade_device *d, const cp_stage_init *i, const sh_ray_env *env,
                           char err[CP_ERR_MAX]);
void plrt_shade_device_free(plrt_shade_device *d);
/* The kernel's buffer arguments. */
int plrt_shade_device_buffers(const plrt_shade_device *d,
                              const struct ac_buffer *out[CP_KERNEL_BUFFERS]);
/* The kernel's appends (cp_kernel.appends): shadow rays, at most a light each, and the
 * mirror ray, each a ray on the device and the rest of its element on the host. */
enum { PLRT_APPEND_SHADOW, PLRT_APPEND_REFLECT };
/* What sh_ray_shade_cone gives for the hit, from the kernel's result (its spill after it,
 * plrt_shade_lead_bytes on): the shadow rays and the mirror ray made from the hit point
 * and normal as ray_shading.c makes them where the result has its spill, zero where the
 * kernel appended them all (their elements become handles: cp_device_appended). */
void plrt_shade_result_of(const sh_ray_env *env, const plrt_shade_result *r, sh_ray_result *out);
/* Whether a result's spill is needed (cp_kernel.spills). */
bool plrt_shade_spills(const void *result);

#endif
