/* internal.h — what the stages of the rasterization graph share (internal to
 * pipelines/raster*.c): the per-stage state and the stage entry points. Their packets
 * are public: pipelines/raster/packets.h.
 *
 * Files: raster_stages.c (the registered types), raster.c (plr_render over the graph
 * files), geometry.c (IA, VS, Reorder), vs_reach.c (the VS's
 * pixel-bounds test in vectors), rast.c (Rast; Setup/Bin and
 * per-tile Rast; Bin), pixels.c (PS, OM), tile_shade.c (Tile-Shade),
 * depth_tile.c (its depth and visibility tile), tile_shade_msaa.c (Tile-Shade with
 * multisampling), msaa.c (the sample buffers and their resolve), zraster.c and ztile.c
 * (the hybrid's depth-only pass: Z-Raster per group, Z-Tile per tile). */
#ifndef PIPELINES_RASTER_INTERNAL_H
#define PIPELINES_RASTER_INTERNAL_H

#include "pipelines/frame.h"
#include "pipelines/surface.h"
#include "pipelines/raster/alpha.h"
#include "pipelines/raster/hiz.h"
#include "pipelines/raster/linear21.h"
#include "pipelines/raster/raster.h"
#include "pipelines/raster/packets.h"
#include "pipelines/raster/tile_pool.h"
#include "pipelines/raytrace/packets.h"
#include "rasterizer/samples.h"
#include "pipelines/raytrace/sums.h"

#include <stdatomic.h>
#include <stddef.h>

/* Rast's view of the framebuffer tiling. */
/* region: the frame's pixels to render; Rast makes no fragment outside it.
 * tile_shift: log2(tile) when the tile edge is a power of two (the default 64), else -1:
 * the binning stages find a triangle's tiles by a shift rather than integer divisions,
 * which were most of their per-triangle time. */
typedef struct rast_cfg { int width, height, tile, tiles_x, tile_shift; pl_region region; } rast_cfg;


static inline rast_cfg plr_rast_cfg(int width, int height, int tile, int tiles_x, pl_region region)
{
    int shift = __builtin_ctz((unsigned)tile);
    return (rast_cfg){width, height, tile, tiles_x, (1 << shift) == tile ? shift : -1, region};
}

/* The tile column (or row) of pixel column (or row) p >= 0. */
static inline int plr_tile_of(const rast_cfg *rc, int p)
{
    return rc->tile_shift >= 0 ? p >> rc->tile_shift : p / rc->tile;
}

/* The pixels of framebuffer tile `tile` the frame renders: the tile clipped to the
 * image and the region, [x0,x1) x [y0,y1); false when that is empty. */
typedef struct tile_rect { int ox, oy, x0, y0, x1, y1; } tile_rect;   /* ox, oy: its corner */

/* The same for the tile in column tx, row ty. */
static inline bool plr_tile_rect_at(const rast_cfg *rc, int tx, int ty, tile_rect *t)
{
    const pl_region *r = &rc->region;
    t->ox = tx * rc->tile;
    t->oy = ty * rc->tile;
    t->x0 = t->ox > r->x0 ? t->ox : r->x0;
    t->y0 = t->oy > r->y0 ? t->oy : r->y0;
    t->x1 = t->ox + rc->tile < r->x1 ? t->ox + rc->tile : r->x1;
    t->y1 = t->oy + rc->tile < r->y1 ? t->oy + rc->tile : r->y1;
    return t->x0 < t->x1 && t->y0 < t->y1;
}

static inline bool plr_tile_rect(const rast_cfg *rc, uint64_t tile, tile_rect *t)
{
    return plr_tile_rect_at(rc, (int)(tile % (uint64_t)rc->tiles_x),
                            (int)(tile / (uint64_t)rc->tiles_x), t);
}

/* A depth layer (frame resource "depth-layer", one per raster.zraster copy): depth and
 * visible primitive + 1 per pixel over the whole image, private to its copy, which
 * clears the parts it draws in; undefined elsewhere. Each array has RS_DEPTH_SLACK
 * elements past the image for rs_depth_rect. */
/* Its resource name: "sample-depth-layer" (a depth and primitive per sample) with
 * msaa > 1. */
static inline const char *plr_layer_name(int msaa)
{
    return msaa > 1 ? "sample-depth-layer" : "depth-layer";
}

