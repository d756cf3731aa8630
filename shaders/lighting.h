/* lighting.h — what both shading kernels start from: the lights they shade with, the
 * ambient and background levels, and the scene's extent along the view axis.
 * sh_raster_env_init and sh_ray_env_init both take them from here, so the rasterizer
 * and the ray tracer light a scene alike.
 *
 * Data flow: sc_scene lights, sc_geometry bounding box, sc_camera_frame -> here ->
 * sh_raster_env / sh_ray_env. */
#ifndef SHADERS_LIGHTING_H
#define SHADERS_LIGHTING_H

#include "scenes/camera.h"
#include "scenes/scene.h"

#define SH_AMBIENT 0.1f           /* ambient light level */
#define SH_BACKGROUND 0.05f       /* each channel of the background colour */

/* The scene's first SH_MAX_LIGHTS lights or, when it has none, a white light at the eye:
 * how many (at least 1) are in lights. */
int sh_lights_of(const sc_scene *s, const float eye[3], sc_light lights[SH_MAX_LIGHTS]);

/* The geometry's bounding box as the camera sees it: the nearest and farthest view depth
 * of its corners (along f->forward from f->eye) and the length of its diagonal. */
typedef struct sh_view_extent { float nearest, farthest, diagonal; } sh_view_extent;
sh_view_extent sh_view_extent_of(const sc_geometry *g, const sc_camera_frame *f);

#endif
