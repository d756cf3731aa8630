/* pixels.c — the Pixel Shader (depth and weights, early-Z, the shading kernel)
 * and the Output Merger per tile, which also keeps the coarse depth bounds (see
 * internal.h). */
#include "pipelines/raster/internal.h"
#include "rasterizer/prefetch.h"

#include <float.h>
#include <math.h>
#include <string.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* ---- PS and OM ------------------------------------------------------------------------------ */

static inline float load_depth(const plr_state *s, size_t at)
{
    uint32_t bits = atomic_load_explicit(&s->depth[at], memory_order_relaxed);
    float z;
    memcpy(&z, &bits, sizeof z);
    return z;
}

/* Early-Z over a packet whose depths z[] are computed: a fragment behind the depth the
 * OM holds (or at it, when fragments come in draw order) gets z = +inf, which the OM
 * skips. In draw order the OM's depth comes only from primitives before this fragment's,
 * which it would fail against anyway; in any order a tie may still win on its primitive
 * id. Skipping cannot change the image, only the work. Writes the depths over the edge
 * values (no longer needed) and returns how many fragments live, their indices in live[]. */
static int early_z(const plr_state *s, frag_pkt *p, float *z, uint8_t *live)
{
    size_t width = (size_t)s->width;
    int n = 0;
    for (uint32_t i = 0; i < p->count; i++) {
        float held = load_depth(s, p->y[i] * width + p->x[i]);
        if (z[i] > held || (z[i] == held && !s->any_order)) z[i] = INFINITY;
        else live[n++] = (uint8_t)i;
    }
    memcpy(p->out.z, z, p->count * sizeof *z);
    return n;
}

/* With multisampling the OM tests each sample's own depth, which the PS does not know:
 * every fragment lives (the coarse test in Rast still skips hidden triangles). */
static int all_live(frag_pkt *p, const float *z, uint8_t *live)
{
    for (uint32_t i = 0; i < p->count; i++) live[i] = (uint8_t)i;
    memcpy(p->out.z, z, p->count * sizeof *z);
    return (int)p->count;
}

/* Depth and weights of every covered pixel (rs_weights; a loop over the packet that
 * vectorizes), early-Z, then one kernel call shades the survivors. */
void plr_ps_main(gr_ctx *c)
{
    plr_state *s = gr_user(c);
    frag_pkt *p = gr_input(c, NULL);
    if (!plr_check_frags(c, s, p)) {
        p->count = 0;                     /* the run has failed; the OM reads nothing */
        return;
    }
    float z[FRAGS_PER_PACKET], w1[FRAGS_PER_PACKET], w2[FRAGS_PER_PACKET];
    float lb1[FRAGS_PER_PACKET], lb2[FRAGS_PER_PACKET];
    uint8_t ltri[FRAGS_PER_PACKET], live[FRAGS_PER_PACKET];
    uint16_t lx[FRAGS_PER_PACKET], ly[FRAGS_PER_PACKET];
    uint32_t rgba[FRAGS_PER_PACKET];
    for (uint32_t i = 0; i < p->count; i++)
        rs_weights(&p->interp[p->tri[i]], p->in.e0[i], p->in.e1[i], &z[i], &w1[i], &w2[i]);
    int n = s->msaa > 1 ? all_live(p, z, live) : early_z(s, p, z, live);
    uint8_t a8[FRAGS_PER_PACKET];         /* alpha test and blending (alpha.h) */
    if (s->alpha.mask || s->alpha.blend) n = plr_alpha_ps(s->env, p, w1, w2, live, n, a8);
    for (int k = 0; k < n; k++) {
        lb1[k] = w1[live[k]];
        lb2[k] = w2[live[k]];
        ltri[k] = p->tri[live[k]];
        lx[k] = p->x[live[k]];
        ly[k] = p->y[live[k]];
    }
    float linear[3 * FRAGS_PER_PACKET];
    if (n) sh_ps_packet(s->env, &(sh_ps_frags){n, p->tris, ltri, lb1, lb2, lx, ly,
                                               s->linear_out ? linear : NULL}, rgba);
    for (int k = 0; k < n; k++) p->out.rgba[live[k]] = rgba[k];
    if (s->linear_out)
        for (int k = 0; k < n; k++) p->out.linear[live[k]] = plr_linear_pack(&linear[3 * k], rgba[k]);
    if (s->alpha.blend)
        for (int k = 0; k < n; k++) p->out.rgba[live[k]] = (rgba[k] & 0xffffffu) | (uint32_t)a8[k] << 24;
    atomic_fetch_add_explicit(s->fragments, (uint64_t)n, memory_order_relaxed);
}

