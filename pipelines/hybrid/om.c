/* om.c — hybrid.om, the Extended Direct3D graph's Output Merger (a Thread stage, one
 * instance per subqueue of the contributions set: per framebuffer tile, plh_tile_key).
 *
 * It sums the base layer's contributions (packets.h: the opaque surface and what its rays
 * bring, or the background) into the frame's sums as rt.blend sums them, and each
 * blended layer's apart, in a table of its own keyed by (slot, layer). Once its subqueue
 * closes (every contribution in) it encodes its pixels from their sums (sum_encode.h)
 * and blends each slot's layers over its base in primitive order, each layer's encoded
 * colour with its alpha byte, per 8-bit channel as the raster graphs' Output Merger
 * blends (plr_blend): Direct3D's blending in draw order. Integer sums and a sorted table
 * make the same image whatever order contributions arrive in. With msaa > 1 each slot
 * (a fragment: fragments.h) gets its layers; a sample behind a blended fragment has its
 * own slot for what lies behind it there (PLH_BEHIND rays) and the fragment's layer
 * blended over that, and the pixel is resolved from its samples' bytes. The linear
 * colour of a blended pixel is its blended bytes decoded, as the raster graphs' is. */
#include "pipelines/hybrid/internal.h"

#include "pipelines/image/image.h"
#include "pipelines/raster/alpha.h"
#include "pipelines/raytrace/sum_encode.h"
#include "rasterizer/prefetch.h"

#include <stdlib.h>
#include <string.h>

/* A blended layer of a slot and its sums. */
typedef struct om_layer {
    uint32_t index, layer, alpha8;        /* layer 0: an empty entry of the table */
    int64_t sum[3];
} om_layer;

/* Open addressing with linear probing, at most half full; cap a power of two. */
typedef struct om_layers {
    om_layer *e;
    size_t n, cap;
} om_layers;

typedef struct om_state {
    plh_tile_keys keys;
    plrt_encoder enc;
    bool cutters_clear_sums;              /* else each instance clears its pixels' sums */
    /* Each instance's blended layers (tables[key]), owned by the stage rather than the
     * instance: a run that fails leaves instances where they stand (blocked in a
     * reserve), and om_destroy frees what they held. */
    om_layers *tables;
    size_t ntables;
} om_state;

static size_t hash_of(uint32_t index, uint32_t layer, size_t cap)
{
    return (size_t)((index * 0x9e3779b1u) ^ (layer * 0x85ebca77u)) & (cap - 1);
}

static om_layer *find(om_layers *t, uint32_t index, uint32_t layer)
{
    size_t at = hash_of(index, layer, t->cap);
    while (t->e[at].layer && (t->e[at].index != index || t->e[at].layer != layer)) at = (at + 1) & (t->cap - 1);
    return &t->e[at];
}

static bool grow(om_layers *t)
{
    om_layers g = {calloc(t->cap ? 2 * t->cap : 1024, sizeof *g.e), t->n, t->cap ? 2 * t->cap : 1024};
    if (!g.e) return false;
    for (size_t i = 0; i < t->cap; i++)
        if (t->e[i].layer) *find(&g, t->e[i].index, t->e[i].layer) = t->e[i];
    free(t->e);
    *t = g;
    return true;
}

/* Adds k (layer > 0) to its layer's sums; false when out of memory. */
static bool add_layered(om_layers *t, const plh_contrib *k)
{
    if (2 * (t->n + 1) > t->cap && !grow(t)) return false;
    om_layer *e = find(t, k->index, k->layer);
    if (!e->layer) {
        *e = (om_layer){k->index, k->layer, k->alpha8, {0, 0, 0}};
        t->n++;
    }
    if (k->alpha8 != PLH_ALPHA_LATER) e->alpha8 = k->alpha8;   /* the surface's own term's */
    for (int ch = 0; ch < 3; ch++) e->sum[ch] += plrt_to_fixed(k->v[ch]);
    return true;
}

static void *om_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    if (!plh_agree_layout(i, err)) return NULL;
    om_state *b = malloc(sizeof *b);
    if (!b) {
        snprintf(err, CP_ERR_MAX, "out of memory");
        return NULL;
    }
    b->cutters_clear_sums = plrt_cutters_clear_sums(i);
    b->tables = NULL;
    if (plh_tile_keys_of(i, "in", &b->keys, err) && plrt_encoder_init(&b->enc, i, (int)cp_int(i, "msaa"), err)) {
        b->ntables = cp_port_subqueues(i, "in");   /* one per tile: plh_tile_keys_of checked */
        b->tables = calloc(b->ntables ? b->ntables : 1, sizeof *b->tables);
        if (b->tables) return b;
        snprintf(err, CP_ERR_MAX, "out of memory");
    }
    free(b);
    return NULL;
}

