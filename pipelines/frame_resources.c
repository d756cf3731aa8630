/* frame_resources.c — the frame as a registry of resources: made when a stage asks for
 * one its type declares, cleared before each run as their types and the accesses asked
 * say, freed with the frame. Also the resources every renderer may share. */
#include "pipelines/frame.h"
#include "pipelines/frame_internal.h"

#include "gramps/gramps.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t pixels(const pl_frame *f) { return (size_t)f->width * (size_t)f->height; }

static pl_resource *find(pl_frame *f, const cp_resource_type *t, const char *owner)
{
    for (int i = 0; i < f->nresources; i++)
        if (f->resources[i].type == t && !strcmp(f->resources[i].owner, owner))
            return &f->resources[i];
    return NULL;
}

static int copies_of(const pl_frame *f, const cp_resource_type *t)
{
    int n = 0;
    for (int i = 0; i < f->nresources; i++) n += f->resources[i].type == t;
    return n;
}

static bool has_room(const pl_frame *f, const cp_resource_type *t, const char *owner)
{
    return f->nresources < PL_MAX_RESOURCES && strlen(owner) < PL_COUNTER_NAME &&
           (!t->per_copy || copies_of(f, t) < PL_MAX_COPIES_PER_RESOURCE);
}

/* A new entry for t holding data (the caller checked has_room). */
static pl_resource *add(pl_frame *f, const cp_resource_type *t, const char *owner, void *data)
{
    pl_resource *r = &f->resources[f->nresources++];
    *r = (pl_resource){.type = t, .data = data, .fresh = t->clear == CP_CLEAR_EACH_RUN};
    snprintf(r->owner, sizeof r->owner, "%s", owner);
    return r;
}

/* A new entry for t, its data made (a plain array: extent x element_bytes, uncleared
 * until pl_frame_prepare). NULL when full or out of memory. */
static pl_resource *make(pl_frame *f, const cp_resource_type *t, const char *owner)
{
    if (!has_room(f, t, owner)) return NULL;
    size_t per_pixel = t->extent == CP_PER_SAMPLE ? (size_t)f->samples : 1;
    void *data = t->create ? t->create(f, owner) : malloc(pixels(f) * per_pixel * t->element_bytes);
    return data ? add(f, t, owner, data) : NULL;
}

void *pl_frame_resource(pl_frame *f, const cp_resource_type *t, unsigned access,
                        const char *owner)
{
    pl_resource *r = find(f, t, owner);
    if (!r && !(r = make(f, t, owner))) return NULL;
    if ((access & (CP_READS | CP_WRITES)) && !(access & CP_OVERWRITES) &&
        t->clear == CP_CLEAR_EACH_RUN)
        r->clear_owed = true;
    return r->data;
}

void *pl_frame_use(const cp_stage_init *i, const char *name, char err[CP_ERR_MAX])
{
    unsigned access = 0;
    const cp_resource_type *t = cp_stage_resource(i, name, &access);
    if (!t) {
        snprintf(err, CP_ERR_MAX, "stage '%s': its type '%s' asks for frame resource '%s' "
                 "without declaring it", i->name, i->type->name, name);
        return NULL;
    }
    void *data = pl_frame_resource(i->frame, t, access, t->per_copy ? i->name : "");
    if (!data)
        snprintf(err, CP_ERR_MAX, "stage '%s': no frame resource '%s' (out of memory, more "
                 "than %d resources, more than %d copies of one, or a stage name of %d "
                 "characters or more)", i->name, name, PL_MAX_RESOURCES,
                 PL_MAX_COPIES_PER_RESOURCE, PL_COUNTER_NAME);
    return data;
}

int pl_frame_resource_index(const pl_frame *f, const void *data)
{
    for (int i = 0; i < f->nresources; i++)
        if (f->resources[i].data == data) return i;
    return -1;
}

void *pl_frame_resource_at(const pl_frame *f, int index, const char *name)
{
    if (index < 0 || index >= f->nresources || strcmp(f->resources[index].type->name, name))
        return NULL;
    return f->resources[index].data;
}

