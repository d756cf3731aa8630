/* float_aovs.c — colour (the sinks' linear colour, or decoded), depth and normal by one ray a pixel (see the header). */
#include "tools/common/float_aovs.h"

#include "pipelines/image/image.h"
#include "raytracer/trace.h"
#include "shaders/ray_shading.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const names[FA_CHANNELS] = {"R", "G", "B", "A", "Z", "N.X", "N.Y", "N.Z"};

/* The sinks' linear colour, as it is: values above 1 kept. */
static void split_colour(const float *hdr, size_t n, float *plane[4])
{
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 4; c++) plane[c][i] = hdr[4 * i + c];
}

static void decode_colour(const uint8_t *rgba, size_t n, float *plane[4])
{
    for (size_t i = 0; i < n; i++) {
        for (int c = 0; c < 3; c++) plane[c][i] = pli_decode_srgb8(rgba[4 * i + c]);
        plane[3][i] = rgba[4 * i + 3] / 255.0f;
    }
}

/* Pixel (x, y)'s ray through its centre: depth into z, normal into n[3]. */
static void cast(const sh_ray_env *env, const rt_bvh *bvh, const sc_camera_frame *f, int w,
                 int h, int x, int y, float *z, float n[3])
{
    rt_ray ray = {.tmin = 0.0f, .tmax = INFINITY};
    memcpy(ray.org, f->eye, sizeof ray.org);
    sc_camera_ray(f, w, h, (float)x + 0.5f, (float)y + 0.5f, ray.dir);
    rt_hit hit;
    if (!rt_intersect1(bvh, &ray, &hit)) {
        *z = INFINITY;
        n[0] = n[1] = n[2] = 0.0f;
        return;
    }
    *z = hit.t * (ray.dir[0] * f->forward[0] + ray.dir[1] * f->forward[1] + ray.dir[2] * f->forward[2]);
    sh_ray_hit_normal(env, &ray, &hit, n);
}

bool fa_make(pl_scene_data *d, int width, int height, const uint8_t *rgba, const float *hdr,
             io_exr_channel ch[FA_CHANNELS])
{
    size_t n = (size_t)width * height;
    float *plane[FA_CHANNELS];
    bool ok = true;
    for (int c = 0; c < FA_CHANNELS; c++) {
        ch[c] = (io_exr_channel){names[c], plane[c] = malloc(n * sizeof(float))};
        ok = ok && plane[c];
    }
    const rt_bvh *bvh = ok ? pl_scene_data_bvh(d) : NULL;
    if (!bvh) return false;
    if (hdr) split_colour(hdr, n, plane);
    else decode_colour(rgba, n, plane);
    sc_camera_frame f;
    sc_camera_frame_init(&f, &d->scene->camera, width, height);
    sh_ray_env env;
    sh_ray_env_init(&env, d->scene, d->geo, &f);
    for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++) {
            size_t i = (size_t)y * width + x;
            float nrm[3];
            cast(&env, bvh, &f, width, height, x, y, &plane[4][i], nrm);
            for (int c = 0; c < 3; c++) plane[5 + c][i] = nrm[c];
        }
    return true;
}

void fa_free(io_exr_channel ch[FA_CHANNELS])
{
    for (int c = 0; c < FA_CHANNELS; c++) free((void *)ch[c].data);
}
