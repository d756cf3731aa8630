/* sample_runs.c — see sample_runs.h. */
#include "pipelines/raytrace/sample_runs.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static uint32_t hash32(uint32_t x)
{
    x ^= x >> 16; x *= 0x7feb352d; x ^= x >> 15; x *= 0x846ca68b; x ^= x >> 16;
    return x;
}

/* Sample position: the pixel centre for one sample, else jittered from a fixed hash. */
static void sample_pos(int width, int spp, int x, int y, int k, float *px, float *py)
{
    if (spp == 1) { *px = x + 0.5f; *py = y + 0.5f; return; }
    uint32_t h = hash32((uint32_t)(y * width + x) * 9781u + (uint32_t)k * 6271u + 1);
    *px = x + (float)(h & 0xffff) / 65536.0f;
    *py = y + (float)(h >> 16) / 65536.0f;
}

/* Where a run is: the block (clipped to the tile), the pixel in it, the sample. */
typedef struct run_cursor { int bx, by, x1, y1, x, y, k; } run_cursor;

static void enter_block(run_cursor *u, const plrt_tile *t, int bx, int by)
{
    u->bx = bx;
    u->by = by;
    u->x1 = bx + PLRT_BLOCK < t->x1 ? bx + PLRT_BLOCK : t->x1;
    u->y1 = by + PLRT_BLOCK < t->y1 ? by + PLRT_BLOCK : t->y1;
}

/* The cursor at sample `first` of the block at (bx, by): one division per packet. */
static run_cursor run_start(const plrt_sample_run *r, int spp)
{
    run_cursor u;
    enter_block(&u, &r->tile, r->bx, r->by);
    uint32_t pixel = r->first / (uint32_t)spp, w = (uint32_t)(u.x1 - u.bx);
    u.x = u.bx + (int)(pixel % w);
    u.y = u.by + (int)(pixel / w);
    u.k = (int)(r->first % (uint32_t)spp);
    return u;
}

/* The next sample in the Tiler's order (plrt_sample_run). */
static void run_advance(run_cursor *u, const plrt_tile *t, int spp)
{
    if (++u->k < spp) return;
    u->k = 0;
    if (++u->x < u->x1) return;
    u->x = u->bx;
    if (++u->y < u->y1) return;
    if (u->x1 < t->x1) enter_block(u, t, u->x1, u->by);
    else enter_block(u, t, t->x0, u->y1);
    u->x = u->bx;
    u->y = u->by;
}


void plrt_runs_init(plrt_run_cutter *r, int spp, uint32_t samples, int output)
{
    memset(r, 0, sizeof *r);
    r->spp = spp;
    r->samples = samples;
    r->output = output;
}

void plrt_runs_flush(plrt_run_cutter *r, gr_ctx *c)
{
    if (r->n == 0) return;
    gr_window w;
    gr_reserve_out(c, r->output, (uint32_t)r->n, &w);
    memcpy(w.mem, r->run, (size_t)r->n * sizeof *r->run);
    gr_commit_out(c, r->output, (uint32_t)r->n);
    r->n = 0;
}

/* Ends the open run if it has samples and opens an empty one; a full batch is sent. */
static void close_run(plrt_run_cutter *r, gr_ctx *c)
{
    if (r->run[r->n].count == 0) return;
    if (++r->n == PLRT_RUN_BATCH) plrt_runs_flush(r, c);
    r->run[r->n].count = 0;
}

void plrt_runs_cut_block(plrt_run_cutter *r, gr_ctx *c, const plrt_tile *t, int bx, int by)
{
    const int w = bx + PLRT_BLOCK < t->x1 ? PLRT_BLOCK : t->x1 - bx;
    const int h = by + PLRT_BLOCK < t->y1 ? PLRT_BLOCK : t->y1 - by;
    uint32_t left = (uint32_t)(w * h * r->spp), first = 0;
    while (left) {
        plrt_sample_run *run = &r->run[r->n];
        if (run->count == 0) *run = (plrt_sample_run){*t, bx, by, first, 0};
        uint32_t take = r->samples - run->count < left ? r->samples - run->count : left;
        run->count += take;
        first += take;
        left -= take;
        if (run->count == r->samples) close_run(r, c);
    }
}

void plrt_runs_end(plrt_run_cutter *r, gr_ctx *c)
{
    close_run(r, c);
}

void plrt_runs_cut(plrt_run_cutter *r, gr_ctx *c, const plrt_tile *t)
{
    for (int by = t->y0; by < t->y1; by += PLRT_BLOCK)
        for (int bx = t->x0; bx < t->x1; bx += PLRT_BLOCK) plrt_runs_cut_block(r, c, t, bx, by);
    plrt_runs_end(r, c);
}

/* Whether the run lies in a width x height image: its tile inside it and its block
 * inside the tile. A run is data (a plugin stage may have written it); one that is not
 * gives no samples, so that no pixel index is made from it. */
static bool run_in_image(const plrt_sample_run *r, int width, int height)
{
    const plrt_tile *t = &r->tile;
    return t->x0 >= 0 && t->x0 < t->x1 && t->x1 <= width && t->y0 >= 0 && t->y0 < t->y1 &&
           t->y1 <= height && r->bx >= t->x0 && r->bx < t->x1 && r->by >= t->y0 && r->by < t->y1;
}

uint32_t plrt_run_samples(const plrt_sample_run *r, int width, int height, int spp, plrt_sample *out)
{
    if (spp < 1 || !run_in_image(r, width, height)) return 0;
    run_cursor u = run_start(r, spp);
    uint32_t i = 0;
    for (; i < r->count && u.y < r->tile.y1; i++) {
        out[i].pixel = (uint32_t)(u.y * width + u.x);
        sample_pos(width, spp, u.x, u.y, u.k, &out[i].px, &out[i].py);
        run_advance(&u, &r->tile, spp);
    }
    return i;
}

uint32_t plrt_run_samples_checked(gr_ctx *c, const plrt_sample_run *r, uint32_t room, int width,
                                  int height, int spp, plrt_sample *out)
{
    const plrt_tile *t = &r->tile;
    uint32_t n = r->count <= room ? plrt_run_samples(r, width, height, spp, out) : 0;
    if (n == r->count) return n;
    char why[200];
    snprintf(why, sizeof why, "a sample run of %u samples from %u, tile (%d, %d)-(%d, %d), block (%d, "
             "%d): %u of them in this %dx%d image at %d samples per pixel (room for %u)", r->count,
             r->first, t->x0, t->y0, t->x1, t->y1, r->bx, r->by, n, width, height, spp, room);
    gr_assert_at(c, false, why, __FILE__, __LINE__);
    return 0;
}

bool plrt_surface_ray(const pl_frame *f, const plrt_ray *h)
{
    if (h->depth || h->layers || h->hit.prim == RT_NO_HIT || !(h->weight[0] > 0.0f)) return false;
    const float spp = rintf(1.0f / h->weight[0]);
    const uint32_t pixel = h->pixel, width = (uint32_t)f->width;
    if (!(spp >= 1.0f && spp <= (float)PL_MAX_SPP) || pixel >= width * (uint32_t)f->height) return false;
    float px, py, d[3];
    sample_pos(f->width, (int)spp, (int)(pixel % width), (int)(pixel / width), 0, &px, &py);
    sc_camera_ray(&f->camera, f->width, f->height, px, py, d);
    return !memcmp(d, h->ray.dir, sizeof d);
}
