/* orbit.c — camera moves (see orbit.h). */
#include "tools/view/orbit.h"

#include <math.h>
#include <stdio.h>

static void sub(const float a[3], const float b[3], float o[3])
{
    for (int i = 0; i < 3; i++) o[i] = a[i] - b[i];
}

static float dot(const float a[3], const float b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void cross(const float a[3], const float b[3], float o[3])
{
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}

static void normalize(float v[3])
{
    float l = sqrtf(dot(v, v));
    if (l > 0) for (int i = 0; i < 3; i++) v[i] /= l;
}

/* v rotated by angle about the unit axis k (Rodrigues). */
static void rotate(float v[3], const float k[3], float angle)
{
    float c = cosf(angle), s = sinf(angle), kxv[3], kv = dot(k, v);
    cross(k, v, kxv);
    for (int i = 0; i < 3; i++) v[i] = v[i] * c + kxv[i] * s + k[i] * kv * (1 - c);
}

/* The camera's unit up and right axes (right = forward x up). */
static void axes(const sc_camera *c, float up[3], float right[3])
{
    float fwd[3];
    sub(c->target, c->eye, fwd);
    for (int i = 0; i < 3; i++) up[i] = c->up[i];
    normalize(up);
    cross(fwd, up, right);
    normalize(right);
}

void vw_orbit(sc_camera *c, float yaw, float pitch)
{
    float up[3], right[3], v[3];
    axes(c, up, right);
    sub(c->eye, c->target, v);
    rotate(v, up, yaw);
    rotate(right, up, yaw);
    float pitched[3] = {v[0], v[1], v[2]};
    rotate(pitched, right, pitch);
    /* forward stays more than 5 degrees from up and from -up */
    if (fabsf(dot(pitched, up)) < cosf(5 * (float)M_PI / 180) * sqrtf(dot(pitched, pitched)))
        for (int i = 0; i < 3; i++) v[i] = pitched[i];
    for (int i = 0; i < 3; i++) c->eye[i] = c->target[i] + v[i];
}

void vw_pan(sc_camera *c, float dx, float dy)
{
    float up[3], right[3], fwd[3], screen_up[3];
    axes(c, up, right);
    sub(c->target, c->eye, fwd);
    cross(right, fwd, screen_up);
    normalize(screen_up);
    /* one view height at the target's distance */
    float h = 2 * sqrtf(dot(fwd, fwd)) * tanf(c->fovy_deg * (float)M_PI / 360);
    for (int i = 0; i < 3; i++) {
        float d = (right[i] * dx + screen_up[i] * dy) * h;
        c->eye[i] += d;
        c->target[i] += d;
    }
}

void vw_zoom(sc_camera *c, float factor)
{
    float v[3];
    sub(c->eye, c->target, v);
    float d = sqrtf(dot(v, v)), nd = d * factor;
    if (!(nd > 1e-4f && nd < 1e9f)) return;    /* keeps the eye off the target */
    for (int i = 0; i < 3; i++) c->eye[i] = c->target[i] + v[i] * (nd / d);
}

void vw_camera_arg(const sc_camera *c, char *buf, size_t n)
{
    snprintf(buf, n, "--camera %.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g", c->eye[0],
             c->eye[1], c->eye[2], c->target[0], c->target[1], c->target[2], c->up[0], c->up[1],
             c->up[2], c->fovy_deg);
}