static void om_destroy(void *state)
{
    om_state *b = state;
    for (size_t i = 0; i < b->ntables; i++) free(b->tables[i].e);
    free(b->tables);
    free(b);
}

/* Tile `key`'s pixels within the frame's region: [x0, x1) x [y0, y1), empty for a tile
 * outside it. */
typedef struct om_rect { int x0, y0, x1, y1; } om_rect;

static om_rect tile_rect(const om_state *b, uint32_t key)
{
    const pl_region *r = &b->enc.f->region;
    const int tile = (int)b->keys.tile, tx = (int)(key % b->keys.tiles_x), ty = (int)(key / b->keys.tiles_x);
    om_rect t = {tx * tile, ty * tile, tx * tile + tile, ty * tile + tile};
    if (t.x0 < r->x0) t.x0 = r->x0;
    if (t.y0 < r->y0) t.y0 = r->y0;
    if (t.x1 > r->x1) t.x1 = r->x1;
    if (t.y1 > r->y1) t.y1 = r->y1;
    if (t.x0 >= t.x1 || t.y0 >= t.y1) t.x1 = t.x0, t.y1 = t.y0;
    return t;
}

typedef enum om_step { OM_CLEAR, OM_ENCODE } om_step;

/* Asks for the sums of pixels [lo, hi): the encode's reads. A tile's sums were last
 * written while its contributions came in, long before the tile closes, and each row of
 * a tile is a short run at its own place in the frame, which the hardware prefetcher
 * meets too late; a hint: it loads nothing. */
static void prefetch_sums(const om_state *b, size_t lo, size_t hi)
{
    const char *first = (const char *)(b->enc.sums + lo * 3 * b->enc.msaa);
    const char *end = (const char *)(b->enc.sums + hi * 3 * b->enc.msaa);
    for (const char *line = first; line < end; line += 64) rs_prefetch_line(line);
}

/* Does `step` for the pixels of t, row by row (the encode asking for each next row's
 * sums before it encodes a row). */
static void om_tile(const om_state *b, om_rect t, om_step step)
{
    const size_t m = b->enc.msaa, width = (size_t)b->enc.f->width;
    for (int y = t.y0; y < t.y1; y++) {
        const size_t lo = (size_t)y * width + (size_t)t.x0, hi = (size_t)y * width + (size_t)t.x1;
        if (step == OM_CLEAR) {
            memset(b->enc.sums + lo * 3 * m, 0, (hi - lo) * 3 * m * sizeof *b->enc.sums);
            continue;
        }
        if (y + 1 < t.y1) prefetch_sums(b, lo + width, hi + width);
        plrt_encode_pixels(&b->enc, lo, hi);
    }
}

static int by_slot_and_layer(const void *x, const void *y)
{
    const om_layer *a = x, *b = y;
    if (a->index != b->index) return a->index < b->index ? -1 : 1;
    return (a->layer > b->layer) - (a->layer < b->layer);
}

/* Slot `slot`'s base layer encoded (RGB in the low three bytes). */
static uint32_t base_bytes(const om_state *b, size_t slot)
{
    const int64_t *base = b->enc.sums + slot * 3;
    uint32_t v = 0;
    for (int ch = 0; ch < 3; ch++) v |= (uint32_t)plrt_encode(b->enc.f->aov, base[ch]) << (8 * ch);
    return v;
}

/* Layer l's encoded colour blended over dst with its alpha byte, as the raster OM blends. */
static uint32_t blend_over(const om_state *b, uint32_t dst, const om_layer *l)
{
    uint32_t src = 0;
    for (int ch = 0; ch < 3; ch++) src |= (uint32_t)plrt_encode(b->enc.f->aov, l->sum[ch]) << (8 * ch);
    return plr_blend(dst, src, l->alpha8);
}

/* The entries of slot `slot` among l[0..n) (sorted): l[*from .. *from + returned). */
static size_t slot_layers(const om_layer *l, size_t n, size_t slot, size_t *from)
{
    size_t i = 0;
    while (i < n && l[i].index < slot) i++;
    *from = i;
    while (i < n && l[i].index == slot) i++;
    return i - *from;
}

/* The bytes of sample k of pixel p, whose layers are l[0..n) (sorted, all its slots).
 * With msaa > 1 a sample behind a blended fragment (whose slot holds the layer of the
 * primitive the sample sees) has what lies behind it at that sample in its own slot
 * (PLH_BEHIND rays), and its layers are the fragment slot's and its own slot's, merged
 * in primitive order; any other sample shows its fragment's slot. *base: the slot whose
 * base it shows; *blended: whether a layer was blended over it. */
