/* msaa.c — multisampling's frame resources in the raster graphs: the sample buffers,
 * msaa depths and RGBA8 colours per pixel (pixel p's samples at p * msaa .. p * msaa +
 * msaa - 1), the OM's; Tile-Shade keeps its tile's depths and colours itself, and takes
 * the frame's colours only with linear samples (sample-hdr, indexed alike). The stage of a tile sets
 * its tile's samples when it starts (the OM: plr_samples_clear; Tile-Shade writes every
 * sample when it shades) and resolves them into the image when it ends: per channel the
 * box filter's round(sum / msaa) of the samples' bytes ((sum + msaa / 2) >> log2(msaa)),
 * as Direct3D's ResolveSubresource averages a UNORM target. No other tile's stage
 * touches them, so no clear pass over the frame is needed. */
#include "pipelines/raster/internal.h"
#include "pipelines/raster/resolve.h"

#include "pipelines/stages.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>

bool plr_msaa_setup(plr_state *s, const cp_stage_init *i, plr_sample_buffers buffers, char err[CP_ERR_MAX])
{
    s->pattern = rs_sample_pattern(s->msaa);
    if (!s->pattern) {
        snprintf(err, CP_ERR_MAX, "stage '%s': msaa %d: expected 1, 4 or 8 samples per pixel",
                 i->name, s->msaa);
        return false;
    }
    s->reach = s->msaa > 1 ? &s->pattern->reach : &rs_centre_reach;
    if (s->msaa == 1 || buffers == PLR_NO_SAMPLE_BUFFERS) return true;
    if (s->env->aov == SH_AOV_PRIMID) {
        snprintf(err, CP_ERR_MAX, "stage '%s': msaa %d with the primid AOV: primitive ids "
                 "cannot be averaged (use msaa 1)", i->name, s->msaa);
        return false;
    }
    unsigned access;
    bool frame_depth = cp_stage_resource(i, "sample-depth", &access) != NULL;
    bool frame_colors = buffers == PLR_SAMPLE_BUFFERS || s->hdr;
    return pl_frame_set_samples(i->frame, s->msaa, err) &&
           (!frame_depth || (s->sample_z = pl_frame_use(i, "sample-depth", err))) &&
           (!frame_colors || (s->sample_rgba = pl_frame_use(i, "sample-color", err))) &&
           (!s->hdr || (s->sample_hdr = pl_frame_use(i, "sample-hdr", err)));
}

void plr_samples_set(const plr_state *s, int x, int y)
{
    const size_t m = (size_t)s->msaa, p = (size_t)y * (size_t)s->width + (size_t)x;
    const uint32_t background = s->color[p];   /* cleared before the run */
    for (size_t k = 0; k < m; k++) s->sample_rgba[p * m + k] = background;
    for (size_t k = 0; s->sample_z && k < m; k++) s->sample_z[p * m + k] = FLT_MAX;
    for (size_t k = 0; s->sample_hdr && k < m; k++) plr_sample_hdr_clear(s, x, y, p * m + k);
}

void plr_samples_clear(const plr_state *s, const tile_rect *r)
{
    for (int y = r->y0; y < r->y1; y++)
        for (int x = r->x0; x < r->x1; x++) plr_samples_set(s, x, y);
}

bool plr_sample_marks_init(plr_sample_marks *m, const plr_state *s, const tile_rect *r)
{
    m->r = *r;
    m->tile = s->tile;
    m->bits = calloc(((size_t)s->tile * (size_t)s->tile + 63) / 64, sizeof *m->bits);
    return m->bits != NULL;
}

void plr_sample_marks_free(plr_sample_marks *m)
{
    free(m->bits);
    m->bits = NULL;
}

/* Pixel (x, y)'s samples resolved into the image: m samples a pixel (compiled for 4
 * and 8: the resolve unrolled), at samples + ((y - oy) * width + (x - ox)) * m, with
 * samples and width the frame's and origin (0, 0), or the tile's own from its corner
 * (ox, oy), s->tile wide. */
static inline __attribute__((always_inline)) void resolve_at(const plr_state *s, int x, int y,
                                                             const uint32_t *samples, size_t width, int ox,
                                                             int oy, const uint32_t m)
{
    const size_t at = ((size_t)(y - oy) * width + (size_t)(x - ox)) * m;
    s->color[(size_t)y * (size_t)s->width + (size_t)x] = plr_resolve_pixel(&samples[at], m);
    if (s->sample_hdr) plr_sample_hdr_resolve(s, x, y);
}

/* The pixels of r, or those listed (pixels: n offsets dy << 8 | dx from r's corner). */
static inline __attribute__((always_inline)) void resolve_tile(const plr_state *s, const tile_rect *r,
                                                               const uint16_t *pixels, size_t n,
                                                               const uint32_t *samples, size_t width, int ox,
                                                               int oy, const uint32_t m)
{
    if (pixels) {
        for (size_t i = 0; i < n; i++)
            resolve_at(s, r->ox + (pixels[i] & 0xff), r->oy + (pixels[i] >> 8), samples, width, ox, oy, m);
        return;
    }
    for (int y = r->y0; y < r->y1; y++)
        for (int x = r->x0; x < r->x1; x++) resolve_at(s, x, y, samples, width, ox, oy, m);
}

void plr_samples_resolve(const plr_state *s, const tile_rect *r, const uint16_t *pixels, size_t n)
{
    const size_t width = (size_t)s->width;
    if (s->msaa == 4) resolve_tile(s, r, pixels, n, s->sample_rgba, width, 0, 0, 4);
    else resolve_tile(s, r, pixels, n, s->sample_rgba, width, 0, 0, 8);   /* plr_msaa_setup: 4 or 8 where there are samples */
}

void plr_samples_resolve_own(const plr_state *s, const tile_rect *r, const uint16_t *pixels, size_t n,
                             const uint32_t *tile_samples)
{
    const size_t width = (size_t)s->tile;
    if (s->msaa == 4) resolve_tile(s, r, pixels, n, tile_samples, width, r->ox, r->oy, 4);
    else resolve_tile(s, r, pixels, n, tile_samples, width, r->ox, r->oy, 8);
}

/* The marked pixels of the tile, listed in chunks for resolve_tile. */
void plr_samples_resolve_marked(const plr_state *s, const plr_sample_marks *m)
{
    _Static_assert(PLR_MAX_TILE <= 256, "a listed pixel's dx and dy fit a byte each");
    uint16_t pixels[1024];
    size_t n = 0;
    const size_t words = ((size_t)m->tile * (size_t)m->tile + 63) / 64;
    for (size_t w = 0; w < words; w++)
        for (uint64_t b = m->bits[w]; b; b &= b - 1) {
            const size_t i = w * 64 + (size_t)__builtin_ctzll(b);
            pixels[n++] = (uint16_t)((i / (size_t)m->tile) << 8 | (i % (size_t)m->tile));
            if (n == sizeof pixels / sizeof pixels[0]) {
                plr_samples_resolve(s, &m->r, pixels, n);
                n = 0;
            }
        }
    if (n) plr_samples_resolve(s, &m->r, pixels, n);
}
