/* primitives.h — the shapes the built-in scenes are generated from (internal): a
 * tessellated quad, a box, a sphere and a cylinder appended to a mesh builder. Each takes
 * an optional texture-coordinate scale: NULL gives the shape no texture coordinates (the
 * untextured built-ins); {su, sv} spans the shape's own parameter square [0,1]^2 as
 * [0,su] x [0,sv], so a repeating texture tiles su times across it (v = 0 at the bottom,
 * OBJ's convention). */
#ifndef SCENES_PRIMITIVES_H
#define SCENES_PRIMITIVES_H

#include "scenes/build.h"

/* The quad o + u*a + v*c, u and v in [0,1], split into nu x nv cells; it faces a x c. */
void sc_prim_grid(sc_mesh_builder *b, const float o[3], const float a[3], const float c[3],
                  int nu, int nv, const float uv_scale[2], uint32_t material);
/* An axis-aligned box, its faces outward, each split into n x n cells. */
void sc_prim_box(sc_mesh_builder *b, const float lo[3], const float hi[3], int n,
                 const float uv_scale[2], uint32_t material);
/* Smooth normals set per vertex; u runs around the axis (y), v from the bottom up. */
void sc_prim_sphere(sc_mesh_builder *b, const float c[3], float r, int slices, int stacks,
                    const float uv_scale[2], uint32_t material);
/* An open cylinder standing on c, radius r, height h. */
void sc_prim_cylinder(sc_mesh_builder *b, const float c[3], float r, float h, int slices, int rings,
                      const float uv_scale[2], uint32_t material);

/* Normals default to smooth ones when a generator set none; in a builder that mixes
 * shapes with normals (spheres) and without (grids), the latter get their face's. */
void sc_prim_fill_missing_normals(sc_mesh_builder *b);

#endif
