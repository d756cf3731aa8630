/* frame.c — the frame object: its size and region, the scene data it draws, shading
 * environments, named counters and cursors (its resources: frame_resources.c). */
#include "pipelines/frame.h"
#include "pipelines/frame_internal.h"

#include "gramps/gramps.h"
#include "raytracer/bvh.h"
#include "shaders/hit_filter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pl_scene_data_init(pl_scene_data *d, const sc_scene *s, const sc_geometry *g)
{
    *d = (pl_scene_data){.scene = s, .geo = g};
}

/* The BVH's any-hit filter for the scene's alpha-tested and single-sided materials
 * (none when it has none: the kernels' fast path); false when out of memory. */
static bool attach_filter(pl_scene_data *d)
{
    bool oom = false;
    if (!d->hit_filter) d->hit_filter = sh_hit_filter_new(d->scene, d->geo, &oom);
    if (d->bvh) d->bvh->filter = sh_hit_filter_base(d->hit_filter);
    return !oom;
}

static void detach_filter(pl_scene_data *d)
{
    if (d->bvh && d->hit_filter && d->bvh->filter == sh_hit_filter_base(d->hit_filter))
        d->bvh->filter = NULL;
    sh_hit_filter_free(d->hit_filter);
    d->hit_filter = NULL;
}

static void drop_device_bvh(pl_scene_data *d)
{
    if (d->device_bvh) d->device_bvh_free(d->device_bvh);
    d->device_bvh = NULL;
}

void pl_scene_data_set_bvh(pl_scene_data *d, const rt_bvh *bvh)
{
    drop_device_bvh(d);
    detach_filter(d);
    if (d->own_bvh) rt_bvh_free(d->bvh);
    d->bvh = (rt_bvh *)bvh;
    d->own_bvh = false;
    attach_filter(d);
}

void pl_scene_data_free(pl_scene_data *d)
{
    drop_device_bvh(d);
    if (d->device_shading) d->device_shading_free(d->device_shading);
    detach_filter(d);
    if (d->own_bvh) rt_bvh_free(d->bvh);
    sh_vertices_free(d->raster_vertices);
    sh_position_buffer_free(d->depth_positions);
    *d = (pl_scene_data){0};
}

const sh_vertex *pl_scene_data_raster_vertices(pl_scene_data *d)
{
    if (!d->raster_vertices) d->raster_vertices = sh_vertices_interleave(d->geo);
    return d->raster_vertices;
}

const sh_position_buffer *pl_scene_data_depth_positions(pl_scene_data *d)
{
    if (!d->depth_positions) d->depth_positions = sh_position_buffer_of(d->geo);
    return d->depth_positions;
}

bool pl_frame_init(pl_frame *f, pl_scene_data *d, int width, int height, sh_aov aov,
                   char err[SC_ERR_MAX])
{
    memset(f, 0, sizeof *f);
    if (width <= 0 || height <= 0 || width > PL_MAX_IMAGE_SIDE || height > PL_MAX_IMAGE_SIDE) {
        snprintf(err, SC_ERR_MAX, "image size %dx%d: each side must be 1..%d", width, height,
                 PL_MAX_IMAGE_SIDE);
        return false;
    }
    f->data = d;
    f->width = width;
    f->height = height;
    f->aov = aov;
    f->region = (pl_region){0, 0, width, height};
    f->samples = 1;
    sc_camera_frame_init(&f->camera, &d->scene->camera, width, height);
    return true;
}

bool pl_frame_restart(pl_frame *f)
{
    sc_camera_frame_init(&f->camera, &f->data->scene->camera, f->width, f->height);
    f->has_raster_env = f->has_ray_env = false;
    f->hdr_written = f->surface_written = false;
    for (int i = 0; i < f->ncounters; i++) atomic_store(&f->counters[i].value, 0);
    return pl_frame_remake_created(f);
}

bool pl_frame_set_region(pl_frame *f, pl_region r, char err[SC_ERR_MAX])
{
    if (r.x0 < 0 || r.y0 < 0 || r.x1 > f->width || r.y1 > f->height || r.x0 >= r.x1 || r.y0 >= r.y1) {
        snprintf(err, SC_ERR_MAX, "region %d,%d-%d,%d is empty or outside the %dx%d image",
                 r.x0, r.y0, r.x1, r.y1, f->width, f->height);
        return false;
    }
    f->region = r;
    return true;
}

