/* tile_shade_msaa.c — Tile-Shade with multisampling (msaa 4 or 8; msaa.c, tile_shade.c):
 * one instance per framebuffer tile resolves visibility per sample, shades once per pixel
 * per visible triangle, blends per sample and resolves its tile into the image.
 *
 * Per sample: coverage (rs_sample_cover, the top-left rule at each sample point) and
 * depth (rs_sample_depth, the triangle's depth at the sample point), tested as the
 * single-sample graph tests a pixel: nearest, equal depths to the smaller primitive id,
 * so arrival order cannot change which triangle owns a sample. Depths live in the
 * frame's sample-depth buffer (this tile's part), owners (slot + 1) in the tile.
 *
 * Per pixel: each triangle that owns at least one of a pixel's samples is shaded once,
 * at the pixel centre (as Direct3D without `centroid`: the centre may lie outside the
 * triangle, and the weights extrapolate), and its colour goes to exactly the samples it
 * owns. An alpha-tested (MASK) triangle's alpha is sampled once per pixel at the centre
 * too, and passes or fails all the pixel's samples it would take. A blended triangle is
 * shaded once per pixel and its colour and alpha blended into each covered sample that
 * lies in front of the opaque depth there, in primitive-id order as without samples.
 * The quad derivatives for texture LOD are the pixel shader's (sh_ps_quad_derivatives,
 * a function of the triangle and the quad), so they are as without samples. */
#include "pipelines/raster/internal.h"
#include "pipelines/raster/tile_slots.h"

#include <stdlib.h>
#include <string.h>

typedef struct ms_tile {
    tile_rect r;
    uint32_t *owner;                      /* slot + 1 per sample of the tile, 0: none */
    tile_slots slots;
    blended_prims blended;
} ms_tile;

/* The tile's owner index of pixel (x, y)'s first sample. */
static inline size_t owner_at(const ms_tile *st, const plr_state *s, int x, int y)
{
    return ((size_t)(y - st->r.oy) * (size_t)s->tile + (size_t)(x - st->r.ox)) * (size_t)s->msaa;
}

static bool ms_init(ms_tile *st, const plr_state *s, uint64_t tile)
{
    memset(st, 0, sizeof *st);
    plr_tile_rect(&s->rc, tile, &st->r);  /* not empty: Bin sends only such tiles */
    st->owner = calloc((size_t)s->tile * (size_t)s->tile * (size_t)s->msaa, sizeof *st->owner);
    if (!st->owner) return false;
    plr_samples_clear(s, &st->r);
    return true;
}

static void ms_free(ms_tile *st)
{
    free(st->owner);
    tile_slots_free(&st->slots);
    free(st->blended.p);
}

/* Does the MASK triangle p pass the alpha test at pixel (x, y)'s centre? */
static bool mask_passes(const plr_state *s, const plr_prim *p, const rs_interp *ip, int x, int y)
{
    int64_t e0, e1;
    float z, b1, b2;
    rs_edges_at(&p->su, x, y, &e0, &e1);
    rs_weights(ip, e0, e1, &z, &b1, &b2);
    return plr_alpha_passes(s->env, &p->tri, b1, b2, x, y);
}

/* The samples of pixel (x, y) that p covers and would win (nearer, or as near with a
 * smaller primitive id), their depths in z[k]. */
static unsigned winning_samples(const ms_tile *st, const plr_state *s, const plr_prim *p,
                                const rs_edge01 *e, const rs_interp *ip, int x, int y, float *z)
{
    unsigned cover = rs_sample_cover(&p->su, s->pattern, x, y), win = 0;
    const size_t at = plr_sample_at(s, x, y), own = owner_at(st, s, x, y);
    for (; cover; cover &= cover - 1) {
        const int k = __builtin_ctz(cover);
        const float zk = rs_sample_depth(e, ip, s->pattern, k, x, y), held = s->sample_z[at + (size_t)k];
        const uint32_t o = st->owner[own + (size_t)k];
        if (zk < held || (zk == held && o && p->tri.prim < st->slots.prim[o - 1].tri.prim)) {
            win |= 1u << k;
            z[k] = zk;
        }
    }
    return win;
}

