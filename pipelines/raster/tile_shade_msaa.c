/* tile_shade_msaa.c — Tile-Shade with multisampling (msaa 4 or 8; msaa.c, tile_shade.c):
 * one instance per framebuffer tile resolves visibility per sample, shades once per pixel
 * per visible triangle, blends per sample and resolves its tile into the image.
 *
 * Per sample: coverage (the top-left rule at each sample point) and depth (the
 * triangle's depth plane there, as rasterizer/samples.h computes it), tested as the
 * single-sample graph tests a pixel: nearest, equal depths to the smaller primitive id,
 * so arrival order cannot change which triangle owns a sample. The tile stores its
 * triangles as they arrive and walks them once its input has ended (or its store is
 * full): depths and owners (slot + 1) live in the tile, contiguous, as the single-sample
 * depth tile does; colours in the tile's own block (or, with linear samples, the frame's
 * sample-color buffer), which the tile resolves into the image at its end.
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
#include "pipelines/raster/sample_slots.h"
#include "pipelines/raster/tile_slots.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

typedef struct ms_tile {
    tile_rect r;
    float *z;                             /* depth per sample of the tile */
    uint32_t *owner;                      /* slot + 1 per sample of the tile, 0: none */
    uint32_t *colors;                     /* RGBA8 per sample of the tile, indexed as owner, from
                                             the shading on (ms_colors); NULL with linear
                                             samples: the frame's (sample_colors) */
    ms_prims prims;                       /* the triangles that may own samples (ms_slot) */
    uint32_t taken;                       /* slots [0, taken) went through ms_take; the rest wait
                                             (ms_take_waiting) */
    blended_prims blended;
    uint16_t *mixed;                      /* the pixels to resolve (ms_shade_pixels): offsets dy << 8 | dx */
    uint32_t nmixed;
    uint8_t *ties;                        /* the block kernels': RS_SAMPLE_BLOCK_WIDTH per row, zero between triangles */
} ms_tile;

/* The tile's depth and owner index of pixel (x, y)'s first sample. */
static inline size_t owner_at(const ms_tile *st, const plr_state *s, int x, int y)
{
    return ((size_t)(y - st->r.oy) * (size_t)s->tile + (size_t)(x - st->r.ox)) * (size_t)s->msaa;
}

/* Pixel (x, y)'s sample colours: the tile's own, or with linear samples the frame's
 * sample-color, whose index (plr_sample_at, in *at then) plr_sample_hdr_* take too. */
static inline uint32_t *sample_colors(const ms_tile *st, const plr_state *s, int x, int y, size_t *at)
{
    if (st->colors) return &st->colors[owner_at(st, s, x, y)];
    *at = plr_sample_at(s, x, y);
    return &s->sample_rgba[*at];
}

/* z[0 .. n) = FLT_MAX (n a multiple of 4: the tile's samples at 4x or 8x). */
static void fill_far(float *z, size_t n)
{
#if defined(__x86_64__)
    const __m128 far = _mm_set1_ps(FLT_MAX);
    for (size_t i = 0; i < n; i += 4) _mm_storeu_ps(&z[i], far);
#else
    for (size_t i = 0; i < n; i++) z[i] = FLT_MAX;
#endif
}

static void ms_init(ms_tile *st, const plr_state *s, uint64_t tile)
{
    memset(st, 0, sizeof *st);
    plr_tile_rect(&s->rc, tile, &st->r);  /* not empty: Bin sends only such tiles */
}

/* The tile's depths, owners and tie bytes, made when its first triangles are taken (the
 * tiles are open together while Bin sends triangles, but their samples are walked one
 * tile at a time: ms_take_waiting). False when out of memory. */
static bool ms_buffers(ms_tile *st, const plr_state *s)
{
    if (st->owner) return true;
    const size_t samples = (size_t)s->tile * (size_t)s->tile * (size_t)s->msaa;
    st->owner = calloc(samples, sizeof *st->owner);
    st->z = malloc(samples * sizeof *st->z);
    st->mixed = malloc((size_t)s->tile * (size_t)s->tile * sizeof *st->mixed);
    st->ties = calloc((size_t)RS_SAMPLE_BLOCK_WIDTH * (size_t)s->tile, 1);   /* zero between triangles */
    if (!st->owner || !st->z || !st->mixed || !st->ties) return false;
    fill_far(st->z, samples);
    return true;                          /* the sample colours: all written by ms_shade */
}

