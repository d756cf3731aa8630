/* camera.c — the camera frame and the rays through image points. */
#include "scenes/camera.h"

#include "scenes/build.h"

#include <math.h>


static void cross3(const float a[3], const float b[3], float out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

void sc_camera_frame_init(sc_camera_frame *f, const sc_camera *c, int width, int height)
{
    for (int i = 0; i < 3; i++) {
        f->eye[i] = c->eye[i];
        f->forward[i] = c->target[i] - c->eye[i];
    }
    sc_normalize3(f->forward);
    cross3(f->forward, c->up, f->right);
    sc_normalize3(f->right);
    cross3(f->right, f->forward, f->up);
    f->half_h = tanf(c->fovy_deg * (float)M_PI / 360.0f);
    f->half_w = f->half_h * (float)width / (float)height;
}

void sc_camera_ray(const sc_camera_frame *f, int width, int height, float px, float py,
                   float dir[3])
{
    float sx = (2.0f * px / (float)width - 1.0f) * f->half_w;
    float sy = (1.0f - 2.0f * py / (float)height) * f->half_h;
    for (int i = 0; i < 3; i++) dir[i] = f->forward[i] + sx * f->right[i] + sy * f->up[i];
}