static uint32_t sample_bytes(const om_state *b, size_t p, size_t k, const om_layer *l, size_t n,
                             size_t *base, bool *blended)
{
    const plrt_encoder *e = &b->enc;
    const size_t own = p * e->msaa + k, slot = e->msaa > 1 ? plrt_sample_slot(e, p, k) : own;
    size_t fa, oa = 0;
    const size_t fn = slot_layers(l, n, slot, &fa);
    bool behind = false;
    size_t mine = fa;                     /* the fragment's own layer, when behind */
    for (size_t i = fa; e->msaa > 1 && i < fa + fn; i++)
        if (l[i].layer == e->vis[own]) behind = true, mine = i;
    /* another sample's: the fragment's layer and its own slot's (the fragment's slot's
       others are its first sample's) */
    const bool other = behind && own != slot;
    const size_t on = other ? slot_layers(l, n, own, &oa) : 0;
    if (other) fa = mine;
    const size_t fe = other ? mine + 1 : fa + fn;
    *base = behind ? own : slot;
    *blended = fe > fa || on > 0;
    uint32_t dst = base_bytes(b, *base);
    for (size_t i = fa, j = oa; i < fe || j < oa + on;)
        dst = blend_over(b, dst, j == oa + on || (i < fe && l[i].layer < l[j].layer) ? &l[i++] : &l[j++]);
    return dst;
}

/* Pixel p, whose layers are l[0..n) (sorted, all its slots), into the image: its
 * samples' bytes resolved as plrt_encode_pixels resolves them (one sample: its bytes),
 * and its linear colour, a blended sample's bytes decoded as the raster sinks decode. */
static void blend_pixel(const om_state *b, size_t p, const om_layer *l, size_t n)
{
    const plrt_encoder *e = &b->enc;
    const size_t m = e->msaa;
    uint32_t sum[3] = {0, 0, 0};
    float lin[3] = {0, 0, 0};
    for (size_t k = 0; k < m; k++) {
        size_t base;
        bool blended;
        const uint32_t v = sample_bytes(b, p, k, l, n, &base, &blended);
        for (int ch = 0; ch < 3; ch++) {
            const uint8_t byte = (uint8_t)(v >> (8 * ch));
            sum[ch] += byte;
            lin[ch] += blended ? pli_decode_srgb8(byte) : (float)((double)e->sums[base * 3 + ch] / PL_FIXED_ONE);
        }
    }
    uint8_t *rgba = (uint8_t *)e->color + p * 4;
    for (int ch = 0; ch < 3; ch++) rgba[ch] = (uint8_t)((sum[ch] + m / 2) >> __builtin_ctz(e->msaa));
    for (int ch = 0; e->hdr && ch < 3; ch++) e->hdr[p * 4 + ch] = lin[ch] / (float)m;
}

/* After the pixels are encoded: every pixel with blended layers, blended. */
static void blend_layers(const om_state *b, om_layers *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->cap; i++)
        if (t->e[i].layer) t->e[n++] = t->e[i];
    qsort(t->e, n, sizeof *t->e, by_slot_and_layer);
    const uint32_t shift = b->keys.shift;
    for (size_t i = 0, j; i < n; i = j) {
        const uint32_t p = t->e[i].index >> shift;
        for (j = i + 1; j < n && t->e[j].index >> shift == p; j++) {}
        blend_pixel(b, p, &t->e[i], j - i);
    }
}

/* An alpha byte, or PLH_ALPHA_LATER (a shadow ray's term, whose surface's own term brings
 * its layer's byte). */
static bool alpha_ok(const plh_contrib *k)
{
    return k->alpha8 <= 255 || k->alpha8 == PLH_ALPHA_LATER;
}

/* A layer whose alpha byte never came: a stage feeding the input sent a shadow ray's term
 * to a layer its surface sent nothing to. The run fails naming the pixel. */
static bool alpha_missing(gr_ctx *c, const om_state *b, const om_layers *t)
{
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->e[i].layer || t->e[i].alpha8 != PLH_ALPHA_LATER) continue;
        const uint32_t pixel = t->e[i].index >> b->keys.shift;
        char why[200];
        snprintf(why, sizeof why, "pixel (%u, %u), layer %u: a shadow ray's term with no term of its "
                 "surface's (no alpha byte): a stage feeding the input computed a wrong layer",
                 pixel % b->keys.width, pixel / b->keys.width, t->e[i].layer);
        gr_assert_at(c, false, why, __FILE__, __LINE__);
        return true;
    }
    return false;
}

/* A contribution outside this instance's pixels or with an alpha byte past 255 (a stage
 * feeding its input computed a wrong one): the run fails naming it, instead of adding
 * into another instance's sums, outside the image, or blending garbage. */