/* The tile's own sample colours, made when its shading starts and freed when its
 * resolve is done: the tiles are open together while triangles arrive (one worker: Bin
 * feeds them all in turn), but shaded one at a time, so the one block is reused from
 * tile to tile in the core's caches (the frame's sample-color, 16 MB at 1024x1024 and
 * 4x, was written cold and read back once). False when out of memory. */
static bool ms_colors(ms_tile *st, const plr_state *s)
{
    if (s->sample_hdr) return true;       /* the frame's, indexed as sample-hdr */
    st->colors = malloc((size_t)s->tile * (size_t)s->tile * (size_t)s->msaa * sizeof *st->colors);
    return st->colors != NULL;
}

static void ms_free(ms_tile *st)
{
    free(st->owner);
    free(st->colors);
    free(st->z);
    free(st->mixed);
    free(st->ties);
    ms_prims_free(&st->prims);
    free(st->blended.p);
}

/* The slots no sample names are freed, the others renumbered in order. */
static void ms_collect(ms_tile *st, const plr_state *s)
{
    ms_prims *q = &st->prims;
    uint32_t *renumber = calloc(q->n, sizeof *renumber);
    if (!renumber) return;                /* the caller grows the store instead */
    const size_t samples = (size_t)s->tile * (size_t)s->tile * (size_t)s->msaa;
    for (size_t i = 0; i < samples; i++)
        if (st->owner[i]) renumber[st->owner[i] - 1] = 1;
    uint32_t kept = 0;
    for (uint32_t i = 0; i < q->n; i++)
        if (renumber[i]) {
            if (kept != i) *ms_prim(q, kept) = *ms_prim(q, i);
            renumber[i] = ++kept;
        }
    for (size_t i = 0; i < samples; i++)
        if (st->owner[i]) st->owner[i] = renumber[st->owner[i] - 1];
    q->n = kept;
    free(renumber);
}

static bool ms_take_waiting(ms_tile *st, const plr_state *s);

/* A slot for a new triangle. A triangle waits in its slot until the store is full or the
 * tile's input ends (ms_take_waiting). Slots are not counted per sample (the AVX2 kernels
 * write owners eight at a time, with no scattered count to decrement per sample taken): a
 * triangle left owning nothing keeps its slot until the store is full and holds at least
 * the tile's pixel count, when the waiting triangles are taken and then the slots no
 * sample names are collected (ms_collect); a collect that leaves less than a chunk free
 * adds one, so each collect is paid for by at least MS_CHUNK new triangles, and the tile
 * holds at most max(its pixels, the triangles it shows) plus a chunk, whatever the
 * scene. False when out of memory. */
static bool ms_slot(ms_tile *st, const plr_state *s, uint32_t *slot)
{
    ms_prims *q = &st->prims;
    if (q->n == q->cap && q->cap >= (uint32_t)(s->tile * s->tile)) {
        if (!ms_take_waiting(st, s)) return false;
        ms_collect(st, s);
        st->taken = q->n;
        if (q->cap - q->n < MS_CHUNK) (void)ms_prims_grow(q);   /* out of memory: the room left */
    }
    if (q->n == q->cap && !ms_prims_grow(q)) return false;
    *slot = q->n++;
    return true;
}

/* A triangle walked over the tile: where, its samples' coverage and its depth plane. */
typedef struct tri_walk {
    int x0, y0, x1, y1;
    rs_interp ip;
    rs_depth_plane z;
    rs_sample_walk w;
} tri_walk;

/* The part of p's bounds in the tile, and its depth plane; false when p has no pixel in
 * the tile. */
static inline __attribute__((always_inline)) bool walk_bounds(const ms_tile *st, const plr_prim *p, tri_walk *t)
{
    t->x0 = st->r.x0 > p->su.x0 ? st->r.x0 : p->su.x0;
    t->y0 = st->r.y0 > p->su.y0 ? st->r.y0 : p->su.y0;
    t->x1 = st->r.x1 < p->su.x1 + 1 ? st->r.x1 : p->su.x1 + 1;
    t->y1 = st->r.y1 < p->su.y1 + 1 ? st->r.y1 : p->su.y1 + 1;
    if (!(t->x0 < t->x1 && t->y0 < t->y1)) return false;
    rs_interp_of(&p->su, &t->ip);
    rs_depth_plane_of(&t->ip, &t->z);
    return true;
}