void pl_frame_free_resources(pl_frame *f)
{
    for (int i = 0; i < f->nresources; i++) {
        pl_resource *r = &f->resources[i];
        if (r->borrowed || !r->data) continue;   /* a failed pl_frame_remake_created */
        if (r->type->destroy) r->type->destroy(r->data);
        else free(r->data);
    }
    f->nresources = 0;
}

/* Freed before made again, so that the allocator hands the same (resident) memory back
 * instead of new pages to fault in; per-scene and CP_CLEAR_KEEP ones are kept. A failure
 * leaves that resource without data: the frame is then only for pl_frame_free. */
bool pl_frame_remake_created(pl_frame *f)
{
    for (int i = 0; i < f->nresources; i++) {
        pl_resource *r = &f->resources[i];
        if (r->borrowed || !r->type->create || r->type->extent == CP_PER_SCENE ||
            r->type->clear == CP_CLEAR_KEEP)
            continue;
        if (r->type->destroy) r->type->destroy(r->data);
        else free(r->data);
        if (!(r->data = r->type->create(f, r->owner))) return false;
    }
    return true;
}

uint32_t *pl_frame_color(pl_frame *f)
{
    return pl_frame_resource(f, &pl_color_resource, CP_WRITES, "");
}

uint32_t *pl_frame_image_pixels(pl_frame *f)
{
    pl_resource *r = find(f, &pl_color_resource, "");
    return r ? r->data : pl_frame_color(f);
}

void pl_frame_use_color(pl_frame *f, uint32_t *pixels)
{
    pl_resource *r = find(f, &pl_color_resource, "");
    if (!r && has_room(f, &pl_color_resource, "")) r = add(f, &pl_color_resource, "", NULL);
    if (!r) return;                       /* only with a full table: keeps its own image */
    if (!r->borrowed) free(r->data);
    r->data = pixels;
    r->borrowed = r->fresh = true;
}

bool pl_frame_sink_hdr(const cp_stage_init *i, float **out, char err[CP_ERR_MAX])
{
    pl_frame *f = i->frame;
    *out = NULL;
    if (!f->hdr || f->aov != SH_AOV_COLOR) return true;
    f->hdr_written = true;
    return (*out = pl_frame_use(i, pl_hdr_resource.name, err)) != NULL;
}

const float *pl_frame_hdr(pl_frame *f)
{
    pl_resource *r = find(f, &pl_hdr_resource, "");
    return r && f->hdr_written ? r->data : NULL;
}

void pl_frame_lend(pl_frame *f, const cp_resource_type *t, void *pixels)
{
    pl_resource *r = find(f, t, "");
    if (!r && has_room(f, t, "")) r = add(f, t, "", NULL);
    if (!r) return;                       /* only with a full table: keeps its own */
    if (!r->borrowed) free(r->data);
    r->data = pixels;
    r->borrowed = r->fresh = true;
}

void *pl_frame_found(pl_frame *f, const cp_resource_type *t)
{
    pl_resource *r = find(f, t, "");
    return r ? r->data : NULL;
}

void pl_frame_use_hdr(pl_frame *f, float *pixels)
{
    f->hdr = true;
    pl_frame_lend(f, &pl_hdr_resource, pixels);
}

double pl_resource_bytes(const cp_resource_type *t, int width, int height, int samples,
                         long tile, size_t triangles)
{
    const double px = (double)width * height, side = tile > 0 ? (double)tile : 64.0;
    switch (t->extent) {
    case CP_PER_PIXEL: return px * (double)t->element_bytes;
    case CP_PER_SAMPLE: return px * (samples > 1 ? samples : 1) * (double)t->element_bytes;
    case CP_PER_TILE:
        return ((double)width / side + 1) * ((double)height / side + 1) * (double)t->element_bytes;
    case CP_PER_SCENE: return (double)triangles * (double)t->element_bytes;
    }
    return 0;
}

/* ---- clearing before a run ------------------------------------------------------------ */

