/* internal.h — what the hybrid graphs' stages share (internal to the files of pipelines/hybrid):
 * the registered stage types, and what a pixel shader of the Extended Direct3D graph
 * sends on for a shaded hit (hit_out.c).
 *
 * Files: hybrid_stages.c (the registry and hybrid.visible of hybrid-visibility.graph),
 * primary_hits.c (camera rays' hits from the depth pass), ps.c (hybrid.ps), trace.c
 * (hybrid.trace), shadow.c (hybrid.shadow), ps2.c (hybrid.ps2), hit_out.c (their shared output), contribs.c
 * (contributions keyed to their om instance), om.c (hybrid.om). */
#ifndef PIPELINES_HYBRID_INTERNAL_H
#define PIPELINES_HYBRID_INTERNAL_H

#include "pipelines/hybrid/packets.h"
#include "pipelines/hybrid/tally.h"
#include "pipelines/raytrace/sums.h"
#include "pipelines/stages.h"

extern const cp_stage_type plh_visible_type, plh_ps_type, plh_ps2_type, plh_om_type;
extern const cp_kernel_stage_type plh_trace_type, plh_shadow_type;     /* with OpenCL kernels */

/* The Output Merger's keys: the contributions queue set has one subqueue (one om
 * instance) per framebuffer tile, `tile` pixels square, numbered row by row from the
 * image's top left ($tiles in a graph file); a contribution's key is the tile of its
 * slot's pixel (slot >> shift, shift = log2(msaa)). */
typedef struct plh_tile_keys {
    uint32_t width, tile, tiles_x, shift;
    int tile_shift;                       /* log2(tile) when a power of two, else -1 */
} plh_tile_keys;

/* For stage i (its `tile` and `msaa` parameters), whose `port` is bound to the
 * contributions set: false with a message in err unless the set has one subqueue per
 * tile. */
bool plh_tile_keys_of(const cp_stage_init *i, const char *port, plh_tile_keys *k, char err[CP_ERR_MAX]);

static inline uint64_t plh_tile_key(uint32_t slot, const plh_tile_keys *k)
{
    const uint32_t pixel = slot >> k->shift, y = pixel / k->width, x = pixel - y * k->width;
    if (k->tile_shift >= 0) return (uint64_t)(y >> k->tile_shift) * k->tiles_x + (x >> k->tile_shift);
    return (uint64_t)(y / k->tile) * k->tiles_x + x / k->tile;
}

/* The `tile` parameter of the stages that key contributions (ps, trace, ps2, om). */
#define PLH_TILE_PARAM {"tile", CP_INT, "64", 1, PL_MAX_IMAGE_SIDE, "framebuffer tile edge in pixels: "     "the contributions set has one subqueue (om instance) per tile ($tiles)"}

/* The pixels [lo, hi) of one row of one tile, which share a key: a run of neighbouring
 * contributions needs one division for all. Empty (lo == hi) at first. */
typedef struct plh_tile_span {
    uint32_t lo, hi;
    uint64_t key;
} plh_tile_span;

/* The key of slot's pixel, from span when it holds the pixel, else from a new span. */
static inline uint64_t plh_span_key(plh_tile_span *sp, uint32_t slot, const plh_tile_keys *k)
{
    const uint32_t pixel = slot >> k->shift;
    if (pixel - sp->lo < sp->hi - sp->lo) return sp->key;
    const uint32_t y = pixel / k->width, row = y * k->width, x = pixel - row;
    const uint32_t x0 = x - x % k->tile, x1 = x0 + k->tile < k->width ? x0 + k->tile : k->width;
    *sp = (plh_tile_span){row + x0, row + x1, plh_tile_key(slot, k)};
    return sp->key;
}

/* A task's contributions (packets.h), gathered to be pushed in runs of one key (one om
 * instance: plh_tile_key of the slot) at a time. */
typedef struct plh_contribs {
    uint32_t n;
    plh_tile_keys keys;
    plh_contrib k[RT_PACKET_MAX];
} plh_contribs;

static inline void plh_contribs_start(plh_contribs *b, const plh_tile_keys *keys)
{
    b->n = 0;
    b->keys = *keys;
}

static inline void plh_add_contrib(plh_contribs *b, uint32_t index, plh_layer layer, const float rgb[3])
{
    b->k[b->n++] = (plh_contrib){index, layer.layer, {rgb[0], rgb[1], rgb[2]}, layer.alpha8};
}

/* Pushes them to output `output`, each run of equal keys at once, and empties b. */
void plh_push_contribs(gr_ctx *c, int output, plh_contribs *b);

/* Output slots of hybrid.ps and hybrid.ps2, as in their port tables. */
enum { PLH_OUT_RAYS, PLH_OUT_SHADOWS, PLH_OUT_CONTRIB };

/* A pixel shader's settings (its parameters) and counters; `kind_counters` are its
 * rays pushed per kind (PS's or PS2's). */