/* The samples' walk of p over t's rectangle. */
static inline __attribute__((always_inline)) void walk_make(const plr_state *s, const plr_prim *p, tri_walk *t)
{
    rs_sample_walk_make(&p->su, s->pattern, &t->z, &t->w, s->env->isa == RT_ISA_AVX2);
    if (t->x1 - t->x0 > RS_SAMPLE_BLOCK_WIDTH)   /* row by row (ms_take_opaque): int32 rows where they fit */
        rs_sample_walk_bound(&p->su, &t->w, t->x0, t->y0, t->x1, t->y1);
}

/* walk_bounds and walk_make; false when p has no pixel in the tile. */
static inline __attribute__((always_inline)) bool walk_of(const ms_tile *st, const plr_state *s, const plr_prim *p,
                                                          tri_walk *t)
{
    if (!walk_bounds(st, p, t)) return false;
    walk_make(s, p, t);
    return true;
}

/* Does the MASK triangle p pass the alpha test at the pixel centre (x, y), edges e? */
static bool mask_passes(const plr_state *s, const plr_prim *p, const tri_walk *t,
                        const int64_t e[3], int x, int y)
{
    float z, b1, b2;
    rs_weights(&t->ip, e[0], e[1], &z, &b1, &b2);
    return plr_alpha_passes(s->env, &p->tri, b1, b2, x, y);
}

/* To the samples p covers nearer than the held depths (nearer), add the covered ones it
 * wins at equal depth by a smaller primitive id (tie): what it would take at pixel
 * (x, y). */
static unsigned winning_samples(const ms_tile *st, const plr_state *s, const plr_prim *p,
                                unsigned nearer, unsigned tie, int x, int y)
{
    const uint32_t *own = &st->owner[owner_at(st, s, x, y)];
    for (; tie; tie &= tie - 1) {
        const int k = __builtin_ctz(tie);
        if (own[k] && p->tri.prim < ms_prim(&st->prims, own[k] - 1)->tri.prim) nearer |= 1u << k;
    }
    return nearer;
}

/* The edge values at the centre of the pixel j to the right of the one with e0. */
static inline void edges_at_step(const plr_prim *p, const int64_t e0[3], int j, int64_t e[3])
{
    for (int i = 0; i < 3; i++) e[i] = e0[i] + (int64_t)p->su.a[i] * (1 << RS_SUBPIXEL_BITS) * j;   /* a multiply: a[i] may be negative */
}

/* The samples `win` of pixel (x, y) go to slot at depths z[k]. */
static void take_samples(ms_tile *st, const plr_state *s, uint32_t slot, unsigned win, int x,
                         int y, const float *z)
{
    float *held = &st->z[owner_at(st, s, x, y)];
    uint32_t *own = &st->owner[owner_at(st, s, x, y)];
    for (; win; win &= win - 1) {
        const int k = __builtin_ctz(win);
        own[k] = slot + 1;
        held[k] = z[k];
    }
}

/* The samples of row y's pixels [x0, x0 + n) that p covers at the same depth as their
 * owner (tie[j]) go to p where its primitive id is the smaller. */
static void take_ties(ms_tile *st, const plr_state *s, const plr_prim *p, uint32_t slot, int x0, int n,
                      int y, const uint8_t *tie)
{
    for (int j = 0; j < n; j++) {
        if (!tie[j]) continue;
        const unsigned win = winning_samples(st, s, p, 0, tie[j], x0 + j, y);
        uint32_t *own = &st->owner[owner_at(st, s, x0 + j, y)];
        for (unsigned m = win; m; m &= m - 1) own[__builtin_ctz(m)] = slot + 1;
    }
}

/* One opaque triangle: the kernel takes the samples it is nearer at; those at equal
 * depth go to it when its primitive id is the smaller. A rectangle at most
 * RS_SAMPLE_BLOCK_WIDTH wide (most triangles) is one call for all its rows
 * (rs_sample_rect_take walks it as a block or row by row), a wider one row by row. */
