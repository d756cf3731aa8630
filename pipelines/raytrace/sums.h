/* sums.h — what the built-in stages share about the frame's contribution sums (internal
 * to the renderer library; plugins see only the packet formats and calls of packets.h):
 * the fixed point contributions are summed in, Blend's bands of pixels and the keys
 * that reach them, how tile cutters deal tiles and clear the sums, and how a stage that
 * has its camera rays' hits sums its misses itself. */
#ifndef PIPELINES_RAYTRACE_SUMS_H
#define PIPELINES_RAYTRACE_SUMS_H

#include "compose/compose.h"
#include "pipelines/frame.h"
#include "pipelines/raytrace/packets.h"

#include <emmintrin.h>
#include <stdio.h>
#include <string.h>

/* The fixed point of a float, rounded to nearest even: what llrint gives (glibc's x86-64
 * llrint is this instruction), without the library call. A contribution is clamped to
 * +-PLRT_CONTRIB_MAX (NaN counts as 0) so Blend's int64 sums cannot overflow: 2^16 * 2^24
 * per contribution leaves room for 2^23 contributions to one pixel, more than --spp 4096
 * x (--bounces 64 + 1) x (lights + 1) can make. A pixel is white at 1. */
#define PLRT_CONTRIB_MAX 65536.0
static inline int64_t plrt_to_fixed(float x)
{
    double d = (double)x;
    if (!(d >= -PLRT_CONTRIB_MAX && d <= PLRT_CONTRIB_MAX))   /* out of range or NaN: rare */
        d = d > 0 ? PLRT_CONTRIB_MAX : d < 0 ? -PLRT_CONTRIB_MAX : 0.0;
    return _mm_cvtsd_si64(_mm_set_sd(d * PL_FIXED_ONE));
}

/* The Blend instance (subqueue) of a contribution's index: its pixel's band
 * (plrt_blend_keys, packets.h). */
static inline uint64_t plrt_blend_key(uint32_t index, const plrt_blend_keys *k)
{
    return (((uint64_t)((index >> k->shift) - k->first) * k->scale) >> 32) & k->mask;
}

/* Band `key`: pixel indices [*lo, *hi), the ones plrt_blend_key sends to it (the key
 * grows with the index, so the band starts at the first index whose product reaches
 * key * 2^32). */
static inline void plrt_blend_band(const plrt_blend_keys *k, uint32_t key, uint64_t *lo, uint64_t *hi)
{
    uint64_t from[2];
    for (int i = 0; i < 2; i++) {
        uint64_t b = (uint64_t)key + (uint64_t)i, at = k->span;
        if (b == 0) at = 0;
        else if (b <= k->mask) at = ((b << 32) + k->scale - 1) / k->scale;
        from[i] = (uint64_t)k->first + (at < k->span ? at : k->span);
    }
    *lo = from[0];
    *hi = from[1];
}

/* How the copies of a stage that cuts the image into tiles (rt.tiler, the hybrid's
 * raster.ztile) share the tiles: copy k takes the tiles whose first pixel lies in one of
 * `bands` equal pixel bands (plrt_blend_key) numbered k modulo the copies. With `bands`
 * the Blend instances', each copy's rays end in Blend bands of their own, so a worker
 * that runs one copy sums into pixels no other worker touches. Bands thinner than a row
 * of tiles are merged in pairs until they are not (else some bands would hold no tile's
 * first pixel and their copies would get no work). Each tile goes to exactly one copy. */
typedef struct plrt_tile_deal {
    plrt_blend_keys bands;
    uint32_t copies;
    int width;
    int samples;                          /* sums per pixel: the frame's samples */
    int64_t *sums;                        /* the frame's, which the cutter clears a tile at
                                             a time (plrt_tile_cutter_init) */
} plrt_tile_deal;

/* The frame's sums: "sums", or with the hybrid's multisampling (msaa > 1) "sample-sums",
 * msaa slots per pixel (rt.blend). */
static inline const char *plrt_sums_name(int msaa)
{
    return msaa > 1 ? "sample-sums" : "sums";
}

/* false when bands is not a power of two. */
static inline bool plrt_tile_deal_init(plrt_tile_deal *d, const pl_frame *f, uint32_t bands,
                                      int tile, uint32_t copies)
{
    d->copies = copies ? copies : 1;
    d->width = f->width;
    d->samples = f->samples > 1 ? f->samples : 1;
    if (!plrt_blend_keys_of(f, bands, &d->bands)) return false;
    uint64_t tile_row = (uint64_t)tile * (uint64_t)(f->region.x1 - f->region.x0);
    while (bands > 1 && d->bands.span / bands < tile_row) bands /= 2;
    return plrt_blend_keys_of(f, bands, &d->bands);
}

/* A copy of a tile cutter (rt.tiler, raster.ztile; stage i, whose type declares the
 * frame's "sums" overwritten): its share of the tiles (plrt_tile_deal_init), and the
 * sums, which it clears a tile at a time (plrt_clear_tile_sums) so that rt.blend need
 * not. false with a message in err when bands is not a power of two or the sums cannot
 * be had. */