typedef struct plh_shader {
    const sh_ray_env *env;
    const sh_raster_env *raster;          /* the pixel quads' derivatives */
    sh_aov aov;
    int bounces;
    float min_weight;
    bool shadows;                         /* false: lights add their term unoccluded */
    int msaa;                             /* the depth pass's samples per pixel */
    bool quads;                           /* a material samples a texture: its hits need
                                             their pixel quads' derivatives */
    bool draw_order;                      /* PS: camera rays begin draw-order layers
                                             (packets.h): one sample per pixel, colour or
                                             albedo */
    plh_tile_keys keys;                   /* of the contributions set (om's instances);
                                             shift log2(msaa): rays and contributions
                                             carry a fragment's slot (fragments.h) */
    int64_t *sums;                        /* PS with `sums`: the frame's sums (a slot's
                                             three), which it adds its base-layer terms to
                                             itself; NULL: every contribution goes to om.
                                             The cutter cleared them and PS shades each
                                             slot once, before any of its rays: its first
                                             term for a slot is the slot's first
                                             (plh_sum_first) */
    plh_tally rays[PLH_KINDS], contributions;   /* per kind pushed; contributions sent */
} plh_shader;

/* Its `msaa` and `tile`, which every stage of the graph that states them shares (the
 * depth pass's samples and the Output Merger's tiles: pl_stage_agree); for the stages
 * with both (hybrid.ps, ps2, shadow, om). false with a message in err. */
static inline bool plh_agree_layout(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    return pl_stage_agree(i, "msaa", (int)cp_int(i, "msaa"), err) &&
           pl_stage_agree(i, "tile", (int)cp_int(i, "tile"), err);
}

/* The pixel shaders' (hybrid.ps's and hybrid.ps2's) parameters. */
#define PLH_SHADER_PARAMS \
    {"bounces", CP_INT, "1", 0, PL_MAX_BOUNCES, "reflection depth"}, \
    {"min_weight", CP_FLOAT, "0.01", 0, 1, "push no mirror ray or ray on through a blended surface " \
     "whose weight falls below"}, \
    {"shadows", CP_BOOL, "true", 0, 0, "cast shadow rays (false: every light the surface faces adds " \
     "its term, as in the raster graphs)"}, \
    {"msaa", CP_INT, "1", 1, PL_MAX_MSAA, "the depth pass's samples per pixel (1, 4 or 8): rays and " \
     "contributions carry their fragment's slot, pixel * msaa + its first sample"}, \
    PLH_TILE_PARAM

/* Its parameters (bounces, min_weight, shadows, msaa, tile) and counters, `who` naming them
 * ("ps": hybrid.ps_rays_shadow, ...). false with a message in err. */
bool plh_shader_init(plh_shader *s, const cp_stage_init *i, const char *who, char err[CP_ERR_MAX]);
/* Its counters into the frame's after a run (the stage's finish hook); their memory freed. */
void plh_shader_fold(plh_shader *s);
void plh_shader_free(plh_shader *s);

/* One task's output: contributions for om, shadow rays for hybrid.shadow and the other
 * rays for Trace, each pushed a packet's worth at a time (plh_out_flush at the end).
 * Shadow rays, most of what a task makes, are pushed PLH_SHADOW_STAGED at a time (the
 * runtime packs consecutive pushes into one packet), so that a task that makes more
 * reuses the lines of its staging while they are in the L1 cache. */
#define PLH_SHADOW_STAGED 32
_Static_assert(SH_MAX_LIGHTS <= PLH_SHADOW_STAGED, "a surface's shadow rays fit in one staged run");
typedef struct plh_out {
    plh_contribs contribs;
    uint32_t nshadows, nhits;
    plh_shadow shadows[PLH_SHADOW_STAGED];
    plh_ray hits[RT_PACKET_MAX];
    uint64_t pushed[PLH_KINDS];
} plh_out;

void plh_out_start(plh_out *o, const plh_shader *s);
void plh_out_flush(gr_ctx *c, const plh_shader *s, plh_out *o);
/* rgb in fixed point, each channel as plrt_to_fixed converts it (NaN to 0, clamped to
 * +-PLRT_CONTRIB_MAX, the same double product rounded the same way), without its
 * branches: the three channels in two double vectors. */
static inline void plh_fixed3(const float rgb[3], int64_t out[3])
{
    const __m128d lo = _mm_set1_pd(-PLRT_CONTRIB_MAX), hi = _mm_set1_pd(PLRT_CONTRIB_MAX),
                  one = _mm_set1_pd(PL_FIXED_ONE);
    __m128d v[2] = {_mm_set_pd((double)rgb[1], (double)rgb[0]), _mm_set_sd((double)rgb[2])};
    for (int k = 0; k < 2; k++) {
        const __m128d x = _mm_and_pd(v[k], _mm_cmpord_pd(v[k], v[k]));   /* NaN -> 0 */
        v[k] = _mm_mul_pd(_mm_min_pd(_mm_max_pd(x, lo), hi), one);
    }
    out[0] = _mm_cvtsd_si64(v[0]);
    out[1] = _mm_cvtsd_si64(_mm_unpackhi_pd(v[0], v[0]));
    out[2] = _mm_cvtsd_si64(v[1]);
}