static void ms_take_opaque(ms_tile *st, const plr_state *s, const plr_prim *p, uint32_t slot,
                           const tri_walk *t)
{
    const bool avx2 = s->env->isa == RT_ISA_AVX2;
    const int n = t->x1 - t->x0;
    const size_t at = owner_at(st, s, t->x0, t->y0);
    if (n <= RS_SAMPLE_BLOCK_WIDTH) {
        uint8_t *tie = st->ties;
        if (!rs_sample_rect_take(&p->su, &t->w, &t->z, t->x0, t->y0, t->x1, t->y1, &st->z[at], &st->owner[at],
                                 (size_t)s->tile * (size_t)s->msaa, slot + 1, tie, avx2))
            return;
        for (int y = t->y0; y < t->y1; y++) take_ties(st, s, p, slot, t->x0, n, y, &tie[(y - t->y0) * n]);
        memset(tie, 0, (size_t)n * (size_t)(t->y1 - t->y0));   /* zero between triangles (ms_take_block) */
        return;
    }
    uint8_t tie[PLR_MAX_TILE];
    for (int y = t->y0; y < t->y1; y++) {
        int64_t e0[3];
        rs_centre_edges(&p->su, t->x0, y, e0);
        const size_t row = owner_at(st, s, t->x0, y);
        if (rs_sample_row_take(&p->su, &t->w, &t->z, e0, n, &st->z[row], &st->owner[row], slot + 1, tie, avx2))
            take_ties(st, s, p, slot, t->x0, n, y, tie);
    }
}

/* One MASK triangle: of the samples it would win, it takes a pixel's where its alpha
 * passes at the pixel centre. Apart from ms_take (its row buffers are large, and MASK
 * triangles few). */
static __attribute__((noinline)) void ms_take_masked(ms_tile *st, const plr_state *s, const plr_prim *p,
                                                     uint32_t slot, const tri_walk *t)
{
    const bool avx2 = s->env->isa == RT_ISA_AVX2;
    uint8_t nearer[PLR_MAX_TILE], tie[PLR_MAX_TILE];
    float z[PLR_MAX_TILE * RS_MAX_SAMPLES];
    for (int y = t->y0; y < t->y1; y++) {
        int64_t e0[3];
        rs_centre_edges(&p->su, t->x0, y, e0);
        rs_sample_row(&p->su, &t->w, &t->z, e0, t->x1 - t->x0, &st->z[owner_at(st, s, t->x0, y)],
                      nearer, tie, z, avx2);
        for (int x = t->x0; x < t->x1; x++) {
            const int j = x - t->x0;
            if (!(nearer[j] | tie[j])) continue;
            const unsigned win = winning_samples(st, s, p, nearer[j], tie[j], x, y);
            if (!win) continue;
            int64_t e[3];
            edges_at_step(p, e0, j, e);
            if (!mask_passes(s, p, t, e, x, y)) continue;
            take_samples(st, s, slot, win, x, y, &z[j * s->msaa]);
        }
    }
}

/* One opaque triangle whose rectangle the block kernel takes without a walk
 * (rs_sample_block_take: most triangles); false, nothing taken, for the others. The
 * tile's tie bytes are zero before and after. */
static inline __attribute__((always_inline)) bool ms_take_block(ms_tile *st, const plr_state *s, const plr_prim *p,
                                                                uint32_t slot, const tri_walk *t)
{
    const size_t at = owner_at(st, s, t->x0, t->y0);
    const int n = t->x1 - t->x0;
    rs_block_taken taken;
    if (!rs_sample_block_take(&p->su, s->pattern, &t->z, t->x0, t->y0, t->x1, t->y1, &st->z[at], &st->owner[at],
                              (size_t)s->tile * (size_t)s->msaa, slot + 1, st->ties, s->env->isa == RT_ISA_AVX2,
                              &taken))
        return false;
    if (!taken.ties) return true;
    for (int y = t->y0; y < t->y1; y++) take_ties(st, s, p, slot, t->x0, n, y, &st->ties[(y - t->y0) * n]);
    memset(st->ties, 0, (size_t)n * (size_t)(t->y1 - t->y0));
    return true;
}

/* One opaque or MASK triangle: the samples it wins change owner. */
static void ms_take(ms_tile *st, const plr_state *s, const plr_prim *p, uint32_t slot, bool masked)
{
    tri_walk t;
    if (!walk_bounds(st, p, &t)) return;
    if (!masked && ms_take_block(st, s, p, slot, &t)) return;
    walk_make(s, p, &t);
    if (masked) ms_take_masked(st, s, p, slot, &t);
    else ms_take_opaque(st, s, p, slot, &t);
}