/* The blocks of one tile whose depths changed since their bounds were last recomputed.
 * Bounds are recomputed every HIZ_UPDATE_PACKETS packets rather than every packet:
 * consecutive packets mostly touch the same blocks (a big triangle's rows), and a late
 * bound is only a looser one. */
#define HIZ_UPDATE_PACKETS 8
#define HIZ_MAX_BLOCKS ((PLR_MAX_TILE / PLR_HIZ_BLOCK + 1) * (PLR_MAX_TILE / PLR_HIZ_BLOCK + 1))

typedef struct touched_blocks {
    int bx0, by0, nbx;                    /* the tile's first block and blocks per row */
    int packets, last;
    uint64_t bits[(HIZ_MAX_BLOCKS + 63) / 64];
} touched_blocks;

static void touched_init(touched_blocks *t, const plr_state *s, uint64_t tile)
{
    int tx = (int)(tile % (uint64_t)s->tiles_x), ty = (int)(tile / (uint64_t)s->tiles_x);
    int x0 = tx * s->tile, y0 = ty * s->tile;
    memset(t, 0, sizeof *t);
    t->last = -1;
    t->bx0 = x0 / PLR_HIZ_BLOCK;
    t->by0 = y0 / PLR_HIZ_BLOCK;
    t->nbx = (x0 + s->tile - 1) / PLR_HIZ_BLOCK - t->bx0 + 1;
}

static inline void touch_block(touched_blocks *t, uint16_t x, uint16_t y)
{
    int i = (y / PLR_HIZ_BLOCK - t->by0) * t->nbx + (x / PLR_HIZ_BLOCK - t->bx0);
    if (i == t->last) return;
    t->last = i;
    t->bits[i / 64] |= 1ull << (i % 64);
}

static void update_touched(plr_state *s, touched_blocks *t)
{
    for (size_t w = 0; w < sizeof t->bits / sizeof t->bits[0]; w++)
        for (uint64_t m = t->bits[w]; m; m &= m - 1) {
            int i = (int)(w * 64) + __builtin_ctzll(m);
            int bx = t->bx0 + i % t->nbx, by = t->by0 + i / t->nbx;
            plr_hiz_update(s->hiz, s->depth, bx * PLR_HIZ_BLOCK, by * PLR_HIZ_BLOCK);
        }
    memset(t->bits, 0, sizeof t->bits);
    t->last = -1;
    t->packets = 0;
}

/* In any order (the depth-only pass, or the raster graph without Reorder) the fragment
 * that wins a pixel two primitives share at the same depth is the one with the smaller
 * id: primitive ids follow draw order, so this is exactly what the in-order depth test
 * (less, first wins) keeps, and the ray tracer's rule for equal distances. The result
 * does not depend on arrival order. */
static bool depth_tie_wins(const plr_state *s, const frag_pkt *p, uint32_t i, size_t at)
{
    uint32_t prim = p->tris[p->tri[i]].prim;
    return s->vis[at] == 0 || prim + 1 < s->vis[at];
}

/* One instance per tile: depth test (less) and write of the colour, in primitive order,
 * or in any order with ties to the smaller primitive id; the depth-only pass writes the
 * visible primitive id + 1 instead of a colour. Then the coarse bounds of the blocks it
 * changed. */
