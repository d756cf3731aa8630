/* common.c — camera frame and colour encoding shared by the renderer graphs. */
#include "pipelines/common.h"

#include <math.h>

static void normalize3(float v[3])
{
    float l = sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    if (l > 0) { v[0] /= l; v[1] /= l; v[2] /= l; }
}

static void cross3(const float a[3], const float b[3], float out[3])
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

void pl_camera_frame_init(pl_camera_frame *f, const sc_camera *c, int width, int height)
{
    for (int i = 0; i < 3; i++) {
        f->eye[i] = c->eye[i];
        f->forward[i] = c->target[i] - c->eye[i];
    }
    normalize3(f->forward);
    cross3(f->forward, c->up, f->right);
    normalize3(f->right);
    cross3(f->right, f->forward, f->up);
    f->half_h = tanf(c->fovy_deg * (float)M_PI / 360.0f);
    f->half_w = f->half_h * (float)width / (float)height;
}

void pl_camera_ray(const pl_camera_frame *f, int width, int height, float px, float py,
                   float dir[3])
{
    float sx = (2.0f * px / (float)width - 1.0f) * f->half_w;
    float sy = (1.0f - 2.0f * py / (float)height) * f->half_h;
    for (int i = 0; i < 3; i++) dir[i] = f->forward[i] + sx * f->right[i] + sy * f->up[i];
}

uint8_t pl_to_srgb8(float x)
{
    if (!(x > 0.0f)) return 0;
    if (x >= 1.0f) return 255;
    float s = x <= 0.0031308f ? 12.92f * x : 1.055f * powf(x, 1.0f / 2.4f) - 0.055f;
    return (uint8_t)(s * 255.0f + 0.5f);
}