/* A triangle: blended ones to their list, the others to a new slot, where they wait
 * for ms_take_waiting. */
static bool ms_add(ms_tile *st, const plr_state *s, const plr_prim *p)
{
    if ((s->alpha.mask || s->alpha.blend) && plr_alpha_mode(s->env, p->tri.material) == SC_ALPHA_BLEND)
        return !plr_blends_aov(s->env) || blended_add(&st->blended, p);
    uint32_t slot;
    if (!ms_slot(st, s, &slot)) return false;
    *ms_prim(&st->prims, slot) = *p;
    return true;
}

/* Pixels being gathered for the pixel shader: each with its triangle, its centre's
 * weights and the samples its colour goes to. Per slot, the shading of a tile keeps its
 * triangle's quad setup for the level of detail (sh_ps_quad_setup), made once across
 * packets (the row-order scan meets a small triangle again in each row it crosses), and
 * its place in the packet being gathered, so that a triangle is listed once per packet
 * however its pixels interleave with other triangles'. */
typedef struct ms_batch {
    int n, ntris;
    uint32_t batch;                       /* the packet's number, from 1 */
    uint32_t *stamp;                      /* per slot: 0 never listed, batch: it is tris[index[slot]] */
    uint8_t *index;
    sh_ps_quad_setup *quad;               /* per slot: valid once its stamp is not 0 */
    sh_ps_quad_setup *quads[SH_PS_MAX];   /* tris[k]'s */
    uint16_t x[SH_PS_MAX], y[SH_PS_MAX];
    double e0[SH_PS_MAX], e1[SH_PS_MAX], area[SH_PS_MAX];   /* for rs_weights_packet */
    float iw[3][SH_PS_MAX], b1[SH_PS_MAX], b2[SH_PS_MAX];
    uint8_t tri[SH_PS_MAX], mask[SH_PS_MAX];
    sh_ps_tri tris[SH_PS_MAX];
} ms_batch;

/* Inline in ms_shade's scan, which calls it once per shaded pixel. */
static inline __attribute__((always_inline)) void batch_add(ms_batch *b, const plr_prim *p,
                                                            uint32_t slot, int x, int y, unsigned mask)
{
    int64_t e0, e1;
    rs_edges_at(&p->su, x, y, &e0, &e1);
    const int i = b->n++;
    b->e0[i] = (double)e0;
    b->e1[i] = (double)e1;
    b->area[i] = (double)p->su.area;
    for (int k = 0; k < 3; k++) b->iw[k][i] = p->su.inv_w[k];
    b->x[i] = (uint16_t)x;
    b->y[i] = (uint16_t)y;
    if (b->stamp[slot] != b->batch) {
        if (!b->stamp[slot]) b->quad[slot].ready = false;
        b->stamp[slot] = b->batch;
        b->index[slot] = (uint8_t)b->ntris;
        b->quads[b->ntris] = &b->quad[slot];
        b->tris[b->ntris++] = p->tri;
    }
    b->tri[i] = b->index[slot];
    b->mask[i] = (uint8_t)mask;
}

/* out[k] = c for the samples k in mask, of msaa (4 or 8): four a select, the pixel's
 * own samples read and written back (a loop over the mask's bits branched on how many
 * samples a fragment has, which edge pixels make unpredictable). */
static inline void put_samples(uint32_t *out, unsigned mask, uint32_t c, int msaa)
{
#if defined(__x86_64__)
    const __m128i bit = _mm_setr_epi32(1, 2, 4, 8), v = _mm_set1_epi32((int)c);
    for (int h = 0; h < msaa; h += 4) {
        const __m128i m = _mm_cmpeq_epi32(_mm_and_si128(_mm_set1_epi32((int)(mask >> h)), bit), bit);
        __m128i *at = (__m128i *)&out[h];
        _mm_storeu_si128(at, _mm_or_si128(_mm_and_si128(m, v), _mm_andnot_si128(m, _mm_loadu_si128(at))));
    }
#else
    for (; mask; mask &= mask - 1) out[__builtin_ctz(mask)] = c;
    (void)msaa;
#endif
}

/* An opaque batch's colours without linear samples: each to its samples, or, mask 0
 * (one owner: ms_shade), to its pixel of the image. */
