/* Scene model: camera, lights, materials, meshes and instances, plus the flattened
 * world-space geometry every renderer streams.
 *
 * Data flow: a .scene file, a mesh file or a built-in name -> sc_load() -> sc_scene ->
 * sc_flatten() -> sc_geometry (world space, one flat triangle list) -> renderers.
 *
 * Contract shared by every renderer and every comparison between them: triangles are in
 * instance order, and within a mesh in file order (polygons fan-triangulated in file
 * order); a triangle's primitive id is its index in sc_geometry. Right-handed world;
 * camera = eye, target, up, vertical field of view in degrees. */
#ifndef SCENES_SCENE_H
#define SCENES_SCENE_H

#include "gramps/api.h"

#include "scenes/limits.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SC_NAME_MAX 64
#define SC_ERR_MAX 512

/* A texture's mip chain: level 0 is the image as loaded, each next level half the
 * previous one's size in each dimension (rounded down, at least 1), a 2x2 box filter of
 * it (sc_texture_build_mips), down to 1x1. Texels are RGBA8 as stored in the file (no
 * colour-space conversion), row 0 at the top. A built chain is one allocation, the levels
 * in order, so that a sampler can address any level's texels from level 0's first one
 * with a 32-bit index. */
#define SC_MAX_MIP_LEVELS 16      /* 1 + log2 of the largest side (PL_MAX_IMAGE_SIDE * 2) */
typedef struct sc_mip_level {
    int width, height;
    unsigned char *rgba;          /* width*height*4 bytes */
} sc_mip_level;

typedef struct sc_texture {
    char name[SC_NAME_MAX];       /* file name (or "file.glb#N" for an embedded image) */
    bool has_alpha;               /* some texel of level 0 has alpha below 255 */
    int nlevels;                  /* >= 1 */
    bool one_block;               /* levels 1.. lie after level 0 in its allocation */
    sc_mip_level levels[SC_MAX_MIP_LEVELS];
} sc_texture;

/* How a texture is read (Direct3D's sampler state; glTF's sampler). */
typedef enum sc_wrap { SC_WRAP_REPEAT, SC_WRAP_CLAMP, SC_WRAP_MIRROR } sc_wrap;
typedef enum sc_filter {
    SC_FILTER_TRILINEAR,          /* linear within and between mip levels (the default) */
    SC_FILTER_BILINEAR,           /* linear within the nearest level */
    SC_FILTER_NEAREST,            /* nearest texel of the nearest level */
    SC_FILTER_NEAREST_NO_MIPS,    /* nearest texel of level 0 (glTF NEAREST minification) */
    SC_FILTER_LINEAR_NO_MIPS,     /* linear within level 0 (glTF LINEAR minification) */
} sc_filter;
typedef struct sc_sampler {
    sc_wrap wrap_u, wrap_v;
    sc_filter filter;
} sc_sampler;

/* A material's use of a texture: which one, which texture coordinate set, how it is
 * sampled, and KHR_texture_transform (uv' = translate(offset) rotate(rotation)
 * scale(scale) uv; identity: offset 0, scale 1, rotation 0). */
typedef struct sc_texture_ref {
    int texture;                  /* index into sc_scene.textures, -1 for none */
    int uv_set;                   /* texture coordinate set: 0, or 1 (2..7 read set 0) */
    sc_sampler sampler;
    float offset[2], scale[2], rotation;
} sc_texture_ref;

/* No texture: index -1, set 0, repeat and trilinear, identity transform. */
static inline sc_texture_ref sc_texture_ref_none(void)
{
    return (sc_texture_ref){.texture = -1, .sampler = {SC_WRAP_REPEAT, SC_WRAP_REPEAT, SC_FILTER_TRILINEAR},
                            .scale = {1, 1}};
}

typedef enum sc_alpha_mode {
    SC_ALPHA_OPAQUE,              /* alpha ignored */
    SC_ALPHA_MASK,                /* alpha test: covered where alpha >= alpha_cutoff */
    SC_ALPHA_BLEND,               /* src * a + dst * (1 - a), in draw order */
} sc_alpha_mode;

typedef enum sc_shading_model {
    SC_SHADING_BLINN_PHONG,       /* OBJ Kd/Ks/Ns, .scene files, built-ins */
    SC_SHADING_METALLIC_ROUGHNESS,/* glTF 2.0 pbrMetallicRoughness (spec appendix B) */
} sc_shading_model;

typedef struct sc_material {
    char name[SC_NAME_MAX];
    float albedo[3];              /* base colour factor, linear RGB 0..1 */
    float alpha;                  /* base colour alpha factor 0..1 (glTF baseColorFactor.a, OBJ d) */
    sc_texture_ref albedo_map;    /* base colour texture: RGB x albedo, A x alpha */
    sc_alpha_mode alpha_mode;
    float alpha_cutoff;           /* SC_ALPHA_MASK's threshold (glTF default 0.5) */
    bool double_sided;            /* false: back faces are culled (glTF doubleSided false) */
    float reflectivity;           /* 0..1, used by the ray tracer and hybrid */
    float specular;               /* Blinn-Phong specular weight 0..1 */
    float specular_exponent;      /* Blinn-Phong exponent */
    sc_shading_model model;
    float metallic, roughness;    /* metallic-roughness factors 0..1 */
    sc_texture_ref metallic_roughness_map;   /* B = metallic, G = roughness (glTF) */
    float emissive[3];            /* emissive factor, linear RGB */
    sc_texture_ref emissive_map;
    sc_texture_ref normal_map;    /* tangent-space normals */
    float normal_scale;
    sc_texture_ref occlusion_map; /* R = ambient occlusion */
    float occlusion_strength;
} sc_material;

