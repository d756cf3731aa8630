/* frames.c — rank 0's images under assembly (see frames.h). */
#include "tools/mpi/frames.h"

#include <stdlib.h>
#include <string.h>

bool mp_frames_init(mp_frames *f, const mp_plan *p)
{
    size_t n = (size_t)p->frames;
    *f = (mp_frames){.plan = *p, .image = calloc(n, sizeof *f->image),
                     .left = calloc(n, sizeof *f->left), .start_ms = calloc(n, sizeof(double)),
                     .end_ms = calloc(n, sizeof(double))};
    if (!f->image || !f->left || !f->start_ms || !f->end_ms) { mp_frames_free(f); return false; }
    for (size_t i = 0; i < n; i++) f->left[i] = p->per_frame;
    return true;
}

void mp_frames_free(mp_frames *f)
{
    if (f->image)
        for (int i = 0; i < f->plan.frames; i++) free(f->image[i]);
    free(f->image);
    free(f->left);
    free(f->start_ms);
    free(f->end_ms);
    *f = (mp_frames){0};
}

bool mp_frames_begin(mp_frames *f, const mp_chunk *c, double now_ms)
{
    int i = c->frame;
    if (f->image[i]) return true;
    f->image[i] = malloc((size_t)f->plan.width * f->plan.height * 4);
    f->start_ms[i] = now_ms;
    return f->image[i] != NULL;
}

void mp_frames_put(mp_frames *f, const mp_chunk *c, const uint8_t *pixels, double now_ms)
{
    int i = c->frame;
    const pl_region *r = &c->region;
    size_t row = (size_t)(r->x1 - r->x0) * 4;
    for (int y = r->y0; y < r->y1; y++)
        memcpy(f->image[i] + ((size_t)y * f->plan.width + r->x0) * 4,
               pixels + (size_t)(y - r->y0) * row, row);
    if (--f->left[i] > 0) return;
    f->end_ms[i] = now_ms;
    if (i != f->plan.frames - 1) {
        free(f->image[i]);
        f->image[i] = NULL;
    }
}

bool mp_frames_complete(const mp_frames *f)
{
    for (int i = 0; i < f->plan.frames; i++)
        if (f->left[i]) return false;
    return true;
}

const uint8_t *mp_frames_last(const mp_frames *f) { return f->image[f->plan.frames - 1]; }

double mp_frames_ms(const mp_frames *f, int frame) { return f->end_ms[frame] - f->start_ms[frame]; }
