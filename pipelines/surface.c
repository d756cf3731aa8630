/* surface.c — the frame resource "surface": view depth and normal of each pixel's
 * visible surface, and how the stages compute them (see the header). */
#include "pipelines/surface.h"
#include "pipelines/frame_internal.h"

#include "shaders/blinn_phong.h"

#include <math.h>

static void surface_cleared(void *frame, void *element)
{
    (void)frame;
    *(pl_surface *)element = (pl_surface){INFINITY, {0.0f, 0.0f, 0.0f}};
}

const cp_resource_type pl_surface_resource = {
    "surface", "view depth and unit world normal of each pixel's visible surface, made only "
    "when a float output reads it", "f32 z + 3 x f32 normal", sizeof(pl_surface), CP_PER_PIXEL,
    false, CP_CLEAR_EACH_RUN, NULL, NULL, NULL, surface_cleared};

bool pl_frame_stage_surface(const cp_stage_init *i, pl_surface **out, char err[CP_ERR_MAX])
{
    pl_frame *f = i->frame;
    *out = NULL;
    if (!f->surface) return true;
    f->surface_written = true;
    return (*out = pl_frame_use(i, pl_surface_resource.name, err)) != NULL;
}

void pl_frame_use_surface(pl_frame *f, pl_surface *pixels)
{
    f->surface = true;
    pl_frame_lend(f, &pl_surface_resource, pixels);
}

const pl_surface *pl_frame_surface(pl_frame *f)
{
    return f->surface_written ? pl_frame_found(f, &pl_surface_resource) : NULL;
}

/* n (unit, or zero for a degenerate normal) turned to face `view` (from the surface
 * toward the eye), as the shaders' two-sided rule turns it. */
static void face(float n[3], const float view[3])
{
    if (sh_dot3(n, view) < 0.0f)
        for (int k = 0; k < 3; k++) n[k] = -n[k];
}

pl_surface pl_surface_of_fragment(const sh_raster_env *e, const sh_ps_tri *t, float b1, float b2)
{
    const float b0 = 1.0f - b1 - b2;
    const float *eye = e->frame.eye;
    float p[3], view[3];
    pl_surface s;
    for (int k = 0; k < 3; k++) {
        p[k] = b0 * t->attr[0][k] + b1 * t->attr[1][k] + b2 * t->attr[2][k];
        s.n[k] = b0 * t->attr[0][3 + k] + b1 * t->attr[1][3 + k] + b2 * t->attr[2][3 + k];
        view[k] = eye[k] - p[k];
    }
    s.z = -sh_dot3(view, e->frame.forward);
    float len = sqrtf(sh_dot3(s.n, s.n));
    for (int k = 0; k < 3; k++) s.n[k] = len > 0.0f ? s.n[k] / len : 0.0f;
    face(s.n, view);
    return s;
}

pl_surface pl_surface_of_hit(const sh_ray_env *e, const float eye[3], const rt_ray *ray,
                             const rt_hit *hit)
{
    pl_surface s;
    float p[3];
    for (int k = 0; k < 3; k++)           /* a camera ray: exactly t d (org - eye is 0) */
        p[k] = (ray->org[k] - eye[k]) + hit->t * ray->dir[k];
    s.z = sh_dot3(p, e->forward);
    sh_ray_hit_normal(e, ray, hit, s.n);
    return s;
}
