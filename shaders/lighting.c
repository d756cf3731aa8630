/* lighting.c — the lights and view extent both shading envs start from (see the header). */
#include "shaders/lighting.h"

#include "shaders/blinn_phong.h"

#include <math.h>
#include <string.h>

int sh_lights_of(const sc_scene *s, const float eye[3], sc_light lights[SH_MAX_LIGHTS])
{
    int n = (int)(s->nlights < SH_MAX_LIGHTS ? s->nlights : SH_MAX_LIGHTS);
    if (n > 0) {                          /* else s->lights may be NULL: not read */
        memcpy(lights, s->lights, (size_t)n * sizeof *lights);
        return n;
    }
    memcpy(lights[0].position, eye, 3 * sizeof *eye);
    lights[0].color[0] = lights[0].color[1] = lights[0].color[2] = 1.0f;
    return 1;
}

sh_view_extent sh_view_extent_of(const sc_geometry *g, const sc_camera_frame *f)
{
    float d[3];
    for (int i = 0; i < 3; i++) d[i] = g->bbox_max[i] - g->bbox_min[i];
    sh_view_extent x = {INFINITY, -INFINITY, sqrtf(sh_dot3(d, d))};
    for (int k = 0; k < 8; k++) {
        float c[3] = {k & 1 ? g->bbox_max[0] : g->bbox_min[0], k & 2 ? g->bbox_max[1] : g->bbox_min[1],
                      k & 4 ? g->bbox_max[2] : g->bbox_min[2]};
        float v[3] = {c[0] - f->eye[0], c[1] - f->eye[1], c[2] - f->eye[2]};
        float z = sh_dot3(v, f->forward);
        x.nearest = fminf(x.nearest, z);
        x.farthest = fmaxf(x.farthest, z);
    }
    return x;
}
