/* build.h — internal helpers the loaders and built-in generators use to assemble an
 * sc_scene: growable mesh builders, materials, lights, instances, smooth normals. */
#ifndef SCENES_BUILD_H
#define SCENES_BUILD_H

#include "scenes/scene.h"

#include <stdbool.h>

typedef struct sc_mesh_builder {
    float *pos, *nrm, *uv, *uv1;      /* nrm/uv/uv1 optional (NULL until first set) */
    size_t nv, vcap;
    uint32_t *idx, *mat;
    size_t nt, tcap;
} sc_mesh_builder;

uint32_t sc_mb_vertex(sc_mesh_builder *b, float x, float y, float z);
void sc_mb_normal(sc_mesh_builder *b, uint32_t v, float x, float y, float z);
void sc_mb_uv(sc_mesh_builder *b, uint32_t v, float u, float w);
void sc_mb_uv1(sc_mesh_builder *b, uint32_t v, float u, float w);    /* texture coordinate set 1 */
void sc_mb_triangle(sc_mesh_builder *b, uint32_t a, uint32_t c, uint32_t d, uint32_t material);
bool sc_mb_ok(const sc_mesh_builder *b);           /* false after an allocation failure */
void sc_mb_free(sc_mesh_builder *b);

sc_scene *sc_scene_new(const char *name);
/* Moves the builder's arrays into a new mesh (smooth normals computed if none were set).
 * Returns the mesh index, or -1 when out of memory. */
int sc_scene_add_mesh(sc_scene *s, const char *name, sc_mesh_builder *b);
int sc_scene_add_material(sc_scene *s, const char *name, float r, float g, float b,
                          float reflectivity, float specular, float exponent);
int sc_scene_add_instance(sc_scene *s, uint32_t mesh, const float transform[16]);
int sc_scene_add_light(sc_scene *s, float x, float y, float z, float r, float g, float b);
int sc_scene_find_material(const sc_scene *s, const char *name);

/* Appends one line to s->warnings (printf format, no newline); past SC_WARNINGS_MAX
 * bytes the line is dropped and a last line says that some were. */
void sc_scene_warn(sc_scene *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A texture a material names could not be read: the warning (file, material, why) and
 * the count in s->unreadable_textures. */
void sc_warn_unreadable_texture(sc_scene *s, const char *where, const char *material,
                                const char *why);

/* Area-weighted smooth vertex normals (zero-area triangles counted in *degenerate). */
/* v at unit length; false when it is zero or not finite (v then unusable). A vector whose
 * squared length would overflow or underflow float (cross products of coordinates near
 * SC_COORD_MAX, an up vector of 1e-25) is scaled by its largest component first; one of
 * ordinary length takes the plain path, bit for bit. */
bool sc_normalize3(float v[3]);

void sc_smooth_normals(const float *pos, size_t nv, const uint32_t *idx, size_t nt,
                       float *nrm, size_t *degenerate);

/* A camera looking at the bounding box of s's geometry from a three-quarter view, the
 * whole box in frame, and a light above and right of it (for mesh files). */
void sc_fit_camera(sc_scene *s, const float up[3]);

void sc_identity(float m[16]);
/* out = m * (p, 1): a point through a column-major 4x4 transform. */
void sc_transform_point(const float m[16], const float p[3], float out[3]);
/* Geometry bounds over every instance (lo > hi when empty). */
void sc_scene_bounds(const sc_scene *s, float lo[3], float hi[3]);

#endif