/* What the OM reads of a fragment packet is in bounds: its count and triangle count
 * within the packet's arrays, every fragment's triangle index below ntris and its pixel
 * inside this OM's tile. A stage between the PS and the OM (a plugin's) that breaks it
 * fails the run, named, instead of the OM writing outside its tile or the image. */
static bool frags_in_bounds(gr_ctx *c, const frag_pkt *p, const plr_state *s, uint64_t tile)
{
    int tx = (int)(tile % (uint64_t)s->tiles_x), ty = (int)(tile / (uint64_t)s->tiles_x);
    uint32_t x0 = (uint32_t)(tx * s->tile), y0 = (uint32_t)(ty * s->tile);
    uint32_t x1 = x0 + (uint32_t)s->tile, y1 = y0 + (uint32_t)s->tile;
    if (x1 > (uint32_t)s->width) x1 = (uint32_t)s->width;
    if (y1 > (uint32_t)s->height) y1 = (uint32_t)s->height;
    char why[200] = "";
    if (p->count > FRAGS_PER_PACKET || p->ntris > TRIS_PER_PACKET)
        snprintf(why, sizeof why, "a fragment packet holds %u fragments of %u triangles (at most "
                 "%d of %d)", p->count, p->ntris, FRAGS_PER_PACKET, TRIS_PER_PACKET);
    for (uint32_t i = 0; !why[0] && i < p->count; i++)
        if (p->x[i] < x0 || p->x[i] >= x1 || p->y[i] < y0 || p->y[i] >= y1 || p->tri[i] >= p->ntris)
            snprintf(why, sizeof why, "fragment %u at (%u, %u) of triangle %u: outside this OM's "
                     "tile (%u..%u, %u..%u) or the packet's %u triangles", i, p->x[i], p->y[i],
                     p->tri[i], x0, x1 - 1, y0, y1 - 1, p->ntris);
    if (why[0]) gr_assert_at(c, false, why, __FILE__, __LINE__);
    return !why[0];
}

/* The linear colour of fragment i, which won its pixel: the PS's, unless a stage
 * between them changed its colour (linear21.h): then the image's byte decoded. */
static void om_hdr(const plr_state *s, const frag_pkt *p, uint32_t i)
{
    float rgb[3];
    if (plr_linear_unpack(p->out.linear[i], p->out.rgba[i], rgb)) plr_hdr_put(s, p->x[i], p->y[i], rgb);
    else plr_hdr_decode(s, p->x[i], p->y[i]);
}

/* The surface of fragment i, which won its pixel (or its sample 0): its triangle at the
 * weights of the pixel centre, as the PS computed them (rs_weights of the same exact
 * edge values: the PS wrote its depth and colour over them). */
static void om_surface(const plr_state *s, const frag_pkt *p, uint32_t i)
{
    const int t = p->tri[i];
    const rs_edge01 *e = &p->edges[t];
    const int64_t one = 1 << RS_SUBPIXEL_BITS, half = one / 2;
    const int64_t X = (int64_t)p->x[i] * one + half, Y = (int64_t)p->y[i] * one + half;
    float z, b1, b2;
    rs_weights(&p->interp[t], e->a[0] * X + e->b[0] * Y + e->c[0], e->a[1] * X + e->b[1] * Y + e->c[1],
               &z, &b1, &b2);
    plr_surface_put(s, p->x[i], p->y[i], &p->tris[t], b1, b2);
}

/* The same for sample `at` of the fragment's pixel. */
static void om_sample_hdr(const plr_state *s, const frag_pkt *p, uint32_t i, size_t at)
{
    float rgb[3];
    if (plr_linear_unpack(p->out.linear[i], p->out.rgba[i], rgb)) plr_sample_hdr_put(s, at, rgb);
    else plr_sample_hdr_decode(s, at);
}

/* Multisampling: a packet triangle's depth plane and the plane's step from a pixel
 * centre to each sample (rs_sample_depth's terms), made once a packet, not once a
 * fragment and sample. */