static void batch_write(const ms_batch *b, const ms_tile *st, const plr_state *s, const uint32_t *rgba)
{
    for (int i = 0; i < b->n; i++) {
        if (!b->mask[i]) {
            s->color[(size_t)b->y[i] * (size_t)s->width + b->x[i]] = rgba[i];
            continue;
        }
        size_t at;
        put_samples(sample_colors(st, s, b->x[i], b->y[i], &at), b->mask[i], rgba[i], s->msaa);
    }
}

/* The batch's colours written (opaque) or blended (a8 per fragment) into their samples,
 * with their linear colours where the frame keeps them (s->sample_hdr). Every fragment
 * has samples (mask 0 comes only from ms_shade's direct pixels: no blending, no linear
 * samples, batch_write). */
static void batch_write_samples(const ms_batch *b, const ms_tile *st, const plr_state *s,
                                const uint32_t *rgba, const float *linear, bool blend)
{
    for (int i = 0; i < b->n; i++) {
        size_t at = 0;
        uint32_t *out = sample_colors(st, s, b->x[i], b->y[i], &at);
        const uint32_t a8 = blend ? plr_alpha8(s->env, &b->tris[b->tri[i]], b->b1[i], b->b2[i],
                                               b->x[i], b->y[i]) : 0;
        for (unsigned m = b->mask[i]; m; m &= m - 1) {
            const int k = __builtin_ctz(m);
            out[k] = blend ? plr_blend(out[k], rgba[i], a8) : rgba[i];
            if (s->sample_hdr && blend) plr_sample_hdr_decode(s, at + (size_t)k);
            else if (s->sample_hdr) plr_sample_hdr_put(s, at + (size_t)k, &linear[3 * i]);
        }
    }
}

/* Shades the batch and writes its colours (batch_write, batch_write_samples); an opaque
 * fragment that owns its pixel's sample 0 gives the pixel's surface (s->surface). */
static void batch_flush(ms_batch *b, const ms_tile *st, const plr_state *s, bool blend)
{
    if (!b->n) return;
    uint32_t rgba[SH_PS_MAX];
    float linear[3 * SH_PS_MAX];
    const float *const iw[3] = {b->iw[0], b->iw[1], b->iw[2]};
    rs_weights_packet(b->n, b->e0, b->e1, b->area, iw, b->b1, b->b2, s->env->isa == RT_ISA_AVX2);
    sh_ps_packet_kept(s->env, &(sh_ps_frags){b->n, b->tris, b->tri, b->b1, b->b2, b->x, b->y,
                                             s->sample_hdr ? linear : NULL},
                      &(sh_ps_kept){b->quads, b->ntris}, rgba);   /* every tri[i] < ntris */
    for (int i = 0; s->surface && !blend && i < b->n; i++)
        if (!b->mask[i] || (b->mask[i] & 1u))
            plr_surface_put(s, b->x[i], b->y[i], &b->tris[b->tri[i]], b->b1[i], b->b2[i]);
    if (!blend && !s->sample_hdr) batch_write(b, st, s, rgba);
    else batch_write_samples(b, st, s, rgba, linear, blend);
    atomic_fetch_add_explicit(s->fragments, (uint64_t)b->n, memory_order_relaxed);
    b->n = b->ntris = 0;
    b->batch++;
}

/* The samples of own[0 .. msaa) equal to o, as a bit mask: four a compare. */
static inline __attribute__((always_inline)) unsigned owned_by(const uint32_t *own, uint32_t o, const int msaa)
{
    unsigned mask = 0;
#if defined(__x86_64__)
    const __m128i v = _mm_set1_epi32((int)o);
    for (int h = 0; h < msaa; h += 4)
        mask |= (unsigned)_mm_movemask_ps(_mm_castsi128_ps(
                    _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)&own[h]), v))) << h;
#else
    for (int k = 0; k < msaa; k++) mask |= (unsigned)(own[k] == o) << k;
#endif
    return mask;
}

/* Whether the msaa owners of a pixel are all the same. */
static inline __attribute__((always_inline)) bool one_owner(const uint32_t *own, const int msaa)
{
    return owned_by(own, own[0], msaa) == (1u << msaa) - 1;
}