/* One opaque or MASK triangle: the samples it wins change owner. */
static void ms_take(ms_tile *st, const plr_state *s, const plr_prim *p, uint32_t slot, bool masked)
{
    rs_interp ip;
    rs_edge01 e;
    rs_interp_of(&p->su, &ip);
    rs_edge01_of(&p->su, &e);
    int x0 = st->r.x0 > p->su.x0 ? st->r.x0 : p->su.x0, x1 = st->r.x1 < p->su.x1 + 1 ? st->r.x1 : p->su.x1 + 1;
    int y0 = st->r.y0 > p->su.y0 ? st->r.y0 : p->su.y0, y1 = st->r.y1 < p->su.y1 + 1 ? st->r.y1 : p->su.y1 + 1;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) {
            float z[RS_MAX_SAMPLES];
            unsigned win = winning_samples(st, s, p, &e, &ip, x, y, z);
            if (!win || (masked && !mask_passes(s, p, &ip, x, y))) continue;
            const size_t at = plr_sample_at(s, x, y), own = owner_at(st, s, x, y);
            for (; win; win &= win - 1) {
                const int k = __builtin_ctz(win);
                uint32_t *o = &st->owner[own + (size_t)k];
                if (*o) slot_release(&st->slots, *o - 1);
                *o = slot + 1;
                st->slots.pixels[slot]++;
                s->sample_z[at + (size_t)k] = z[k];
            }
        }
}

static bool ms_add(ms_tile *st, const plr_state *s, const plr_prim *p)
{
    sc_alpha_mode mode = s->alpha.mask || s->alpha.blend ? plr_alpha_mode(s->env, p->tri.material)
                                                         : SC_ALPHA_OPAQUE;
    if (mode == SC_ALPHA_BLEND) return !plr_blends_aov(s->env) || blended_add(&st->blended, p);
    uint32_t slot;
    if (!slot_take(&st->slots, &slot)) return false;
    st->slots.prim[slot] = *p;
    st->slots.pixels[slot] = 1;           /* held while rasterizing */
    ms_take(st, s, p, slot, mode == SC_ALPHA_MASK);
    slot_release(&st->slots, slot);
    return true;
}

/* Pixels being gathered for the pixel shader: each with its triangle, its centre's
 * weights and the samples its colour goes to. */
typedef struct ms_batch {
    int n;
    uint16_t x[SH_PS_MAX], y[SH_PS_MAX];
    float b1[SH_PS_MAX], b2[SH_PS_MAX];
    uint8_t tri[SH_PS_MAX], mask[SH_PS_MAX];
    sh_ps_tri tris[SH_PS_MAX];
} ms_batch;

static void batch_add(ms_batch *b, const plr_prim *p, int x, int y, unsigned mask)
{
    int64_t e0, e1;
    float z;
    rs_interp ip;
    rs_interp_of(&p->su, &ip);
    rs_edges_at(&p->su, x, y, &e0, &e1);
    const int i = b->n++;
    rs_weights(&ip, e0, e1, &z, &b->b1[i], &b->b2[i]);
    b->x[i] = (uint16_t)x;
    b->y[i] = (uint16_t)y;
    b->tris[i] = p->tri;
    b->tri[i] = (uint8_t)i;
    b->mask[i] = (uint8_t)mask;
}

/* Shades the batch; each colour is written (opaque) or blended (a8 per fragment) into
 * its samples. */