static inline bool plrt_tile_cutter_init(plrt_tile_deal *d, const cp_stage_init *i,
                                         uint32_t bands, int tile, uint32_t copies,
                                         char err[CP_ERR_MAX])
{
    if (!plrt_tile_deal_init(d, i->frame, bands, tile, copies)) {
        snprintf(err, CP_ERR_MAX, "bands = %u: not a power of two", bands);
        return false;
    }
    return (d->sums = pl_frame_use(i, plrt_sums_name(d->samples), err)) != NULL;
}

/* The copy that takes the tile whose first pixel is (x, y). */
static inline uint32_t plrt_tile_copy(const plrt_tile_deal *d, int x, int y)
{
    uint32_t pixel = (uint32_t)y * (uint32_t)d->width + (uint32_t)x;
    return (uint32_t)(plrt_blend_key(pixel, &d->bands) % d->copies);
}

/* The stage that cuts tile t (whole pixels of the frame's region) clears their sums
 * before it hands the tile on: every contribution to them comes from the tile's own
 * samples, so after this. rt.blend then clears nothing (plrt_cutters_clear_sums):
 * when Blend cleared its band at its first activation, its subqueue filled meanwhile and,
 * a queue set being full while any subqueue is, held every Shade task back. */
static inline void plrt_clear_tile_sums(const plrt_tile_deal *d, int x0, int y0, int x1, int y1)
{
    const size_t per_pixel = (size_t)d->samples * 3;
    for (int y = y0; y < y1; y++)
        memset(d->sums + ((size_t)y * (size_t)d->width + (size_t)x0) * per_pixel, 0,
               (size_t)(x1 - x0) * per_pixel * sizeof *d->sums);
}

/* A stage that has its camera rays' hits (rt.primary with `trace`, hybrid.visible) may
 * add the background of those that missed to their pixels' sums itself and drop them,
 * instead of sending them to rt.shade, which would push exactly that (the ray's weight
 * times the background in colour; nothing for an AOV) for rt.blend to add: the sums are
 * the same integers, and on a scene with much background most Shade tasks and
 * contributions were misses'. Only with one sample per pixel after a cutter that clears
 * the sums (plrt_cutters_clear_sums), where it cannot race: the cutter cleared the
 * pixel's sums before it sent the run, a missed pixel has no other sample for anything
 * else to add, and rt.blend encodes the sums after its input ends, after this task. */

/* true when stage i's graph has a tile cutter, which clears the sums (its type declares
 * them overwritten). */
static inline bool plrt_cutters_clear_sums(const cp_stage_init *i)
{
    return ((cp_instance_resource_access(i->instance, "sums") |
             cp_instance_resource_access(i->instance, "sample-sums")) & CP_OVERWRITES) != 0;
}

/* What such a stage needs to sum its misses: the background (NULL: it does not), the
 * frame's sums and width, the AOV, and whether the graph's cutters clear the sums. */
typedef struct plrt_misses {
    const float *background;
    int64_t *sums;
    int width;
    sh_aov aov;
    bool cutters_clear_sums;
} plrt_misses;

/* Such a stage's create hook, for its `background` parameter (`asked`): the frame's
 * background with the sums made, or no background when not asked. false with a
 * message in err when the sums cannot be had. */
static inline bool plrt_misses_init(plrt_misses *m, const cp_stage_init *i, bool asked,
                                    char err[CP_ERR_MAX])
{
    const pl_frame *f = i->frame;
    *m = (plrt_misses){NULL, NULL, f->width, f->aov, plrt_cutters_clear_sums(i)};
    if (!asked) return true;
    m->background = pl_frame_ray_env(i->frame)->background;
    return (m->sums = pl_frame_use(i, plrt_sums_name(f->samples), err)) != NULL;
}

/* Adds the misses among rays[0..n) (all camera rays, traced) to the sums; returns how
 * many are left: the hits, packed to the front in their order. */
static inline uint32_t plrt_sum_misses(const plrt_misses *m, plrt_ray *rays, uint32_t n)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (rays[i].hit.prim != RT_NO_HIT) {
            if (kept != i) rays[kept] = rays[i];
            kept++;
        } else if (m->aov == SH_AOV_COLOR) {
            int64_t *sums = m->sums + (size_t)rays[i].pixel * 3;
            for (int ch = 0; ch < 3; ch++)
                sums[ch] += plrt_to_fixed(rays[i].weight[ch] * m->background[ch]);
        }
    }
    return kept;
}

/* The end of such a stage's task: with `background` (the frame's, else NULL) and where
 * allowed, the misses summed and the packet `out` of output slot `output` left with the
 * hits, or not sent when none is left. */
static inline void plrt_drop_misses(gr_ctx *c, int output, void *out, const plrt_misses *m,
                                    int spp, plrt_ray *rays, uint32_t n)
{
    if (!m->background || spp != 1 || !m->cutters_clear_sums) return;
    uint32_t kept = plrt_sum_misses(m, rays, n);
    if (kept) gr_set_count(out, kept);
    else gr_discard(c, output);          /* all background: no Shade task */
}

#endif
