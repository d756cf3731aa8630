/* fragments.c — a pixel's fragments from its samples' visibility (see the header). */
#include "pipelines/hybrid/fragments.h"

#include "raytracer/bvh_traverse.h"
#include "raytracer/tri_intersect.h"

#include <math.h>
#include <string.h>

/* The ray r's hit on the plane of triangle (a, b, c) with unbounded weights (hit point
 * (1 - u - v) a + u b + v c, as rt_tri_intersect's), in double; false when the ray is
 * parallel to the plane or meets it behind the eye. */
static bool plane_hit(const rt_ray *r, const float a[3], const float b[3], const float c[3],
                      rt_hit *h)
{
    double e1[3], e2[3], s[3], p[3], q[3];
    for (int i = 0; i < 3; i++) {
        e1[i] = (double)b[i] - a[i];
        e2[i] = (double)c[i] - a[i];
        s[i] = (double)r->org[i] - a[i];
    }
    const double d[3] = {r->dir[0], r->dir[1], r->dir[2]};
    p[0] = d[1] * e2[2] - d[2] * e2[1];
    p[1] = d[2] * e2[0] - d[0] * e2[2];
    p[2] = d[0] * e2[1] - d[1] * e2[0];
    const double det = e1[0] * p[0] + e1[1] * p[1] + e1[2] * p[2];
    if (!(fabs(det) > 1e-300)) return false;
    q[0] = s[1] * e1[2] - s[2] * e1[1];
    q[1] = s[2] * e1[0] - s[0] * e1[2];
    q[2] = s[0] * e1[1] - s[1] * e1[0];
    const double t = (e2[0] * q[0] + e2[1] * q[1] + e2[2] * q[2]) / det;
    if (!(t > 0 && t < INFINITY)) return false;
    h->t = (float)t;
    h->u = (float)((s[0] * p[0] + s[1] * p[1] + s[2] * p[2]) / det);
    h->v = (float)((d[0] * q[0] + d[1] * q[1] + d[2] * q[2]) / det);
    return true;
}

/* The hit of r (the camera ray through the pixel centre) on primitive prim. */
static void fragment_hit(const plh_primary *p, plrt_ray *r, uint32_t prim)
{
    const uint32_t *idx = p->geo->indices + 3 * (size_t)prim;
    const float *v[3];
    for (int k = 0; k < 3; k++) v[k] = p->geo->positions + 3 * (size_t)idx[k];
    rt_wtray w;
    rt_wtray_init(&w, r->ray.org, r->ray.dir);
    r->hit.prim = prim;
    if (rt_tri_intersect(&w, v[0], v[1], v[2], r->ray.tmin, r->ray.tmax, &r->hit.t, &r->hit.u,
                         &r->hit.v))
        return;
    if (!plane_hit(&r->ray, v[0], v[1], v[2], &r->hit)) rt_intersect1(p->bvh, &r->ray, &r->hit);
}

int plh_pixel_fragments(const gr_ctx *c, const plh_primary *p, int msaa, uint32_t pixel,
                        plrt_ray out[RS_MAX_SAMPLES])
{
    const pl_frame *f = p->frame;
    const uint32_t *seen = p->vis + (size_t)pixel * (size_t)msaa;
    const float px = (float)(pixel % (uint32_t)f->width) + 0.5f;
    const float py = (float)(pixel / (uint32_t)f->width) + 0.5f;
    int n = 0;
    uint32_t traced = 0;
    for (int k = 0; k < msaa; k++) {
        int j = 0;
        while (j < k && seen[j] != seen[k]) j++;
        if (j < k) continue;              /* sample j began this one's fragment */
        plrt_ray *r = &out[n++];
        memset(r, 0, sizeof *r);
        r->weight[0] = r->weight[1] = r->weight[2] = 1.0f;
        r->pixel = pixel * (uint32_t)msaa + (uint32_t)k;
        r->cone = (rt_cone){0.0f, p->spread};
        r->hit.prim = RT_NO_HIT;
        if (seen[k] == 0) continue;
        memcpy(r->ray.org, f->camera.eye, sizeof r->ray.org);
        sc_camera_ray(&f->camera, f->width, f->height, px, py, r->ray.dir);
        r->ray.tmin = 0.0f;
        r->ray.tmax = INFINITY;
        fragment_hit(p, r, seen[k] - 1);
        traced += r->hit.prim != seen[k] - 1;
    }
    plh_tally_add(&p->from_raster, c, (uint64_t)n - traced);
    plh_tally_add(&p->traced, c, traced);
    return n;
}

uint32_t plh_fragment_samples(const plh_primary *p, int msaa, uint32_t pixel, int k)
{
    const uint32_t *seen = p->vis + (size_t)pixel * (size_t)msaa;
    uint32_t mask = 0;
    for (int j = 0; j < msaa; j++) mask |= (uint32_t)(seen[j] == seen[k]) << j;
    return mask;
}

void plh_camera_hit(const plh_primary *p, int msaa, uint32_t pixel, int k, uint32_t prim, plrt_ray *r)
{
    const pl_frame *f = p->frame;
    const rs_samples *at = rs_sample_pattern(msaa);
    const float dx = k < 0 ? 0.0f : (float)at->dx[k] / 16.0f, dy = k < 0 ? 0.0f : (float)at->dy[k] / 16.0f;
    const float px = (float)(pixel % (uint32_t)f->width) + 0.5f + dx;
    const float py = (float)(pixel / (uint32_t)f->width) + 0.5f + dy;
    memset(r, 0, sizeof *r);
    r->weight[0] = r->weight[1] = r->weight[2] = 1.0f;
    r->pixel = pixel * (uint32_t)msaa + (uint32_t)(k < 0 ? 0 : k);
    r->cone = (rt_cone){0.0f, p->spread};
    memcpy(r->ray.org, f->camera.eye, sizeof r->ray.org);
    sc_camera_ray(&f->camera, f->width, f->height, px, py, r->ray.dir);
    r->ray.tmin = 0.0f;
    r->ray.tmax = INFINITY;
    fragment_hit(p, r, prim);
}