/* Whether the samples own[0 .. n) (n a multiple of 4) are all unowned: four a compare. */
static inline __attribute__((always_inline)) bool none_owned(const uint32_t *own, const int n)
{
#if defined(__x86_64__)
    __m128i any = _mm_setzero_si128();
    for (int k = 0; k < n; k += 4) any = _mm_or_si128(any, _mm_loadu_si128((const __m128i *)&own[k]));
    return _mm_movemask_epi8(_mm_cmpeq_epi32(any, _mm_setzero_si128())) == 0xffff;
#else
    uint32_t any = 0;
    for (int k = 0; k < n; k++) any |= own[k];
    return any == 0;
#endif
}

/* After an unowned pixel, ms_shade_pixels tests the next EMPTY_RUN pixels together: the
 * tiles along a silhouette are mostly background. */
#define EMPTY_RUN 4

/* The pixel's owners in turn (in the order of their first sample), each shaded once for
 * its samples (mask); the samples no triangle owns get the background. */
static inline __attribute__((always_inline)) void ms_shade_samples(ms_batch *b, const ms_tile *st,
                                                                    const plr_state *s, const uint32_t *own,
                                                                    int x, int y, const int msaa)
{
    const unsigned empty = owned_by(own, 0, msaa);
    if (empty) {
        size_t at = 0;
        uint32_t *out = sample_colors(st, s, x, y, &at);
        for (unsigned m = empty; m; m &= m - 1) {
            const int k = __builtin_ctz(m);
            out[k] = s->clear_color;
            if (s->sample_hdr) plr_sample_hdr_clear(s, x, y, at + (size_t)k);
        }
    }
    for (unsigned left = ((1u << msaa) - 1) & ~empty; left;) {
        const uint32_t o = own[__builtin_ctz(left)];
        const unsigned mask = owned_by(own, o, msaa);
        left &= ~mask;
        if (b->n == SH_PS_MAX) batch_flush(b, st, s, false);
        batch_add(b, ms_prim(&st->prims, o - 1), o - 1, x, y, mask);
    }
}

/* Each triangle that owns samples of a pixel, shaded once for them; the samples no
 * triangle owns get the background. A pixel whose samples all have one owner (or none)
 * resolves to that one colour (the box filter of equal bytes is those bytes), so, unless
 * blended triangles will read its samples or the linear colour is asked for (its resolve
 * averages linear samples), its colour goes straight to the image (or the image keeps
 * the background ms_shade wrote first); the others are listed for the resolve
 * (st->mixed). */
static inline __attribute__((always_inline)) void ms_shade_pixels(ms_tile *st, const plr_state *s,
                                                                   ms_batch *b, const int msaa)
{
    _Static_assert(PLR_MAX_TILE <= 256, "a listed pixel's dx and dy fit a byte each");
    const bool direct = st->blended.n == 0 && !s->sample_hdr;   /* the float resolve reads every sample */
    st->nmixed = 0;
    for (int y = st->r.y0; y < st->r.y1; y++)
        for (int x = st->r.x0; x < st->r.x1; x++) {
            const int dx = x - st->r.ox, dy = y - st->r.oy;
            const uint32_t *own = &st->owner[((size_t)dy * (size_t)s->tile + (size_t)dx) * (size_t)msaa];
            if (!(direct && one_owner(own, msaa))) {
                st->mixed[st->nmixed++] = (uint16_t)(dy << 8 | dx);
                ms_shade_samples(b, st, s, own, x, y, msaa);
            } else if (own[0]) {
                if (b->n == SH_PS_MAX) batch_flush(b, st, s, false);
                batch_add(b, ms_prim(&st->prims, own[0] - 1), own[0] - 1, x, y, 0);
            } else if (x + EMPTY_RUN < st->r.x1 && none_owned(own + msaa, EMPTY_RUN * msaa)) {
                x += EMPTY_RUN;                /* the next pixels keep the background too */
            }
        }
}

static bool ms_shade(ms_tile *st, const plr_state *s)
{
    ms_batch batch, *b = &batch;
    b->n = b->ntris = 0;
    b->batch = 1;
    const size_t slots = st->prims.n ? st->prims.n : 1;
    b->stamp = calloc(slots, sizeof *b->stamp);
    b->index = malloc(slots);
    b->quad = malloc(slots * sizeof *b->quad);
    const bool ok = b->stamp && b->index && b->quad;
    if (ok) {
        plr_fill_background(s, &st->r);   /* tile_background.c; the shading writes over it */
        /* each sample count compiled for itself: the one-owner test unrolled */
        if (s->msaa == 4) ms_shade_pixels(st, s, b, 4);
        else ms_shade_pixels(st, s, b, 8);
        batch_flush(b, st, s, false);
    }
    free(b->stamp);
    free(b->index);
    free(b->quad);
    return ok;
}