static bool invalid(gr_ctx *c, const om_state *b, const plh_contrib *k, om_rect t)
{
    const uint32_t pixel = k->index >> b->keys.shift, width = b->keys.width, row = pixel / width;
    const int x = (int)(pixel - row * width), y = (int)row;
    if (x >= t.x0 && x < t.x1 && y >= t.y0 && y < t.y1 && alpha_ok(k)) return false;
    char why[240];
    if (!alpha_ok(k))
        snprintf(why, sizeof why, "a contribution to pixel (%d, %d) with alpha byte %u: a stage feeding "
                 "its input computed a wrong layer", x, y, k->alpha8);
    else
        snprintf(why, sizeof why, "a contribution to pixel (%d, %d), outside this Output Merger's "
                 "[%d, %d) x [%d, %d): a stage feeding its input computed a wrong pixel", x, y, t.x0, t.x1,
                 t.y0, t.y1);
    gr_assert_at(c, false, why, __FILE__, __LINE__);
    return true;
}

/* Whether k lies in t (and its alpha byte in range), by the row span of t that holds the
 * last one checked (*span, [lo, hi) pixels), else by invalid(), which fails the run for
 * one outside it. */
static bool in_tile(gr_ctx *c, const om_state *b, const plh_contrib *k, om_rect t, uint32_t span[2])
{
    const uint32_t pixel = k->index >> b->keys.shift;
    if (pixel - span[0] < span[1] - span[0] && alpha_ok(k)) return true;
    if (invalid(c, b, k, t)) return false;
    const uint32_t row = pixel / b->keys.width * b->keys.width;
    span[0] = row + (uint32_t)t.x0;
    span[1] = row + (uint32_t)t.x1;
    return true;
}

static void om_main(gr_ctx *c)
{
    const om_state *b = gr_user(c);
    const uint64_t key = gr_key(c);
    if (key >= b->ntables) {
        gr_assert_at(c, false, "a subqueue key past the frame's tiles", __FILE__, __LINE__);
        return;
    }
    const om_rect t = tile_rect(b, (uint32_t)key);
    if (!b->cutters_clear_sums) om_tile(b, t, OM_CLEAR);
    om_layers *layers = &b->tables[key];
    uint32_t span[2] = {0, 0};
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        const uint32_t n = gr_count(w.mem);
        const plh_contrib *k = plrt_elems(w.mem);
        for (uint32_t i = 0; i < n; i++) {
            if (!in_tile(c, b, &k[i], t, span)) goto out;
            if (!k[i].layer) {
                plh_sum(b->enc.sums, k[i].index, k[i].v);
            } else if (!add_layered(layers, &k[i])) {
                gr_assert_at(c, false, "out of memory (blended layers)", __FILE__, __LINE__);
                goto out;
            }
        }
        gr_commit(c, 0, 1);
    }
    if (layers->n && alpha_missing(c, b, layers)) goto out;
    om_tile(b, t, OM_ENCODE);
    if (layers->n) blend_layers(b, layers);
out:
    free(layers->e);
    *layers = (om_layers){NULL, 0, 0};
}

static const cp_port om_ports[] = {
    {"in", GR_BIND_INPUT, "hybrid.contributions", "a queue set of a subqueue per framebuffer tile, one "
     "instance each"}};
static const cp_param om_params[] = {
    {"msaa", CP_INT, "1", 1, PL_MAX_MSAA, "sum slots per pixel, resolved from the samples' bytes "
     "(the depth pass's samples: 1, 4 or 8)"},
    PLH_TILE_PARAM};
static const cp_resource_use om_uses[] = {
    {"sums", CP_READS | CP_WRITES, "adds the base layers' contributions (clears its pixels' without a tile cutter)"},
    {"sample-sums", CP_READS | CP_WRITES, "with msaa > 1"},
    {"color", CP_OVERWRITES, "every pixel of the region, from the sums, blended layers blended"},
    {"sample-visibility", CP_READS, "with msaa > 1: which fragment each sample belongs to"},
    {"hdr-color", CP_OVERWRITES, "the sums as floats (a blended pixel: its bytes decoded), when an "
     "image-space stage or a float output reads them"},
    PL_AGREED_USE("msaa and tile")};

const cp_stage_type plh_om_type = {
    "hybrid.om", "Extended Direct3D Output Merger: sums contributions per fragment (fixed point), an "
    "instance per subqueue, blends blended surfaces' layers in draw order, makes the image", GR_THREAD,
    CP_PER_EVERY_SUBQUEUE, om_ports, 1, om_params, 2, om_main, om_create, NULL, om_destroy, om_uses, 6};
