/* camera.c — the camera frame and the rays through image points. */
#include "scenes/camera.h"

#include <math.h>

/* Unit length; a vector whose squared length would underflow or overflow (an up vector
 * of 1e-25 made the frame degenerate and the image blank) is scaled by its largest
 * component first. Vectors of ordinary length take the plain path, bit for bit. */
static void normalize3(float v[3])
{
    float l2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    if (!(l2 > 0x1p-100f && l2 < 0x1p100f)) {
        float m = fmaxf(fabsf(v[0]), fmaxf(fabsf(v[1]), fabsf(v[2])));
        if (m > 0 && isfinite(m)) { v[0] /= m; v[1] /= m; v[2] /= m; }
        l2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    }
    float l = sqrtf(l2);
    if (l > 0) { v[0] /= l; v[1] /= l; v[2] /= l; }
}

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
    normalize3(f->forward);
    cross3(f->forward, c->up, f->right);
    normalize3(f->right);
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