/* The blended triangles in primitive-id order, per sample over the opaque depth (less,
 * no depth write). */
static void ms_blend(ms_tile *st, const plr_state *s)
{
    if (!st->blended.n) return;
    ms_batch batch, *b = &batch;
    b->n = b->ntris = 0;
    b->batch = 1;
    blended_sort(&st->blended);
    const bool avx2 = s->env->isa == RT_ISA_AVX2;
    uint8_t front[PLR_MAX_TILE], tie[PLR_MAX_TILE];
    float z[PLR_MAX_TILE * RS_MAX_SAMPLES];
    for (size_t n = 0; n < st->blended.n; n++) {
        const plr_prim *p = &st->blended.p[n];
        uint32_t stamp = 0;               /* slot 0: each packet holds this triangle only */
        uint8_t index;
        sh_ps_quad_setup quad;
        b->stamp = &stamp, b->index = &index, b->quad = &quad;
        tri_walk t;
        if (!walk_of(st, s, p, &t)) continue;
        for (int y = t.y0; y < t.y1; y++) {
            int64_t e0[3];
            rs_centre_edges(&p->su, t.x0, y, e0);
            rs_sample_row(&p->su, &t.w, &t.z, e0, t.x1 - t.x0,
                          &st->z[owner_at(st, s, t.x0, y)], front, tie, z, avx2);
            for (int x = t.x0; x < t.x1; x++) {
                if (!front[x - t.x0]) continue;
                batch_add(b, p, 0, x, y, front[x - t.x0]);
                if (b->n == SH_PS_MAX) batch_flush(b, st, s, true);
            }
        }
        batch_flush(b, st, s, true);      /* one triangle's fragments before the next's */
    }
}

/* The waiting triangles' samples taken, in arrival order (an owner is the nearest
 * triangle, equal depths the smaller primitive id, so the order changes no owner). A
 * tile's samples are walked here, at its input's end (or when its store is full), and
 * not as each packet arrives: the tiles are open together (one worker: Bin feeds them
 * all in turn), and a tile's depths and owners, 128 KiB at 4x, were out of the core's
 * caches whenever a packet reached them. Walked one tile at a time they stay in the
 * second-level cache, the records are read in memory order, and the shading that
 * follows finds the owners' records cached: asking for either ahead (as before) only
 * cost time. False when out of memory. */
static bool ms_take_waiting(ms_tile *st, const plr_state *s)
{
    if (!ms_buffers(st, s)) return false;
    const bool alpha = s->alpha.mask || s->alpha.blend;
    for (uint32_t slot = st->taken; slot < st->prims.n; slot++) {
        const plr_prim *p = ms_prim(&st->prims, slot);
        const bool masked = alpha && plr_alpha_mode(s->env, p->tri.material) == SC_ALPHA_MASK;
        ms_take(st, s, p, slot, masked);
    }
    st->taken = st->prims.n;
    return true;
}

void plr_tile_shade_msaa(gr_ctx *c)
{
    plr_state *s = gr_user(c);
    ms_tile st;
    gr_assert(c, gr_key(c) < (uint64_t)s->tiles_x * (uint64_t)s->tiles_y);
    s->visited[gr_key(c)] = 1;
    ms_init(&st, s, gr_key(c));
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        const binned_pkt *p = w.mem;
        gr_work_units(c, p->count);              /* its cost follows triangles, not packets */
        plr_check_binned(c, s, p);
        for (uint32_t i = 0; i < p->count; i++) gr_assert(c, ms_add(&st, s, &p->t[i].prim));
        gr_commit(c, 0, 1);
    }
    gr_assert(c, ms_take_waiting(&st, s) && ms_colors(&st, s) && ms_shade(&st, s));
    ms_blend(&st, s);
    if (st.colors) plr_samples_resolve_own(s, &st.r, st.mixed, st.nmixed, st.colors);
    else plr_samples_resolve(s, &st.r, st.mixed, st.nmixed);
    ms_free(&st);
}