typedef struct om_tri_depth {
    rs_depth_plane plane;
    double step[RS_MAX_SAMPLES];
} om_tri_depth;

static void packet_depths(const plr_state *s, const frag_pkt *p, om_tri_depth *d)
{
    for (uint32_t t = 0; t < p->ntris; t++) {
        rs_depth_plane_of(&p->interp[t], &d[t].plane);
        for (int k = 0; k < s->msaa; k++) d[t].step[k] = rs_sample_step(&p->edges[t], &d[t].plane, s->pattern, k);
    }
}

/* Fragment i's sample depths z[0 .. msaa): rs_sample_depth's, from its triangle's
 * plane and steps (d[t]) and its pixel centre's depth. */
static void fragment_sample_depths(const plr_state *s, const frag_pkt *p, const om_tri_depth *d, uint32_t i,
                                   float *z)
{
    const int t = p->tri[i];
    const double centre = rs_pixel_centre_depth(&p->edges[t], &d[t].plane, p->x[i], p->y[i]);
    for (int k = 0; k < s->msaa; k++) z[k] = (float)(centre + d[t].step[k]);
}

/* The samples of fragment i in `cover` nearer than what they hold take its colour and
 * depth (z[k]: rs_sample_depth's); returns whether any did. One sample at a time, with
 * the linear colour and the surface where the frame keeps them. */
static bool om_take_samples(plr_state *s, const frag_pkt *p, uint32_t i, size_t at, unsigned cover, const float *z)
{
    bool changed = false;
    for (unsigned m = cover; m; m &= m - 1) {
        const int k = __builtin_ctz(m);
        if (!(z[k] < s->sample_z[at + (size_t)k])) continue;
        s->sample_z[at + (size_t)k] = z[k];
        s->sample_rgba[at + (size_t)k] = p->out.rgba[i];
        if (s->sample_hdr) om_sample_hdr(s, p, i, at + (size_t)k);
        if (s->surface && k == 0) om_surface(s, p, i);
        changed = true;
    }
    return changed;
}

#if defined(__x86_64__)
__attribute__((target("avx2")))
static inline float max4(__m128 v)
{
    v = _mm_max_ps(v, _mm_movehl_ps(v, v));
    return _mm_cvtss_f32(_mm_max_ss(v, _mm_shuffle_ps(v, v, 1)));
}

/* om_take_samples without the linear colour or the surface, four samples a vector, from
 * the pixel centre's depth: the sample depths as fragment_sample_depths rounds them
 * (one double add and one rounding per lane), the same compares (less) and the same
 * stores (at: the pixel's first sample, px: the pixel). Returns whether any sample was
 * taken, and in *far the pixel's farthest sample depth after (the held vectors' maximum,
 * without reading them back). */
__attribute__((target("avx2")))
static bool om_take_samples_avx2(plr_state *s, uint32_t rgba, size_t at, size_t px, unsigned cover,
                                 double centre, const double *step, bool fresh, float *far)
{
    const __m128i bit = _mm_setr_epi32(1, 2, 4, 8), colour = _mm_set1_epi32((int)rgba);
    const __m256d c = _mm256_set1_pd(centre);
    const __m128i background = _mm_set1_epi32(fresh ? (int)s->color[px] : 0);
    __m128 farthest = _mm_set1_ps(-INFINITY);
    int taken = 0;
    for (int h = 0; h < s->msaa; h += 4) {
        float *held = &s->sample_z[at + (size_t)h];
        uint32_t *out = &s->sample_rgba[at + (size_t)h];
        /* a fresh pixel's samples as plr_samples_set would have set them, not read */
        const __m128 hv = fresh ? _mm_set1_ps(FLT_MAX) : _mm_loadu_ps(held);
        const __m128i was = fresh ? background : _mm_loadu_si128((const __m128i *)out);
        const __m128 zk = _mm256_cvtpd_ps(_mm256_add_pd(c, _mm256_loadu_pd(&step[h])));
        const __m128i covered = _mm_cmpeq_epi32(_mm_and_si128(_mm_set1_epi32((int)(cover >> h)), bit), bit);
        const __m128 win = _mm_and_ps(_mm_cmplt_ps(zk, hv), _mm_castsi128_ps(covered));
        const __m128 now = _mm_blendv_ps(hv, zk, win);
        _mm_storeu_ps(held, now);
        _mm_storeu_si128((__m128i *)out, _mm_blendv_epi8(was, colour, _mm_castps_si128(win)));
        farthest = _mm_max_ps(farthest, now);
        taken |= _mm_movemask_ps(win);
    }
    *far = max4(farthest);
    return taken != 0;
}
#endif

