/* frame.c — the frame object: buffers made on first request, named counters. */
#include "pipelines/frame.h"

#include "gramps/gramps.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pl_scene_data_init(pl_scene_data *d, const sc_scene *s, const sc_geometry *g)
{
    *d = (pl_scene_data){.scene = s, .geo = g};
}

void pl_scene_data_set_bvh(pl_scene_data *d, const rt_bvh *bvh)
{
    if (d->own_bvh) rt_bvh_free(d->bvh);
    d->bvh = (rt_bvh *)bvh;
    d->own_bvh = false;
}

void pl_scene_data_free(pl_scene_data *d)
{
    if (d->own_bvh) rt_bvh_free(d->bvh);
    *d = (pl_scene_data){0};
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
    sc_camera_frame_init(&f->camera, &d->scene->camera, width, height);
    return true;
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

void pl_frame_free(pl_frame *f)
{
    if (!f->color_borrowed) free(f->color);
    free(f->depth);
    free(f->accum);
    free(f->vis);
    for (int i = 0; i < f->nlayers; i++) {
        free(f->layers[i].z);
        free(f->layers[i].vis);
    }
    if (f->has_hiz) plr_hiz_free(&f->hiz);
    memset(f, 0, sizeof *f);
}

static size_t pixels(const pl_frame *f) { return (size_t)f->width * (size_t)f->height; }

const sh_raster_env *pl_frame_raster_env(pl_frame *f)
{
    if (!f->has_raster_env) {
        sh_raster_env_init(&f->raster_env, f->data->scene, f->data->geo, f->width, f->height, f->aov);
        f->has_raster_env = true;
    }
    return &f->raster_env;
}

const sh_ray_env *pl_frame_ray_env(pl_frame *f)
{
    if (!f->has_ray_env) {
        sh_ray_env_init(&f->ray_env, f->data->scene, f->data->geo, &f->camera);
        f->has_ray_env = true;
    }
    return &f->ray_env;
}

/* A buffer of 4 bytes a pixel: `buf`, or a new one that pl_frame_prepare clears whole
 * (its `bit` in `fresh`). */
static void *buffer_of(pl_frame *f, void *buf, unsigned bit)
{
    if (buf) return buf;
    buf = malloc(pixels(f) * 4);
    if (buf) f->fresh |= bit;
    return buf;
}

uint32_t *pl_frame_color_overwritten(pl_frame *f)
{
    return f->color = buffer_of(f, f->color, PL_CLEAR_COLOR);
}

uint32_t *pl_frame_color(pl_frame *f)
{
    if (!pl_frame_color_overwritten(f)) return NULL;
    f->clears |= PL_CLEAR_COLOR;
    return f->color;
}

void pl_frame_use_color(pl_frame *f, uint32_t *pixels)
{
    if (!f->color_borrowed) free(f->color);
    f->color = pixels;
    f->color_borrowed = true;
    f->fresh |= PL_CLEAR_COLOR;
}

static uint32_t far_bits(void)
{
    float far = FLT_MAX;
    uint32_t bits;
    memcpy(&bits, &far, sizeof bits);
    return bits;
}

_Atomic(uint32_t) *pl_frame_depth(pl_frame *f)
{
    if ((f->depth = buffer_of(f, (void *)f->depth, PL_CLEAR_DEPTH))) f->clears |= PL_CLEAR_DEPTH;
    return f->depth;
}

plr_hiz *pl_frame_hiz(pl_frame *f)
{
    if (!f->has_hiz) {
        if (!plr_hiz_init(&f->hiz, f->width, f->height, far_bits())) return NULL;
        f->has_hiz = true;
    }
    return &f->hiz;
}

int64_t *pl_frame_accum(pl_frame *f)
{
    if (!f->accum) f->accum = malloc(pixels(f) * 3 * sizeof *f->accum);
    return f->accum;
}

uint32_t *pl_frame_vis(pl_frame *f)
{
    if ((f->vis = buffer_of(f, f->vis, PL_CLEAR_VIS))) f->clears |= PL_CLEAR_VIS;
    return f->vis;
}

pl_depth_layer *pl_frame_depth_layer(pl_frame *f, const char *owner)
{
    for (int i = 0; i < f->nlayers; i++)
        if (!strcmp(f->layers[i].owner, owner)) return &f->layers[i];
    if (f->nlayers == PL_MAX_DEPTH_LAYERS || strlen(owner) >= PL_COUNTER_NAME) return NULL;
    pl_depth_layer *l = &f->layers[f->nlayers];
    l->z = malloc((pixels(f) + RS_DEPTH_SLACK) * sizeof *l->z);
    l->vis = malloc((pixels(f) + RS_DEPTH_SLACK) * sizeof *l->vis);
    if (!l->z || !l->vis) {
        free(l->z);
        free(l->vis);
        *l = (pl_depth_layer){0};
        return NULL;
    }
    snprintf(l->owner, sizeof l->owner, "%s", owner);
    f->nlayers++;
    return l;
}

const rt_bvh *pl_frame_bvh(pl_frame *f) { return pl_scene_data_bvh(f->data); }

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

/* ---- clearing before a run ------------------------------------------------------------ */

typedef struct clear_job {
    pl_frame *f;
    unsigned clears, fresh;
    uint32_t background, far;
} clear_job;

static void fill(uint32_t *p, size_t n, uint32_t v)
{
    for (size_t i = 0; i < n; i++) p[i] = v;
}

/* Row y of one buffer: its region part when asked for, the rest when the buffer is new. */
static void clear_row(const pl_frame *f, uint32_t *buf, int y, bool region, bool outside,
                      uint32_t v)
{
    const pl_region *r = &f->region;
    uint32_t *row = buf + (size_t)y * (size_t)f->width;
    if (y < r->y0 || y >= r->y1) {
        if (outside) fill(row, (size_t)f->width, v);
        return;
    }
    if (outside) {
        fill(row, (size_t)r->x0, v);
        fill(row + r->x1, (size_t)(f->width - r->x1), v);
    }
    if (region) fill(row + r->x0, (size_t)(r->x1 - r->x0), v);
}

static void clear_rows(void *arg, unsigned part, unsigned parts)
{
    const clear_job *j = arg;
    const pl_frame *f = j->f;
    const int y0 = (int)((int64_t)f->height * part / parts);
    const int y1 = (int)((int64_t)f->height * (part + 1) / parts);
    uint32_t *const bufs[3] = {f->color, (uint32_t *)f->depth, f->vis};
    const unsigned bits[3] = {PL_CLEAR_COLOR, PL_CLEAR_DEPTH, PL_CLEAR_VIS};
    const uint32_t values[3] = {j->background, j->far, 0};
    for (int b = 0; b < 3; b++) {
        if (!((j->clears | j->fresh) & bits[b])) continue;
        for (int y = y0; y < y1; y++)
            clear_row(f, bufs[b], y, j->clears & bits[b], j->fresh & bits[b], values[b]);
    }
}

void pl_frame_prepare(pl_frame *f, unsigned parts)
{
    if (!(f->clears | f->fresh)) return;
    clear_job j = {f, f->clears, f->fresh, 0, far_bits()};
    if ((f->clears | f->fresh) & PL_CLEAR_COLOR) j.background = sh_background(pl_frame_raster_env(f));
    if (parts > (unsigned)f->height) parts = (unsigned)f->height;
    gr_parallel(parts ? parts : 1, clear_rows, &j);
    f->clears = f->fresh = 0;
}

/* A frame no graph ran on is all background. */
const uint8_t *pl_frame_image(pl_frame *f)
{
    if (!f->color && !pl_frame_color(f)) return NULL;
    if (f->fresh & PL_CLEAR_COLOR) pl_frame_prepare(f, 1);
    return (const uint8_t *)f->color;
}