typedef struct plr_depth_layer {
    float *z;
    uint32_t *vis;
    /* Its Z-Raster's flags, per framebuffer tile: 1 where it drew (its state's
     * layer_drawn, final once it is done), and how many tiles that is. Z-Tile reads them
     * here, not from the packet that says the layer is done: a packet is data another
     * stage may have written. */
    const uint8_t *drawn;
    size_t ntiles;
} plr_depth_layer;

/* A raster stage's state: its parameters and pointers to what it uses of the frame
 * (pipelines/frame.h). Each stage instance has its own, made by its create hook. */
typedef struct plr_state {
    int width, height;
    int tile, tiles_x, tiles_y;           /* framebuffer tiles (the `tile` parameter) */
    int batch;                            /* triangles per IA/VS packet */
    uint32_t batches;
    uint32_t vs_room;                     /* VS: records per output packet */
    bool coarse_z;                        /* coarse depth test on (and possible) */
    bool attributes;                      /* VS: the PS gets the vertices' attributes (not
                                             raster.vs-depth's) */
    bool any_order;                       /* fragments in any order, ties to the smaller
                                             primitive id (pixels.c) */
    rast_cfg rc;
    int msaa;                             /* samples per pixel (the `msaa` parameter) */
    const rs_samples *pattern;            /* their positions (rasterizer/samples.h) */
    const rs_reach *reach;                /* the setup's pixel bounds: the samples' */
    float *sample_z;                      /* msaa > 1, the OM: the frame's sample depths */
    uint32_t *sample_rgba;                /* msaa > 1: its sample colours (msaa.c); else
                                             NULL */
    float *sample_hdr;                    /* msaa > 1 with hdr: linear RGB per sample,
                                             resolved into hdr as their mean; else NULL */
    plr_alpha_info alpha;                 /* MASK, BLEND, single-sided materials in the
                                             scene (alpha.h); all false: fast paths */
    const sh_raster_env *env;
    const sc_geometry *geo;
    const sh_vertex *vertices;            /* VS: geo's vertices interleaved (the frame
                                             resource "raster-vertices"), else NULL */
    const sh_position_buffer *positions;  /* the depth-only VS without attributes: geo's
                                             positions in first-use order (the frame
                                             resource "depth-positions"), else NULL */
    uint32_t *color;                      /* width*height, written by OM instances (NULL:
                                             the depth-only pass) */
    bool linear_out;                      /* PS: packs its fragments' linear colour for the
                                             OM (pl_frame.hdr; linear21.h) */
    float *hdr;                           /* the frame's "hdr-color" when it wants the linear
                                             colour (pl_frame.hdr), else NULL: RGBA f32 */
    pl_surface *surface;                  /* the sinks: the frame's "surface" when a float
                                             output wants it (pl_frame.surface), else NULL */
    uint32_t *vis;                        /* visible primitive + 1 per pixel, kept when
                                             fragments come in any order (else NULL) */
    _Atomic(uint32_t) *depth;             /* float bits; OM writes, PS reads (early-Z) */
    plr_hiz *hiz;                         /* OM writes, Rast reads (coarse depth test) */
    _Atomic(uint64_t) *rasterized, *fragments, *hidden;   /* frame counters */
    _Atomic(uint32_t) *next_batch;        /* IA: the cursor its replicas share */
    _Atomic(uint64_t) *depth_tested;      /* Z-Raster's covered pixels (else NULL) */
    plr_depth_layer *layer;               /* Z-Raster: its copy's depth layer */
    uint32_t layer_index;                 /* Z-Raster: its frame resource index */
    uint8_t *layer_drawn;                 /* Z-Raster: per tile, 1 once the layer's part
                                             there is cleared (it draws there) */
    const pl_frame *frame;                /* Z-Tile: the frame's depth layers */
    uint32_t ztile_copies;                /* Z-Raster: the Z-Tile copies it tells */
    int spp;                              /* Z-Tile: samples per pixel of its runs */
    uint32_t run_samples;                 /* Z-Tile: samples per run */
    plrt_tile_deal deal;                   /* Z-Tile: which copy takes which tile */
    uint32_t run_outputs;                 /* Z-Tile: its runs output's copies (runs[*]) */
    bool background_blocks;               /* Z-Tile with `background`: sums the blocks
                                             where nothing is visible itself */
    int64_t background[3];                /* what such a pixel adds to its sums */
    plr_tile_pool *tile_pool;             /* Tile-Shade: the frame's "tile-buffers", its
                                             tiles' buffers between tiles (tile_pool.h) */
    struct plr_cleared_tiles *cleared;    /* Bin and Tile-Shade: the frame's "cleared-tiles"
                                             (tile_background.c); NULL: Bin writes no
                                             background (no Tile-Shade reads the marks) */
    uint32_t clear_color;                 /* ... and the image's background */
    uint8_t *visited;                     /* Tile-Shade: per tile, 1 once an instance had it */
    _Atomic(uint64_t) *filled_late;       /* Tile-Shade: tiles its finish hook wrote */
    uint32_t replica, replicas;           /* Bin: its copy, of how many */
} plr_state;