/* The farthest of the depths the samples from `at` hold. */
static float held_far(const plr_state *s, size_t at)
{
    float far = s->sample_z[at];
    for (size_t k = 1; k < (size_t)s->msaa; k++) far = s->sample_z[at + k] > far ? s->sample_z[at + k] : far;
    return far;
}

/* Multisampling: fragment i's covered samples nearer than what they hold (less, in
 * draw order) take its colour and depth; with the coarse test the pixel's depth becomes
 * its farthest sample's, a bound the coarse test may use as the single-sample depth. */
static void om_samples(plr_state *s, const frag_pkt *p, const om_tri_depth *d, uint32_t i,
                       touched_blocks *touched, plr_sample_marks *marks)
{
    const int x = p->x[i], y = p->y[i];
    const size_t at = plr_sample_at(s, x, y), px = (size_t)y * (size_t)s->width + (size_t)x;
    const unsigned cover = p->cover[i] & ((1u << s->msaa) - 1);
    bool changed;
    float far;
#if defined(__x86_64__)
    if (marks) {                          /* om_lazy_samples */
        const int t = p->tri[i];
        changed = om_take_samples_avx2(s, p->out.rgba[i], at, px, cover,
                                       rs_pixel_centre_depth(&p->edges[t], &d[t].plane, x, y), d[t].step,
                                       plr_sample_mark(marks, x, y), &far);
    } else
#endif
    {
        float z[RS_MAX_SAMPLES];
        fragment_sample_depths(s, p, d, i, z);
        changed = om_take_samples(s, p, i, at, cover, z);
        far = changed && s->coarse_z ? held_far(s, at) : 0;
    }
    if (!changed || !s->coarse_z) return;
    const float old = load_depth(s, px);
    uint32_t bits;
    memcpy(&bits, &far, sizeof bits);
    atomic_store_explicit(&s->depth[px], bits, memory_order_relaxed);
    if (old == FLT_MAX && far < FLT_MAX) plr_hiz_first_write(s->hiz, x, y);
    touch_block(touched, (uint16_t)x, (uint16_t)y);
}

/* A blended fragment waits for the opaque ones, with its covered samples' depths when
 * multisampling. */
static bool om_hold_blended(const plr_state *s, const frag_pkt *p, const om_tri_depth *d, uint32_t i,
                            plr_blend_list *l)
{
    const int t = p->tri[i];
    plr_blend_frag f = {p->x[i], p->y[i], p->out.z[i], p->out.rgba[i], p->tris[t].prim,
                        (uint32_t)l->n, 0, {0}};
    if (s->msaa > 1) {
        f.cover = (uint8_t)(p->cover[i] & ((1u << s->msaa) - 1));
        fragment_sample_depths(s, p, d, i, f.zs);
    }
    return plr_blend_push(l, &f);
}

/* Multisampling: asks for the sample depths and colours of fragment i, OM_AHEAD
 * fragments before they are tested. The frame's sample buffers (32 MiB at 1024x1024
 * and 4x) are written by every tile's OM in draw order, so a fragment's lines are
 * mostly out of the caches when it reaches them. A hint: it loads nothing. */
#define OM_AHEAD 8
static inline void prefetch_samples(const plr_state *s, const frag_pkt *p, uint32_t i)
{
    const size_t at = plr_sample_at(s, p->x[i], p->y[i]);
    rs_prefetch_line(&s->sample_z[at]);
    rs_prefetch_line(&s->sample_rgba[at]);
}

