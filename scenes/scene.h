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

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SC_NAME_MAX 64
#define SC_ERR_MAX 512

typedef struct sc_texture {
    int width, height;
    unsigned char *rgba;          /* width*height*4 bytes, row 0 at the top */
} sc_texture;

typedef struct sc_material {
    char name[SC_NAME_MAX];
    float albedo[3];              /* linear RGB 0..1 */
    int texture;                  /* index into sc_scene.textures, -1 for none */
    float reflectivity;           /* 0..1, used by the ray tracer and hybrid */
    float specular;               /* specular weight 0..1 */
    float specular_exponent;      /* Blinn-Phong exponent */
} sc_material;

typedef struct sc_mesh {
    char name[SC_NAME_MAX];
    size_t nvertices, ntriangles;
    float *positions;             /* 3 * nvertices */
    float *normals;               /* 3 * nvertices (computed smooth when the file has none) */
    float *texcoords;             /* 2 * nvertices, or NULL */
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
    struct sc_name_index *material_names;   /* internal: sc_scene_find_material's index */
} sc_scene;

/* World-space triangle soup in primitive-id order: what kernels stream. */
typedef struct sc_geometry {
    size_t nvertices, ntriangles;
    float *positions;             /* 3 * nvertices, world space */
    float *normals;               /* 3 * nvertices, world space, unit length */
    float *texcoords;             /* 2 * nvertices (zeros where a mesh had none) */
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

/* Loads SCENE: a built-in name (teapot, courtyard, fairy, cornell), a .scene file or
 * a mesh file (anything assimp reads). Returns 0, or -1 with a message naming the file
 * (and line for .scene) in err. sc_load uses the default options. */
GR_API int sc_load(const char *scene, sc_scene **out, char err[SC_ERR_MAX]);
GR_API int sc_load_with(const char *scene, const sc_load_opts *opts, sc_scene **out, char err[SC_ERR_MAX]);
GR_API void sc_free(sc_scene *s);

GR_API int sc_flatten(const sc_scene *s, sc_geometry *out, char err[SC_ERR_MAX]);
GR_API void sc_geometry_free(sc_geometry *g);

/* Scene report: triangles, vertices, bounding box, materials, lights and an estimate of
 * covered pixels per triangle for the scene's camera at width x height. */
GR_API void sc_report(const sc_scene *s, int width, int height, FILE *out);

#endif
