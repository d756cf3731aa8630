/* packets.h — the packet formats of the ray-tracing stages, for graph files and
 * for plugin stages that read or make them (examples/plugins/ao.c).
 *
 * Every format but rt.tile is a Collection with a 16-byte header (element count first)
 * so elements stay 16-byte aligned. A ray carries its pixel, depth and weight; a
 * contribution is (pixel, RGB in PL_FIXED_ONE fixed point), summed by rt.blend in
 * integers, so the image is the same whatever order contributions arrive in and
 * whichever Blend instance adds them. */
#ifndef PIPELINES_RAYTRACE_PACKETS_H
#define PIPELINES_RAYTRACE_PACKETS_H

#include "gramps/gramps.h"
#include "pipelines/frame.h"
#include "raytracer/packet.h"
#include "raytracer/ray.h"

#include <emmintrin.h>
#include <stdio.h>
#include <string.h>

#define PLRT_HDR 16

typedef struct plrt_tile { int x0, y0, x1, y1; } plrt_tile;                  /* rt.tile */
typedef struct plrt_sample { uint32_t pixel; float px, py; uint32_t pad; } plrt_sample; /* rt.samples */

/* rt.rays: a ray and, once Intersect has filled it in place, its hit. Camera rays
 * start with hit.prim = PLRT_UNTRACED, past any mesh's triangles (that many would take
 * 48 GB of indices), which Shade refuses: a graph that skips Intersect fails by name
 * instead of shading garbage. */
#define PLRT_UNTRACED (RT_NO_HIT - 1)
typedef struct plrt_ray {
    rt_ray ray;
    float weight[3];
    uint32_t pixel, depth;
    rt_hit hit;
    uint32_t pad[3];                      /* 80 bytes: elements stay 16-byte aligned */
} plrt_ray;

/* rt.shadow-rays: a ray toward a light and what the light adds if it is unoccluded. */
typedef struct plrt_shadow { rt_ray ray; float color[3]; uint32_t pixel; } plrt_shadow;

/* rt.sample-runs: the samples of one rt.samples packet, as the Tiler cuts them: `count`
 * samples of `tile` from sample `first` of its 8x8 block at (bx, by) on. A tile's samples
 * go block by block (row-major, clipped to the tile), pixel by pixel (row-major) within
 * a block and sample by sample within a pixel; a run may go on into the next blocks. */
typedef struct plrt_sample_run { plrt_tile tile; int bx, by; uint32_t first, count; } plrt_sample_run;
#define PLRT_BLOCK 8

/* rt.contributions: a pixel and the RGB to add to it. rt.blend turns each value into
 * fixed point (plrt_to_fixed) and sums integers: the same float always gives the same
 * integer, and integer sums do not depend on the order, so neither does the image.
 * Floats rather than fixed point keep the packets half as large (16 bytes an element):
 * they cross from the workers that shade to those that blend. */
typedef struct plrt_contrib { uint32_t pixel; float v[3]; } plrt_contrib;

static inline void *plrt_elems(void *packet) { return (char *)packet + PLRT_HDR; }

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

static inline void plrt_set_contrib(plrt_contrib *k, uint32_t pixel, const float rgb[3])
{
    *k = (plrt_contrib){pixel, {rgb[0], rgb[1], rgb[2]}};
}

/* Contributions go to a queue set with one rt.blend instance per subqueue; its size is a
 * power of two, 2^n. The `span` pixel indices of the frame's region (from `first`, its
 * top-left pixel's, through its bottom-right pixel's) are cut into 2^n contiguous bands
 * of nearly equal size (by a multiply and shift, not a division per contribution); a
 * pixel's subqueue is its band's. So every contribution to a pixel reaches the same
 * instance, instances add into disjoint pixels and need no locks, and each clears and
 * encodes its own band, a contiguous stretch of rows. A packet's pixels (an 8x8 block,
 * or runs of neighbours) mostly share a band: one push per packet.
 * A plain queue (no set) has mask 0: everything goes to key 0, which it ignores. */
typedef struct plrt_blend_keys {
    uint32_t first, span, mask;
    uint64_t scale;                       /* 2^32 bands / span, rounded down */
} plrt_blend_keys;

static inline uint64_t plrt_blend_key(uint32_t pixel, const plrt_blend_keys *k)
{
    return (((uint64_t)(pixel - k->first) * k->scale) >> 32) & k->mask;
}

/* The keys for frame f's region and an output bound to a set of `subqueues` (0: a plain
 * queue); false when that is not a power of two. */
static inline bool plrt_blend_keys_of(const pl_frame *f, uint32_t subqueues, plrt_blend_keys *k)
{
    const pl_region *r = &f->region;
    uint64_t first = (uint64_t)r->y0 * (uint64_t)f->width + (uint64_t)r->x0;
    uint64_t span = (uint64_t)(r->y1 - 1) * (uint64_t)f->width + (uint64_t)r->x1 - first;
    k->first = (uint32_t)first;
    k->span = (uint32_t)span;
    k->mask = subqueues ? subqueues - 1 : 0;
    k->scale = (((uint64_t)k->mask + 1) << 32) / span;
    return (subqueues & (subqueues - 1)) == 0;
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
    int64_t *sums;                        /* the frame's, which the cutter clears a tile at
                                             a time (plrt_tile_cutter_init) */
} plrt_tile_deal;

/* false when bands is not a power of two. */
static inline bool plrt_tile_deal_init(plrt_tile_deal *d, const pl_frame *f, uint32_t bands,
                                      int tile, uint32_t copies)
{
    d->copies = copies ? copies : 1;
    d->width = f->width;
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
    return (d->sums = pl_frame_use(i, "sums", err)) != NULL;
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
    for (int y = y0; y < y1; y++)
        memset(d->sums + ((size_t)y * (size_t)d->width + (size_t)x0) * 3, 0,
               (size_t)(x1 - x0) * 3 * sizeof *d->sums);
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
    return (cp_instance_resource_access(i->instance, "sums") & CP_OVERWRITES) != 0;
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
    return (m->sums = pl_frame_use(i, "sums", err)) != NULL;
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

/* A task's contributions, gathered to be pushed in runs of one key (gr_push_key_n): one
 * push per run instead of one per contribution. A task makes at most one per ray of its
 * input packet, so RT_PACKET_MAX of them. */
typedef struct plrt_contribs { uint32_t n; plrt_blend_keys keys; plrt_contrib k[RT_PACKET_MAX]; } plrt_contribs;

/* Empties b for those keys (not `= {0}`: that would clear all 2 KiB per task). */
static inline void plrt_contribs_start(plrt_contribs *b, const plrt_blend_keys *keys)
{
    b->n = 0;
    b->keys = *keys;
}

static inline void plrt_add_contrib(plrt_contribs *b, uint32_t pixel, const float rgb[3])
{
    plrt_set_contrib(&b->k[b->n++], pixel, rgb);
}

/* Pushes them to output `output`, each run of equal keys at once (a packet's pixels are
 * neighbours, so runs are long), and empties b. */
static inline void plrt_push_contribs(gr_ctx *c, int output, plrt_contribs *b)
{
    for (uint32_t i = 0, j; i < b->n; i = j) {
        uint64_t key = plrt_blend_key(b->k[i].pixel, &b->keys);
        for (j = i + 1; j < b->n && plrt_blend_key(b->k[j].pixel, &b->keys) == key; j++) {}
        gr_push_key_n(c, output, key, &b->k[i], j - i);
    }
    b->n = 0;
}

#endif
