/* surface.h — the frame resource "surface": per pixel the view depth and the unit world
 * normal of the surface the graph found visible there, as exact floats, for float
 * outputs (gramps-render -o FILE.exr: its Z and N.X/N.Y/N.Z channels). The stages that
 * decide what a pixel shows write it beside the image, in the same run:
 *
 *   raster.tile-shade, raster.om   the visible fragment (the depth buffer's: blended
 *                                  triangles write no depth, so not theirs), from its
 *                                  triangle's corners at the fragment's perspective-
 *                                  correct weights (the pixel shader's interpolation)
 *   rt.shade, hybrid.ps            the camera ray's first hit (blended surfaces
 *                                  included: the ray tracer composites along the ray)
 *
 * Several samples per pixel: the surface of the pixel's first sample (--spp: the first
 * jittered ray; --msaa: the triangle that owns sample 0, at the pixel centre, where it
 * is shaded). Where nothing is visible: depth +infinity, normal 0. So each pixel has
 * exactly one writer, and the values are the same for any worker count and scheduler.
 *
 * A program asks for it before the run (pl_frame_use_surface); the stages' create hooks
 * take it with pl_frame_stage_surface (NULL when not wanted: they then pay nothing). */
#ifndef PIPELINES_SURFACE_H
#define PIPELINES_SURFACE_H

#include "pipelines/frame.h"

/* One pixel: z, the distance along the camera's view axis ((p - eye) . forward, scene
 * units), and n, the unit shading normal turned to face the viewer (two-sided). */
typedef struct pl_surface { float z, n[3]; } pl_surface;

/* "surface": pl_surface per pixel, cleared to {+inf, 0, 0, 0} each run. */
extern GR_API const cp_resource_type pl_surface_resource;

/* For a stage's create hook: *out is the frame's surface buffer when a program asked for
 * it, else NULL. false (message in err) when out of memory or the stage's type does not
 * declare it. */
GR_API bool pl_frame_stage_surface(const cp_stage_init *i, pl_surface **out, char err[CP_ERR_MAX]);
/* Asks the stages to write it into the caller's width x height pixels (before the run;
 * pl_frame_free leaves them). */
GR_API void pl_frame_use_surface(pl_frame *f, pl_surface *pixels);
/* After the run: the buffer, or NULL when no stage of the graph wrote it. */
GR_API const pl_surface *pl_frame_surface(pl_frame *f);

/* The surface of a raster fragment of triangle t with weights b1, b2 (vertex 0 gets
 * 1 - b1 - b2), seen from e's camera. */
GR_API pl_surface pl_surface_of_fragment(const sh_raster_env *e, const sh_ps_tri *t, float b1, float b2);
/* The surface of a ray's hit (hit->prim in the mesh), seen from camera `eye`, `forward`. */
GR_API pl_surface pl_surface_of_hit(const sh_ray_env *e, const float eye[3], const rt_ray *ray,
                                    const rt_hit *hit);

#endif
