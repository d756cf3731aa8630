/* camera.h — the camera model every renderer shares: an orthonormal frame from the
 * scene's eye, target, up and vertical field of view, and the ray through an image point
 * (right-handed world, row 0 at the top, samples at pixel centres). */
#ifndef SCENES_CAMERA_H
#define SCENES_CAMERA_H

#include "gramps/api.h"
#include "scenes/scene.h"

/* Orthonormal camera frame: forward, right and up, plus the half extents of the image
 * plane at distance 1 (tan(fovy/2) scaled by the aspect ratio). */
typedef struct sc_camera_frame {
    float eye[3], forward[3], right[3], up[3];
    float half_w, half_h;
} sc_camera_frame;

GR_API void sc_camera_frame_init(sc_camera_frame *f, const sc_camera *c, int width, int height);

/* Direction (not normalised) through image point (px, py) in pixels, row 0 on top. */
GR_API void sc_camera_ray(const sc_camera_frame *f, int width, int height, float px, float py,
                   float dir[3]);

#endif