bool pl_frame_set_samples(pl_frame *f, int samples, char err[CP_ERR_MAX])
{
    bool made = false;
    for (int i = 0; i < f->nresources; i++) made |= f->resources[i].type->extent == CP_PER_SAMPLE;
    if (samples >= 1 && samples <= PL_MAX_MSAA && (samples == f->samples || !made)) {
        f->samples = samples;
        return true;
    }
    snprintf(err, CP_ERR_MAX, "%d samples per pixel: the frame's sample buffers have %d "
             "(1..%d, one count for every stage of a graph)", samples, f->samples, PL_MAX_MSAA);
    return false;
}

int pl_samples_per_pixel(const cp_stage_init *i)
{
    const pl_frame *f = i->frame;
    return f->aov == SH_AOV_COLOR ? (int)cp_int(i, "spp") : 1;
}

void pl_frame_free(pl_frame *f)
{
    pl_frame_free_resources(f);
    memset(f, 0, sizeof *f);
}

const sh_raster_env *pl_frame_raster_env(pl_frame *f)
{
    if (!f->has_raster_env) {
        sh_raster_env_init(&f->raster_env, f->data->scene, f->data->geo, f->width, f->height, f->aov);
        f->has_raster_env = true;
    }
    return &f->raster_env;
}

bool pl_frame_set_background(pl_frame *f, const float rgb[3])
{
    if (!pl_frame_raster_env(f)) return false;
    for (int c = 0; c < 3; c++) f->raster_env.background[c] = rgb[c];
    return true;
}

const sh_ray_env *pl_frame_ray_env(pl_frame *f)
{
    if (!f->has_ray_env) {
        sh_ray_env_init(&f->ray_env, f->data->scene, f->data->geo, &f->camera);
        f->has_ray_env = true;
    }
    return &f->ray_env;
}

/* The BVH build's tasks on the parked threads (rt_executor over gr_parallel): each part
 * takes the next task until none is left, so uneven tasks even out. */
typedef struct task_list {
    size_t n;
    void (*task)(void *arg, size_t i);
    void *arg;
    _Atomic(size_t) next;
} task_list;

static void run_tasks(void *list, unsigned part, unsigned parts)
{
    (void)part, (void)parts;
    task_list *l = list;
    for (size_t i; (i = atomic_fetch_add(&l->next, 1)) < l->n;) l->task(l->arg, i);
}

static void for_each_on_parked_threads(void *width, size_t n, void (*task)(void *, size_t),
                                       void *arg)
{
    task_list l = {n, task, arg, 0};
    unsigned w = *(const unsigned *)width;
    gr_parallel(n < w ? (unsigned)n : w, run_tasks, &l);
}

const rt_bvh *pl_scene_data_bvh(pl_scene_data *d)
{
    if (!d->bvh) {
        unsigned w = gr_parallel_parts(d->build_threads);
        const rt_executor ex = {for_each_on_parked_threads, &w, w};
        d->bvh = rt_bvh_build_on(d->geo->positions, d->geo->indices, d->geo->ntriangles, NULL,
                                 w > 1 ? &ex : NULL);
        d->own_bvh = d->bvh != NULL;
        if (d->bvh && !attach_filter(d)) return NULL;
    }
    return d->bvh;
}

_Atomic(uint64_t) *pl_frame_counter(pl_frame *f, const char *name)
{
    for (int i = 0; i < f->ncounters; i++)
        if (!strcmp(f->counters[i].name, name)) return &f->counters[i].value;
    if (f->ncounters == PL_MAX_COUNTERS) return NULL;
    pl_counter *c = &f->counters[f->ncounters++];
    snprintf(c->name, sizeof c->name, "%s", name);
    atomic_init(&c->value, 0);
    return &c->value;
}

_Atomic(uint32_t) *pl_frame_cursor(pl_frame *f, const char *name)
{
    for (int i = 0; i < f->ncursors; i++)
        if (!strcmp(f->cursors[i].name, name)) {
            atomic_store(&f->cursors[i].next, 0);
            return &f->cursors[i].next;
        }
    if (f->ncursors == PL_MAX_CURSORS) return NULL;
    pl_cursor *c = &f->cursors[f->ncursors++];
    snprintf(c->name, sizeof c->name, "%s", name);
    atomic_init(&c->next, 0);
    return &c->next;
}

uint64_t pl_frame_count(const pl_frame *f, const char *name)
{
    for (int i = 0; i < f->ncounters; i++)
        if (!strcmp(f->counters[i].name, name)) return atomic_load(&f->counters[i].value);
    return 0;
}