typedef struct sc_mesh {
    char name[SC_NAME_MAX];
    size_t nvertices, ntriangles;
    float *positions;             /* 3 * nvertices */
    float *normals;               /* 3 * nvertices (computed smooth when the file has none) */
    float *texcoords;             /* 2 * nvertices, or NULL */
    float *texcoords1;            /* set 1 (glTF TEXCOORD_1): 2 * nvertices, or NULL */
    uint32_t *indices;            /* 3 * ntriangles */
    uint32_t *materials;          /* per triangle: index into sc_scene.materials */
} sc_mesh;

typedef struct sc_instance {
    uint32_t mesh;                /* index into sc_scene.meshes */
    float transform[16];          /* column-major 4x4, object -> world */
} sc_instance;

typedef struct sc_light {
    float position[3];
    float color[3];               /* linear RGB intensity */
} sc_light;

typedef struct sc_camera {
    float eye[3], target[3], up[3];
    float fovy_deg;
} sc_camera;

typedef struct sc_scene {
    char name[SC_NAME_MAX];
    sc_camera camera;
    sc_light *lights;        size_t nlights;
    sc_material *materials;  size_t nmaterials;
    sc_texture *textures;    size_t ntextures;
    sc_mesh *meshes;         size_t nmeshes;
    sc_instance *instances;  size_t ninstances;
    size_t degenerate_triangles;  /* counted warning: zero-area triangles kept as is */
    size_t unreadable_textures;   /* counted warning: textures a material names that could
                                     not be read (the material renders untextured) */
    char *warnings;               /* what loading warns about, one message a line (each names
                                     the file and material), NULL when nothing; at most
                                     SC_WARNINGS_MAX bytes, then a line saying more were cut */
    struct sc_name_index *material_names;   /* internal: sc_scene_find_material's index */
} sc_scene;

/* World-space triangle soup in primitive-id order: what kernels stream. */
typedef struct sc_geometry {
    size_t nvertices, ntriangles;
    float *positions;             /* 3 * nvertices, world space */
    float *normals;               /* 3 * nvertices, world space, unit length */
    float *texcoords;             /* 2 * nvertices (zeros where a mesh had none) */
    float *texcoords1;            /* set 1: 2 * nvertices, NULL when no mesh has one (then
                                     set 1 reads set 0); a mesh without it has its set 0
                                     copied here, so the two agree where it is missing */
    uint32_t *indices;            /* 3 * ntriangles, into the arrays above */
    uint32_t *materials;          /* per triangle, index into sc_scene.materials */
    float bbox_min[3], bbox_max[3];
} sc_geometry;

/* Limits on loading. Mesh formats read through assimp are imported in a child process
 * (scenes/isolated_import.c) that may map at most max_memory bytes and must finish
 * within import_seconds; textures may hold at most max_texture_pixels pixels. */
typedef struct sc_load_opts {
    size_t max_memory;
    double import_seconds;
    size_t max_texture_pixels;
} sc_load_opts;

/* max_memory: half the physical memory; import_seconds: 60; textures: 8192 x 8192. */
GR_API sc_load_opts sc_load_opts_default(void);

/* Loads SCENE: a built-in name (teapot, courtyard, fairy, cornell, showcase), a .scene file or
 * a mesh file (anything assimp reads). Returns 0, or -1 with a message naming the file
 * (and line for .scene) in err. sc_load uses the default options. */
GR_API int sc_load(const char *scene, sc_scene **out, char err[SC_ERR_MAX]);
GR_API int sc_load_with(const char *scene, const sc_load_opts *opts, sc_scene **out, char err[SC_ERR_MAX]);
GR_API void sc_free(sc_scene *s);
/* Whether SCENE names what sc_load can look at: a built-in, or a path that exists. 0, or
 * -1 with "'bunny': no built-in scene of that name (teapot, ...) and no such file" in
 * err (a name with a '/' or '.': "PATH: cannot open: No such file or directory"). sc_load checks it; a program that loads many scenes checks them all first. */
GR_API int sc_scene_findable(const char *scene, char err[SC_ERR_MAX]);

/* Builds t's mip chain below its level 0, t's only level (box filter; see sc_mip_level),
 * moving level 0 into the chain's one allocation: 0, or -1 out of memory (or t has more
 * than level 0; level 0 is then left as it was). sc_texture_free frees every level;
 * sc_texture_bytes counts them. */
GR_API int sc_texture_build_mips(sc_texture *t);
GR_API void sc_texture_free(sc_texture *t);
GR_API size_t sc_texture_bytes(const sc_texture *t);

GR_API int sc_flatten(const sc_scene *s, sc_geometry *out, char err[SC_ERR_MAX]);
GR_API void sc_geometry_free(sc_geometry *g);

/* Scene report: triangles, vertices, bounding box, camera, materials (model, factors,
 * alpha mode, sides, each texture with its size, levels and sampler), textures, lights
 * and an estimate of covered pixels per triangle for the scene's camera at width x height. */
/* "trilinear", "bilinear", "nearest", "nearest-no-mips", "linear-no-mips". */
GR_API const char *sc_filter_name(sc_filter f);
GR_API void sc_report(const sc_scene *s, int width, int height, FILE *out);

#endif