/* The frame resource "cleared-tiles" (tile_background.c): per tile, the run a Bin wrote
 * its background in; `run` is advanced by Tile-Shade's create, once a frame, so no mark
 * is ever reset. Its marks are made by the first stage that reserves them. */
typedef struct plr_cleared_tiles {
    uint32_t run;
    uint32_t *mark;
} plr_cleared_tiles;
void *plr_cleared_tiles_create(void *frame, const char *owner);
void plr_cleared_tiles_destroy(void *data);
/* Marks for `tiles` tiles (the same for every stage: agreed-settings); false when out of
 * memory. */
bool plr_cleared_tiles_reserve(plr_cleared_tiles *c, size_t tiles);
/* The background over r (in the image). */
void plr_fill_background(const plr_state *s, const tile_rect *r);
/* Bin, after its last packet: the background of its share of the tiles (tile rows
 * replica, replica + replicas, ...) it sent nothing to (sent: per tile), marked; nothing
 * when s->cleared is NULL. */
void plr_bin_clear_unsent(const plr_state *s, const uint8_t *sent);
/* Tile-Shade's finish hook: the background of the rendered tiles that had no instance
 * and no Bin's mark this run. */
void plr_tile_shade_finish(void *state, void *frame);

/* Tile-Shade's depth and visibility tile: its pixels in the frame's region,
 * [x0,x1) x [y0,y1), and a private buffer over the whole tile, cleared (depth FLT_MAX,
 * no primitive) by plr_depth_tile_init (depth_tile.c), which allocates t.z and t.vis
 * when they are NULL and else reuses them (a Tile-Shade keeps them across tiles). */
typedef struct plr_depth_tile {
    int x0, y0, x1, y1;
    rs_depth_target t;
    bool avx2;                            /* rs_depth_rect's kernel (the frame's env.isa) */
} plr_depth_tile;

/* The linear colour of pixel (x, y) into s->hdr (when it has one): rgb, alpha 1. A
 * pixel whose colour the 8-bit image defines (blended; multisampled and resolved) gets
 * that colour decoded, plr_hdr_decode. */
void plr_hdr_put(const plr_state *s, int x, int y, const float *rgb);
void plr_hdr_decode(const plr_state *s, int x, int y);
/* The same per sample (s->sample_hdr, sample index at = plr_sample_at + k): the linear
 * colour, the sample's byte decoded (blended), the pixel's cleared colour (hdr-color
 * before the tile is resolved: the background); and the resolve of pixel (x, y), the
 * samples' mean in linear colour. */
void plr_sample_hdr_put(const plr_state *s, size_t at, const float *rgb);
void plr_sample_hdr_decode(const plr_state *s, size_t at);
void plr_sample_hdr_clear(const plr_state *s, int x, int y, size_t at);
void plr_sample_hdr_resolve(const plr_state *s, int x, int y);

/* The surface of pixel (x, y) into s->surface (the caller checked it is wanted): t's at
 * weights b1, b2 (surface.c). */
static inline void plr_surface_put(const plr_state *s, int x, int y, const sh_ps_tri *t, float b1,
                                   float b2)
{
    s->surface[(size_t)y * (size_t)s->width + (size_t)x] = pl_surface_of_fragment(s->env, t, b1, b2);
}

bool plr_depth_tile_init(plr_depth_tile *d, const plr_state *s, uint64_t tile);
void plr_depth_tile_free(plr_depth_tile *d);

/* Sets up a triangle that needs no clipping (bounds: s->reach); false when no pixel's
 * sample point can lie in it. */