/* Whether the OM sets its tile's samples lazily (plr_sample_marks): where the vector
 * path writes all of a pixel's samples at its first fragment. */
static bool om_lazy_samples(const plr_state *s)
{
#if defined(__x86_64__)
    return s->msaa > 1 && s->env->isa == RT_ISA_AVX2 && !s->sample_hdr && !s->surface;
#else
    (void)s;
    return false;
#endif
}

/* The blended fragments' pixels no opaque fragment reached, set for the blending. */
static void om_samples_for_blending(const plr_state *s, plr_sample_marks *marks, const plr_blend_list *l)
{
    for (size_t k = 0; marks && k < l->n; k++)
        if (plr_sample_mark(marks, l->f[k].x, l->f[k].y)) plr_samples_set(s, l->f[k].x, l->f[k].y);
}

void plr_om_main(gr_ctx *c)
{
    plr_state *s = gr_user(c);
    const bool coarse_z = s->coarse_z;
    touched_blocks touched;
    touched_init(&touched, s, gr_key(c));
    gr_window w;
    size_t width = (size_t)s->width;
    plr_blend_list blended = {0};         /* blended fragments wait for the opaque ones */
    const bool blend = s->alpha.blend && s->color;
    tile_rect r;
    const bool samples = s->msaa > 1 && plr_tile_rect(&s->rc, gr_key(c), &r);
    plr_sample_marks store = {0}, *marks = samples && om_lazy_samples(s) ? &store : NULL;
    if (marks) gr_assert(c, plr_sample_marks_init(marks, s, &r));   /* out of memory */
    else if (samples) plr_samples_clear(s, &r);
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        const frag_pkt *p = w.mem;
        if (!frags_in_bounds(c, p, s, gr_key(c))) {
            plr_sample_marks_free(&store);
            return;
        }
        om_tri_depth depths[TRIS_PER_PACKET];
        if (s->msaa > 1) packet_depths(s, p, depths);
        for (uint32_t i = 0; i < p->count; i++) {
            size_t at = p->y[i] * width + p->x[i];
            float z = p->out.z[i];
            if (blend && plr_alpha_mode(s->env, p->tris[p->tri[i]].material) == SC_ALPHA_BLEND) {
                if (z != INFINITY) gr_assert(c, om_hold_blended(s, p, depths, i, &blended));
                continue;
            }
            if (s->msaa > 1) {
                if (i + OM_AHEAD < p->count) prefetch_samples(s, p, i + OM_AHEAD);
                if (z != INFINITY) om_samples(s, p, depths, i, &touched, marks);
                continue;
            }
            float old = load_depth(s, at);
            if (z < old || (s->any_order && z == old && depth_tie_wins(s, p, i, at))) {
                uint32_t bits;
                memcpy(&bits, &z, sizeof bits);
                atomic_store_explicit(&s->depth[at], bits, memory_order_relaxed);
                if (s->vis) s->vis[at] = p->tris[p->tri[i]].prim + 1;
                if (s->color) s->color[at] = p->out.rgba[i];
                if (s->hdr) om_hdr(s, p, i);
                if (s->surface) om_surface(s, p, i);
                if (coarse_z) {
                    if (old == FLT_MAX) plr_hiz_first_write(s->hiz, p->x[i], p->y[i]);
                    touch_block(&touched, p->x[i], p->y[i]);
                }
            }
        }
        if (coarse_z && ++touched.packets == HIZ_UPDATE_PACKETS) update_touched(s, &touched);
        gr_commit(c, 0, 1);
    }
    if (samples) om_samples_for_blending(s, marks, &blended);
    plr_om_blend(s, &blended);
    if (samples && marks) plr_samples_resolve_marked(s, marks);
    else if (samples) plr_samples_resolve(s, &r, NULL, 0);
    plr_sample_marks_free(&store);
}