/* Adds rgb to the three sums of slot `index`, in fixed point, as om adds a base-layer
 * contribution (plh_fixed3). */
static inline void plh_sum(int64_t *sums, uint32_t index, const float rgb[3])
{
    int64_t v[3], *sum = sums + (size_t)index * 3;
    plh_fixed3(rgb, v);
    sum[0] += v[0];
    sum[1] += v[1];
    sum[2] += v[2];
}

/* The first term PS adds to slot `index`'s sums, which the cutter cleared and nothing
 * else has added to yet (plh_shader.sums): stored, the same integers as plh_sum's
 * 0 + v. A store waits for no line: Z-Tile clears every tile's sums before the pixel
 * stages reach them, so at one worker the line has left the L2 cache by then, and an
 * add would stall on its load. */
static inline void plh_sum_first(int64_t *sums, uint32_t index, const float rgb[3])
{
    plh_fixed3(rgb, sums + (size_t)index * 3);
}

/* A contribution for om (plh_out_contrib's when it is not summed at once). */
void plh_out_contrib_queued(gr_ctx *c, const plh_shader *s, plh_out *o, uint32_t index,
                            plh_layer layer, const float rgb[3]);

/* Adds a contribution to layer `layer` of slot `index`: to the sums at once where the
 * shader has them (plh_shader.sums) and the layer is the base, else for om. */
static inline void plh_out_contrib(gr_ctx *c, const plh_shader *s, plh_out *o, uint32_t index,
                                   plh_layer layer, const float rgb[3])
{
    if (s->sums && !layer.layer) plh_sum(s->sums, index, rgb);
    else plh_out_contrib_queued(c, s, o, index, layer, rgb);
}

/* plh_out_contrib for the first contribution of a hit to its slot (its direct term, or
 * its AOV value): with sums, PS's first term for the slot (plh_sum_first). */
static inline void plh_out_first_contrib(gr_ctx *c, const plh_shader *s, plh_out *o, uint32_t index,
                                         plh_layer layer, const float rgb[3])
{
    if (s->sums && !layer.layer) plh_sum_first(s->sums, index, rgb);
    else plh_out_contrib_queued(c, s, o, index, layer, rgb);
}

/* The layer h's hit contributes to, for a ray that carries `in`: a ray that begins a
 * layer gives a blended surface its own, with `begins` set (the surface is its layer's
 * own: shade it with sh_ray_shade_layer and set the alpha byte), and anything else, a
 * miss too, the base; any other ray keeps its layer. */
static inline plh_layer plh_layer_of(const plh_shader *s, const plrt_ray *h, plh_layer in)
{
    if (!in.begins) return in;
    if (h->hit.prim != RT_NO_HIT && sh_ray_hit_material(s->env, &h->hit)->alpha_mode == SC_ALPHA_BLEND)
        return (plh_layer){h->hit.prim + 1, 255, 1};
    return PLH_BASE_LAYER;
}

/* Hit h, of a ray carrying `in`, shaded into its layer (plh_layer_of), its textures at
 * the footprint of its pixel's 2x2 quad as the raster pixel shader filters them
 * (`rasterized`: a surface the raster graphs would rasterize at that pixel) or at its
 * ray cone's; what it sends on: its direct term, a shadow ray per light it faces (or,
 * without shadows, the light's term), its mirror ray while depth < bounces and its
 * weight is at least min_weight, and the ray on through a blended surface, which begins
 * the next layer when the hit is its layer's own; with msaa > 1 and `behind` (else
 * NULL), what each sample it covers sees behind it instead (PLH_BEHIND rays). */
typedef struct plh_primary plh_primary;
typedef struct plh_behind {
    const plh_primary *primary;           /* the camera, the BVH (and with `fragment`, the
                                             depth pass's visibility per sample) */
    bool fragment;                        /* h is a PS fragment (its covered samples'),
                                             else one sample's (its slot's: PS2's) */
} plh_behind;
void plh_out_hit(gr_ctx *c, const plh_shader *s, plh_out *o, const plrt_ray *h, plh_layer in,
                 bool rasterized, const plh_behind *behind);

/* What h, of a ray carrying `in`, gives for an AOV other than the colour (albedo: the base
 * colour at the ray cone's level of detail, through blended surfaces as the colour is;
 * `behind` as plh_out_hit's). */
void plh_out_aov(gr_ctx *c, const plh_shader *s, plh_out *o, const plrt_ray *h, plh_layer in,
                 const plh_behind *behind);

#endif