bool plr_setup_prim(const plr_state *s, const rs_triangle *t, plr_prim *out);

/* The setup of a VS chunk's triangles (corners 3j..3j+2 of v, j < count <= PLR_VS_CHUNK)
 * as rs_setup_projected_body computes it, made four triangles at a time with AVX2
 * (vs_reach.c): twice the signed area before orientation (0: flat, which the setup
 * fails) and, of the oriented triangle (corners 1 and 2 swapped for a negative area),
 * the edges and their bias and the pixel bounds (reach r, clamped to the image).
 * Meaningful only for triangles whose outcodes are all zero (the guard band keeps their
 * coordinates below 2^28, so the int32 lanes are exact). */
#define PLR_VS_CHUNK (SH_VS_MAX / 3)      /* triangles per call of the vertex kernel */
typedef struct plr_vs_setups {
    int64_t area[PLR_VS_CHUNK];
    int64_t c[3][PLR_VS_CHUNK];
    int32_t a[3][PLR_VS_CHUNK], b[3][PLR_VS_CHUNK], bias[3][PLR_VS_CHUNK];
    int32_t x0[PLR_VS_CHUNK], y0[PLR_VS_CHUNK], x1[PLR_VS_CHUNK], y1[PLR_VS_CHUNK];
    uint32_t no_pixel;                    /* bit j: empty pixel bounds, the setup would fail
                                             it (bits past count 0) */
} plr_vs_setups;
/* False without AVX2 (avx2 false or not built for x86-64): nothing is made. */
bool plr_vs_setups_of(const sh_vs_vertices *v, int count, int width, int height, const rs_reach *r,
                      bool avx2, plr_vs_setups *out);
/* Triangle j's rs_setup from its chunk's setups, when its area is not 0, its pixel
 * bounds are not empty and its corners' w are positive (what the setup would test): the
 * bits rs_setup_projected_body gives. Inline: the VS takes one per kept triangle. */
static inline void plr_vs_setup_take(const plr_vs_setups *s, const sh_vs_vertices *v, int j, rs_setup *su)
{
    const int64_t area = s->area[j];
    const int swap = area < 0, c = 3 * j;
    const int corner[3] = {c, c + 1 + swap, c + 2 - swap};
    for (int k = 0; k < 3; k++) {
        su->inv_w[k] = v->inv_w[corner[k]];
        su->z[k] = v->z[corner[k]];
        su->a[k] = s->a[k][j];
        su->b[k] = s->b[k][j];
        su->c[k] = s->c[k][j];
        su->bias[k] = (int8_t)s->bias[k][j];
    }
    su->order[0] = 0;
    su->order[1] = (uint8_t)(1 + swap);
    su->order[2] = (uint8_t)(2 - swap);
    su->area = swap ? -area : area;
    su->x0 = s->x0[j];
    su->y0 = s->y0[j];
    su->x1 = s->x1[j];
    su->y1 = s->y1[j];
}

/* The set-up triangles of one record of a primitive packet, to fn: the VS's, or the
 * pieces of a triangle the planes cut, clipped and set up here (geometry.c). */
typedef void (*plr_prim_fn)(void *arg, const plr_prim *p);
void plr_each_prim(plr_state *s, const prim_rec *r, plr_prim_fn fn, void *arg);

/* Stage programs. */
/* packet_checks.c: whether a packet another stage wrote is in bounds for this state;
 * false after failing the run with what was wrong (the stage before may be a plugin). */
/* Whether a set-up triangle keeps what setup promises (packet_checks.c): its id names a
 * scene triangle, its pixel bounds lie in the image, its area is positive and its
 * coordinate differences lie within 2^29 - 1. */
bool plr_prim_ok(const plr_state *s, const plr_prim *p);
bool plr_check_batch(gr_ctx *c, const plr_state *s, const ia_pkt *p, uint32_t room);
bool plr_check_prims(gr_ctx *c, const plr_state *s, const prim_pkt *p, size_t bytes);
bool plr_check_binned(gr_ctx *c, const plr_state *s, const binned_pkt *p);
bool plr_check_frags(gr_ctx *c, const plr_state *s, const frag_pkt *p);