/* The cleared value of one element: PL_MAX_CLEAR_WORDS 32-bit words at most (an RGBA
 * float pixel). */
#define PL_MAX_CLEAR_WORDS 4

typedef struct clear_value {
    uint32_t w[PL_MAX_CLEAR_WORDS];
    size_t n;                             /* words per element */
} clear_value;

typedef struct clear_job {
    pl_frame *f;
    clear_value values[PL_MAX_RESOURCES];
} clear_job;

static void fill_words(uint32_t *p, size_t n, uint32_t w)
{
    for (size_t i = 0; i < n; i++) p[i] = w;
}

/* n elements of v->n words each (the words copied out first: p cannot alias them, and
 * the one-word loop stays the plain fill it was before wider elements). */
static void fill(uint32_t *p, size_t n, const clear_value *v)
{
    if (v->n == 1) {
        fill_words(p, n, v->w[0]);
        return;
    }
    uint32_t w[PL_MAX_CLEAR_WORDS];
    const size_t k = v->n;
    memcpy(w, v->w, sizeof w);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < k; j++) p[i * k + j] = w[j];
}

/* Row y of one buffer of k elements a pixel: its region part when owed, the rest when
 * the buffer is new. */
static void clear_row(const pl_frame *f, uint32_t *buf, size_t k, int y, bool region,
                      bool outside, const clear_value *v)
{
    const pl_region *r = &f->region;
    uint32_t *row = buf + (size_t)y * (size_t)f->width * k * v->n;
    if (y < r->y0 || y >= r->y1) {
        if (outside) fill(row, (size_t)f->width * k, v);
        return;
    }
    if (outside) {
        fill(row, (size_t)r->x0 * k, v);
        fill(row + (size_t)r->x1 * k * v->n, (size_t)(f->width - r->x1) * k, v);
    }
    if (region) fill(row + (size_t)r->x0 * k * v->n, (size_t)(r->x1 - r->x0) * k, v);
}

static bool owes_clear(const pl_resource *r)
{
    return r->type->clear == CP_CLEAR_EACH_RUN && (r->clear_owed || r->fresh);
}

static void clear_rows(void *arg, unsigned part, unsigned parts)
{
    const clear_job *j = arg;
    const pl_frame *f = j->f;
    const int y0 = (int)((int64_t)f->height * part / parts);
    const int y1 = (int)((int64_t)f->height * (part + 1) / parts);
    for (int b = 0; b < f->nresources; b++) {
        const pl_resource *r = &f->resources[b];
        if (!owes_clear(r)) continue;
        for (int y = y0; y < y1; y++)
            clear_row(f, r->data, r->type->extent == CP_PER_SAMPLE ? (size_t)f->samples : 1, y,
                      r->clear_owed, r->fresh, &j->values[b]);
    }
}

void pl_frame_prepare(pl_frame *f, unsigned parts)
{
    clear_job j = {.f = f};
    bool any = false;
    for (int i = 0; i < f->nresources; i++) {
        const pl_resource *r = &f->resources[i];
        if (!owes_clear(r)) continue;
        any = true;
        clear_value *v = &j.values[i];
        v->n = r->type->clear_element ? r->type->element_bytes / 4 : 1;
        if (r->type->clear_element) r->type->clear_element(f, v->w);
        else v->w[0] = r->type->clear_value ? r->type->clear_value(f) : 0;
    }
    if (!any) return;
    if (parts > (unsigned)f->height) parts = (unsigned)f->height;
    gr_parallel(parts ? parts : 1, clear_rows, &j);
    for (int i = 0; i < f->nresources; i++) f->resources[i].clear_owed = f->resources[i].fresh = false;
}

/* A frame no graph ran on is all background. */
const uint8_t *pl_frame_image(pl_frame *f)
{
    if (!pl_frame_image_pixels(f)) return NULL;
    const pl_resource *r = find(f, &pl_color_resource, "");
    if (r->fresh) pl_frame_prepare(f, 1);
    return (const uint8_t *)r->data;
}