static void batch_flush(ms_batch *b, const plr_state *s, bool blend)
{
    if (!b->n) return;
    uint32_t rgba[SH_PS_MAX];
    sh_ps_packet(s->env, &(sh_ps_frags){b->n, b->tris, b->tri, b->b1, b->b2, b->x, b->y}, rgba);
    for (int i = 0; i < b->n; i++) {
        uint32_t *out = &s->sample_rgba[plr_sample_at(s, b->x[i], b->y[i])];
        const uint32_t a8 = blend ? plr_alpha8(s->env, &b->tris[i], b->b1[i], b->b2[i], b->x[i], b->y[i]) : 0;
        for (unsigned m = b->mask[i]; m; m &= m - 1) {
            const int k = __builtin_ctz(m);
            out[k] = blend ? plr_blend(out[k], rgba[i], a8) : rgba[i];
        }
    }
    atomic_fetch_add_explicit(s->fragments, (uint64_t)b->n, memory_order_relaxed);
    b->n = 0;
}

/* Each triangle that owns samples of a pixel, shaded once for them. */
static void ms_shade(ms_tile *st, const plr_state *s)
{
    ms_batch batch, *b = &batch;
    b->n = 0;
    for (int y = st->r.y0; y < st->r.y1; y++)
        for (int x = st->r.x0; x < st->r.x1; x++) {
            const uint32_t *own = &st->owner[owner_at(st, s, x, y)];
            unsigned left = (1u << s->msaa) - 1;
            while (left) {
                const int k0 = __builtin_ctz(left);
                const uint32_t o = own[k0];
                unsigned mask = 0;
                for (int k = k0; k < s->msaa; k++) mask |= (unsigned)(own[k] == o) << k;
                left &= ~mask;
                if (!o) continue;
                if (b->n == SH_PS_MAX) batch_flush(b, s, false);
                batch_add(b, &st->slots.prim[o - 1], x, y, mask);
            }
        }
    batch_flush(b, s, false);
}

/* The blended triangles in primitive-id order, per sample over the opaque depth (less,
 * no depth write). */
static void ms_blend(ms_tile *st, const plr_state *s)
{
    if (!st->blended.n) return;
    ms_batch batch, *b = &batch;
    b->n = 0;
    blended_sort(&st->blended);
    for (size_t t = 0; t < st->blended.n; t++) {
        const plr_prim *p = &st->blended.p[t];
        rs_interp ip;
        rs_edge01 e;
        rs_interp_of(&p->su, &ip);
        rs_edge01_of(&p->su, &e);
        int x0 = st->r.x0 > p->su.x0 ? st->r.x0 : p->su.x0, x1 = st->r.x1 < p->su.x1 + 1 ? st->r.x1 : p->su.x1 + 1;
        int y0 = st->r.y0 > p->su.y0 ? st->r.y0 : p->su.y0, y1 = st->r.y1 < p->su.y1 + 1 ? st->r.y1 : p->su.y1 + 1;
        for (int y = y0; y < y1; y++)
            for (int x = x0; x < x1; x++) {
                const size_t at = plr_sample_at(s, x, y);
                unsigned front = 0;
                for (unsigned m = rs_sample_cover(&p->su, s->pattern, x, y); m; m &= m - 1) {
                    const int k = __builtin_ctz(m);
                    front |= (unsigned)(rs_sample_depth(&e, &ip, s->pattern, k, x, y) <
                                        s->sample_z[at + (size_t)k]) << k;
                }
                if (!front) continue;
                batch_add(b, p, x, y, front);
                if (b->n == SH_PS_MAX) batch_flush(b, s, true);
            }
        batch_flush(b, s, true);      /* one triangle's fragments before the next's */
    }
}

void plr_tile_shade_msaa(gr_ctx *c)
{
    plr_state *s = gr_user(c);
    ms_tile st;
    gr_assert(c, ms_init(&st, s, gr_key(c)));
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        const binned_pkt *p = w.mem;
        for (uint32_t i = 0; i < p->count; i++) gr_assert(c, ms_add(&st, s, &p->t[i].prim));
        gr_commit(c, 0, 1);
    }
    ms_shade(&st, s);
    ms_blend(&st, s);
    plr_samples_resolve(s, &st.r);
    ms_free(&st);
}