void plr_ia_main(gr_ctx *c);
void plr_vs_main(gr_ctx *c);
void plr_reorder_main(gr_ctx *c);
void plr_rast_main(gr_ctx *c);
void plr_setup_bin_main(gr_ctx *c);
void plr_tile_rast_main(gr_ctx *c);
void plr_ps_main(gr_ctx *c);
void plr_bin_main(gr_ctx *c);
void plr_tile_shade_main(gr_ctx *c);
/* Frees a tile's buffers that Tile-Shade keeps in the frame's tile_pool. */
void plr_shade_tile_free(void *item);
void plr_zraster_main(gr_ctx *c);
void plr_ztile_main(gr_ctx *c);
void plr_om_main(gr_ctx *c);
void plr_tile_shade_msaa(gr_ctx *c);

/* Multisampling (msaa.c): the stage's sample pattern and setup bounds from s->msaa
 * (its `msaa` parameter), and for the stages that write the image the frame's sample
 * buffers: all of them (the OM), or all but the colours when the stage keeps its tile's
 * colours itself (Tile-Shade; it takes the frame's only with linear samples, whose
 * plr_sample_hdr_* index both alike); false with a message in err for a count other than
 * 1, 4, 8. */
typedef enum plr_sample_buffers {
    PLR_NO_SAMPLE_BUFFERS,
    PLR_SAMPLE_BUFFERS,
    PLR_SAMPLE_BUFFERS_OWN_COLORS
} plr_sample_buffers;
bool plr_msaa_setup(plr_state *s, const cp_stage_init *i, plr_sample_buffers buffers, char err[CP_ERR_MAX]);
/* Pixel (x, y)'s first sample in the sample buffers. */
static inline size_t plr_sample_at(const plr_state *s, int x, int y)
{
    return ((size_t)y * (size_t)s->width + (size_t)x) * (size_t)s->msaa;
}
/* A tile's samples (r: its pixels the frame renders) set to the far depth and the
 * pixel's cleared colour (the OM's start); then, once the tile is done, resolved into
 * the image (msaa a power of two): every pixel of r (pixels NULL), or the n listed
 * (offsets dy << 8 | dx from r's corner ox, oy), the others' image colour written by
 * the caller. */
void plr_samples_clear(const plr_state *s, const tile_rect *r);
void plr_samples_resolve(const plr_state *s, const tile_rect *r, const uint16_t *pixels, size_t n);
/* The OM's tile set lazily (without linear samples or the surface): a pixel's samples
 * are set when the first fragment reaches it (the OM writes all of them then) or, for
 * the blended fragments' pixels no opaque one reached, before the blending
 * (plr_samples_set); at the end only the marked pixels are resolved. The others keep
 * the background the frame cleared the image to, which is what their resolve would
 * give, and their samples are not written: the frame's sample buffers hold the pixels
 * some fragment reached, not the whole tile a clear would write and the resolve read. */
typedef struct plr_sample_marks {
    tile_rect r;
    int tile;
    uint64_t *bits;                       /* per pixel of the tile, row-major from (ox, oy) */
} plr_sample_marks;
bool plr_sample_marks_init(plr_sample_marks *m, const plr_state *s, const tile_rect *r);
void plr_sample_marks_free(plr_sample_marks *m);
/* Marks pixel (x, y); returns whether it was not marked before. */
static inline bool plr_sample_mark(plr_sample_marks *m, int x, int y)
{
    const size_t i = (size_t)(y - m->r.oy) * (size_t)m->tile + (size_t)(x - m->r.ox);
    const uint64_t bit = 1ull << (i % 64), was = m->bits[i / 64];
    m->bits[i / 64] = was | bit;
    return !(was & bit);
}
/* Pixel (x, y)'s samples set as plr_samples_clear sets them. */
void plr_samples_set(const plr_state *s, int x, int y);
void plr_samples_resolve_marked(const plr_state *s, const plr_sample_marks *m);
/* The same from a tile's own sample colours (tile_samples: s->tile x s->tile pixels of
 * s->msaa samples, row-major from r's corner ox, oy) instead of the frame's. */
void plr_samples_resolve_own(const plr_state *s, const tile_rect *r, const uint16_t *pixels, size_t n,
                             const uint32_t *tile_samples);

/* The OM's end: its blended fragments (in primitive-id order) over the final opaque
 * depth (less, no depth write) and colour, then the list freed (alpha.c). */
void plr_om_blend(const plr_state *s, plr_blend_list *l);

#endif
