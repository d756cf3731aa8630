/* raytrace.c — builds and runs the ray-tracing graph described in raytrace.h.
 *
 * Packets are Collections with a 16-byte header (element count first) so elements stay
 * 16-byte aligned. Rays carry their pixel, depth and weight; a contribution is
 * (pixel, rgb in Blend's fixed point) and is summed by Blend. */
#include "pipelines/raytrace.h"

#include "raytracer/bvh_traverse.h"
#include "raytracer/packet.h"
#include "shaders/ray_shading.h"

#include <emmintrin.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define HDR 16
#define BLOCK 8                           /* Sampler's packets cover 8x8-pixel blocks */
#define FIXED_ONE 16777216.0              /* Blend's fixed point: 24 fraction bits */

typedef struct rtp_tile { int x0, y0, x1, y1; } rtp_tile;
typedef struct rtp_sample { uint32_t pixel; float px, py; uint32_t pad; } rtp_sample;
/* A ray and, once Intersect has filled it in place, its hit. */
typedef struct rtp_ray {
    rt_ray ray;
    float weight[3];
    uint32_t pixel, depth;
    rt_hit hit;
    uint32_t pad[3];                      /* 80 bytes: elements stay 16-byte aligned */
} rtp_ray;
typedef struct rtp_shadow { rt_ray ray; float color[3]; uint32_t pixel; } rtp_shadow;
/* Converted to fixed point by the Shader stage that makes it, so the Blend singleton
 * only adds integers. */
typedef struct rtp_contrib { uint32_t pixel, pad; int64_t v[3]; } rtp_contrib;

typedef struct rtp_state {
    const sc_scene *scene;
    const sc_geometry *geo;
    const rt_bvh *bvh;
    rtp_config cfg;
    pl_camera_frame frame;
    sh_ray_env env;
    int64_t *accum;                       /* width*height*3, written by Blend only */
    _Atomic(uint64_t) primary, shadow, secondary;
} rtp_state;

enum { Q_TILES, Q_SAMPLES, Q_RAYS, Q_HITS, Q_SHADOW, Q_CONTRIB, NQUEUES };

void rtp_config_default(rtp_config *c)
{
    memset(c, 0, sizeof *c);
    c->width = c->height = 1024;
    c->spp = 1;
    c->bounces = 1;
    c->packet_rays = 64;
    c->tile = 32;
    c->camera_capacity = 16;
    c->min_weight = 0.01f;
}

static inline void *elems(void *packet) { return (char *)packet + HDR; }

/* ---- Tiler and Sampler (Thread singletons) --------------------------------------------- */

static void tiler_main(gr_ctx *c)
{
    rtp_state *s = gr_user(c);
    int t = s->cfg.tile;
    for (int y = 0; y < s->cfg.height; y += t)
        for (int x = 0; x < s->cfg.width; x += t) {
            gr_window w;
            gr_reserve_out(c, 0, 1, &w);
            rtp_tile *tile = w.mem;
            *tile = (rtp_tile){x, y, x + t < s->cfg.width ? x + t : s->cfg.width,
                               y + t < s->cfg.height ? y + t : s->cfg.height};
            gr_commit_out(c, 0, 1);
        }
}

static uint32_t hash32(uint32_t x)
{
    x ^= x >> 16; x *= 0x7feb352d; x ^= x >> 15; x *= 0x846ca68b; x ^= x >> 16;
    return x;
}

/* Sample position: the pixel centre for one sample, else jittered from a fixed hash. */
static void sample_pos(const rtp_state *s, int x, int y, int k, float *px, float *py)
{
    if (s->cfg.spp == 1) { *px = x + 0.5f; *py = y + 0.5f; return; }
    uint32_t h = hash32((uint32_t)(y * s->cfg.width + x) * 9781u + (uint32_t)k * 6271u + 1);
    *px = x + (float)(h & 0xffff) / 65536.0f;
    *py = y + (float)(h >> 16) / 65536.0f;
}

/* The Sampler's open output packet. */
typedef struct sample_out { gr_window w; uint32_t n; } sample_out;

static void emit_sample(gr_ctx *c, const rtp_state *s, sample_out *o, int x, int y, int k)
{
    if (o->n == 0) gr_reserve_out(c, 0, 1, &o->w);
    rtp_sample *smp = (rtp_sample *)elems(o->w.mem) + o->n;
    smp->pixel = (uint32_t)(y * s->cfg.width + x);
    sample_pos(s, x, y, k, &smp->px, &smp->py);
    if (++o->n == (uint32_t)s->cfg.packet_rays) {
        gr_set_count(o->w.mem, o->n);
        gr_commit_out(c, 0, 1);
        o->n = 0;
    }
}

/* One BLOCK x BLOCK block (clipped to the tile), every sample of each pixel. */
static void sample_block(gr_ctx *c, const rtp_state *s, sample_out *o, const rtp_tile *t,
                         int bx, int by)
{
    int x1 = bx + BLOCK < t->x1 ? bx + BLOCK : t->x1, y1 = by + BLOCK < t->y1 ? by + BLOCK : t->y1;
    for (int y = by; y < y1; y++)
        for (int x = bx; x < x1; x++)
            for (int k = 0; k < s->cfg.spp; k++)
                emit_sample(c, s, o, x, y, k);
}

/* Packets follow 8x8 blocks, not tile rows: a square packet's rays diverge less than a
 * 32x2 strip's, so the packet traversal culls more of the tree for the whole packet. */
static void sampler_main(gr_ctx *c)
{
    rtp_state *s = gr_user(c);
    gr_window in;
    sample_out o = {.n = 0};
    while (gr_reserve(c, 0, 1, &in) == GR_OK) {
        rtp_tile tile = *(rtp_tile *)in.mem;
        gr_commit(c, 0, 1);
        for (int by = tile.y0; by < tile.y1; by += BLOCK)
            for (int bx = tile.x0; bx < tile.x1; bx += BLOCK) sample_block(c, s, &o, &tile, bx, by);
        if (o.n) { gr_set_count(o.w.mem, o.n); gr_commit_out(c, 0, 1); o.n = 0; }
    }
}

/* ---- Camera, Intersect, Shade, Shadow (Shader stages) ---------------------------------- */

static void camera_main(gr_ctx *c)
{
    rtp_state *s = gr_user(c);
    void *in = gr_input(c, NULL), *out = gr_output(c, 0);
    uint32_t n = gr_count(in);
    const rtp_sample *smp = elems(in);
    rtp_ray *rays = elems(out);
    float w = s->cfg.aov == PL_AOV_COLOR ? 1.0f / (float)s->cfg.spp : 1.0f;
    for (uint32_t i = 0; i < n; i++) {
        rtp_ray *r = &rays[i];
        memcpy(r->ray.org, s->frame.eye, sizeof r->ray.org);
        pl_camera_ray(&s->frame, s->cfg.width, s->cfg.height, smp[i].px, smp[i].py, r->ray.dir);
        r->ray.tmin = 0.0f;
        r->ray.tmax = INFINITY;
        r->weight[0] = r->weight[1] = r->weight[2] = w;
        r->pixel = smp[i].pixel;
        r->depth = 0;
    }
    gr_set_count(out, n);
}

/* Primary packets are coherent: packet traversal; reflections go ray by ray. The hits
 * are written into the input packet, which goes on to Shade (in place: no copy). */
static void intersect_main(gr_ctx *c)
{
    rtp_state *s = gr_user(c);
    void *in = gr_input(c, NULL);
    uint32_t n = gr_count(in);
    rtp_ray *r = elems(in);
    rt_ray rays[RT_PACKET_MAX];
    rt_hit hits[RT_PACKET_MAX];
    for (uint32_t i = 0; i < n; i++) rays[i] = r[i].ray;
    bool primary = n && r[0].depth == 0;
    if (primary) rt_intersect_packet(s->bvh, rays, (int)n, hits, NULL);
    else for (uint32_t i = 0; i < n; i++) rt_intersect1(s->bvh, &rays[i], &hits[i]);
    for (uint32_t i = 0; i < n; i++) r[i].hit = hits[i];
    atomic_fetch_add_explicit(primary ? &s->primary : &s->secondary, n, memory_order_relaxed);
}

/* Blend's fixed point of a float, rounded to nearest even: what llrint gives (glibc's
 * x86-64 llrint is this instruction), without the library call. A contribution is
 * clamped to +-CONTRIB_MAX (NaN counts as 0) so Blend's int64 sums cannot overflow:
 * 2^16 * 2^24 per contribution leaves room for 2^23 contributions to one pixel, more
 * than --spp 4096 x (--bounces 64 + 1) x (lights + 1) can make. A pixel is white at 1. */
#define CONTRIB_MAX 65536.0
static inline int64_t to_fixed(float x)
{
    const double d = x == x ? fmin(fmax((double)x, -CONTRIB_MAX), CONTRIB_MAX) : 0.0;
    return _mm_cvtsd_si64(_mm_set_sd(d * FIXED_ONE));
}

static inline void set_contrib(rtp_contrib *k, uint32_t pixel, const float rgb[3])
{
    k->pixel = pixel;
    k->pad = 0;
    for (int ch = 0; ch < 3; ch++) k->v[ch] = to_fixed(rgb[ch]);
}

/* One hit: its direct contribution (written to *k), a shadow ray per lit light, a
 * reflection ray. */
static void shade_hit(gr_ctx *c, const rtp_state *s, const rtp_ray *h, rtp_contrib *k)
{
    sh_ray_result res;
    sh_ray_shade(&s->env, &h->ray, &h->hit, h->weight, (int)h->depth, &res);
    set_contrib(k, h->pixel, res.direct);
    for (int l = 0; l < res.nshadow; l++) {
        rtp_shadow sh = {res.shadow[l], {res.shadow_color[l][0], res.shadow_color[l][1],
                         res.shadow_color[l][2]}, h->pixel};
        gr_push(c, 1, &sh);
    }
    if (res.reflect && (int)h->depth < s->cfg.bounces) {
        rtp_ray rr = {res.reflected, {res.reflect_weight[0], res.reflect_weight[1],
                      res.reflect_weight[2]}, h->pixel, h->depth + 1, {0, 0, 0, 0}, {0, 0, 0}};
        float wmax = fmaxf(rr.weight[0], fmaxf(rr.weight[1], rr.weight[2]));
        if (wmax >= s->cfg.min_weight) gr_push(c, 0, &rr);
    }
}

/* Writes ray h's contribution to *k; false when it has none (AOVs of a miss). */
static bool shade_one(gr_ctx *c, const rtp_state *s, const rtp_ray *h, rtp_contrib *k)
{
    if (s->cfg.aov != PL_AOV_COLOR) {
        float v[3];
        if (h->hit.prim == RT_NO_HIT) return false;
        sh_ray_aov(&s->env, s->cfg.aov, &h->ray, &h->hit, v);
        set_contrib(k, h->pixel, v);
    } else if (h->hit.prim == RT_NO_HIT) {
        float bg[3];
        for (int ch = 0; ch < 3; ch++) bg[ch] = h->weight[ch] * s->env.background[ch];
        set_contrib(k, h->pixel, bg);
    } else {
        shade_hit(c, s, h, k);
    }
    return true;
}

/* Each ray has at most one direct contribution, so they go to one output packet as
 * large as the input: cheaper than pushing them one at a time (most rays of a frame
 * are primary, one contribution each). Shadow and reflection rays are pushed. */
static void shade_main(gr_ctx *c)
{
    rtp_state *s = gr_user(c);
    void *in = gr_input(c, NULL), *out = gr_output(c, 2);
    uint32_t n = gr_count(in), m = 0;
    const rtp_ray *h = elems(in);
    rtp_contrib *k = elems(out);
    for (uint32_t i = 0; i < n; i++) m += shade_one(c, s, &h[i], &k[m]);
    gr_set_count(out, m);
}

/* Unoccluded shadow rays add their light's term: at most one contribution per ray, so
 * they too fill one output packet. */
static void shadow_main(gr_ctx *c)
{
    rtp_state *s = gr_user(c);
    void *in = gr_input(c, NULL), *out = gr_output(c, 0);
    uint32_t n = gr_count(in), m = 0;
    const rtp_shadow *sh = elems(in);
    rtp_contrib *k = elems(out);
    rt_ray rays[RT_PACKET_MAX];
    uint8_t occluded[RT_PACKET_MAX];
    for (uint32_t i = 0; i < n; i++) rays[i] = sh[i].ray;
    rt_occluded_packet(s->bvh, rays, (int)n, occluded, NULL);
    for (uint32_t i = 0; i < n; i++)
        if (!occluded[i]) set_contrib(&k[m++], sh[i].pixel, sh[i].color);
    gr_set_count(out, m);
    atomic_fetch_add_explicit(&s->shadow, n, memory_order_relaxed);
}

/* ---- Blend (Thread) ------------------------------------------------------------------- */

/* Integer sums are associative, so the result is independent of arrival order. */
static void blend_main(gr_ctx *c)
{
    rtp_state *s = gr_user(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        uint32_t n = gr_count(w.mem);
        const rtp_contrib *k = elems(w.mem);
        for (uint32_t i = 0; i < n; i++) {
            int64_t *a = s->accum + (size_t)k[i].pixel * 3;
            a[0] += k[i].v[0];
            a[1] += k[i].v[1];
            a[2] += k[i].v[2];
        }
        gr_commit(c, 0, 1);
    }
}

/* ---- graph ----------------------------------------------------------------------------- */

static int collection(gr_graph *g, const char *name, size_t elem, uint32_t n, uint32_t cap)
{
    return gr_queue(g, &(gr_queue_desc){.name = name, .kind = GR_COLLECTION,
                                        .header_bytes = HDR, .element_bytes = elem,
                                        .elements = n, .capacity = cap});
}

static int stage(gr_graph *g, const char *name, gr_stage_kind kind, gr_stage_fn fn, rtp_state *s)
{
    return gr_stage(g, &(gr_stage_desc){.name = name, .kind = kind, .main = fn, .user = s});
}

static gr_graph *build_graph(rtp_state *s)
{
    gr_graph *g = gr_graph_create();
    uint32_t pr = (uint32_t)s->cfg.packet_rays;
    int q[NQUEUES];
    q[Q_TILES] = gr_queue(g, &(gr_queue_desc){.name = "tiles", .packet_bytes = sizeof(rtp_tile),
                                              .capacity = 4});
    q[Q_SAMPLES] = collection(g, "samples", sizeof(rtp_sample), pr, s->cfg.camera_capacity);
    q[Q_RAYS] = collection(g, "rays", sizeof(rtp_ray), pr, 32);
    q[Q_HITS] = collection(g, "hits", sizeof(rtp_ray), pr, 32);
    q[Q_SHADOW] = collection(g, "shadow-rays", sizeof(rtp_shadow), pr, 32);
    q[Q_CONTRIB] = collection(g, "contributions", sizeof(rtp_contrib), pr, 32);
    int tiler = stage(g, "tiler", GR_THREAD, tiler_main, s);
    int sampler = stage(g, "sampler", GR_THREAD, sampler_main, s);
    int camera = stage(g, "camera", GR_SHADER, camera_main, s);
    int isect = stage(g, "intersect", GR_SHADER, intersect_main, s);
    int shade = stage(g, "shade", GR_SHADER, shade_main, s);
    int shadow = stage(g, "shadow-intersect", GR_SHADER, shadow_main, s);
    int blend = stage(g, "blend", GR_THREAD, blend_main, s);
    gr_bind(g, tiler, GR_BIND_OUTPUT, q[Q_TILES]);
    gr_bind(g, sampler, GR_BIND_INPUT, q[Q_TILES]);
    gr_bind(g, sampler, GR_BIND_OUTPUT, q[Q_SAMPLES]);
    gr_bind(g, camera, GR_BIND_INPUT, q[Q_SAMPLES]);
    gr_bind(g, camera, GR_BIND_OUTPUT, q[Q_RAYS]);
    gr_bind(g, isect, GR_BIND_INPUT, q[Q_RAYS]);
    gr_bind(g, isect, GR_BIND_INPLACE, q[Q_HITS]);
    gr_bind(g, shade, GR_BIND_INPUT, q[Q_HITS]);
    gr_bind(g, shade, GR_BIND_PUSH, q[Q_RAYS]);          /* output 0: reflections (cycle) */
    gr_bind(g, shade, GR_BIND_PUSH, q[Q_SHADOW]);        /* output 1 */
    gr_bind(g, shade, GR_BIND_OUTPUT, q[Q_CONTRIB]);     /* output 2 */
    gr_bind(g, shadow, GR_BIND_INPUT, q[Q_SHADOW]);
    gr_bind(g, shadow, GR_BIND_OUTPUT, q[Q_CONTRIB]);
    gr_bind(g, blend, GR_BIND_INPUT, q[Q_CONTRIB]);
    return g;
}

static bool check_config(const rtp_config *c, char err[SC_ERR_MAX])
{
    const char *bad = NULL;
    if (c->width <= 0 || c->height <= 0 || (int64_t)c->width * c->height > (1 << 28)) bad = "image size";
    else if (c->spp < 1 || c->spp > 4096) bad = "samples per pixel (1..4096)";
    else if (c->bounces < 0 || c->bounces > 64) bad = "bounces (0..64)";
    else if (c->packet_rays < 1 || c->packet_rays > RT_PACKET_MAX) bad = "packet size (1..64 rays)";
    else if (c->tile < 1) bad = "tile size";
    if (bad) snprintf(err, SC_ERR_MAX, "raytrace: invalid %s", bad);
    return bad == NULL;
}

/* One channel's output byte from its fixed-point sum. */
static uint8_t encode(pl_aov aov, int64_t sum)
{
    double v = (double)sum / FIXED_ONE;
    if (aov == PL_AOV_PRIMID) return (uint8_t)v;
    if (aov == PL_AOV_COLOR) return pl_srgb8_lookup((float)v);
    return (uint8_t)(v < 0 ? 0 : v > 1 ? 255 : v * 255.0 + 0.5);
}

/* Runs after the graph, on one thread: runs of equal sums (background, flat areas) reuse
 * the last byte instead of encoding again. */
static void resolve(const rtp_state *s, uint8_t *rgba)
{
    size_t n = (size_t)s->cfg.width * s->cfg.height;
    pl_srgb_init();                       /* then the inline lookup, without a call per value */
    int64_t last = 0;
    uint8_t byte = encode(s->cfg.aov, 0);
    for (size_t i = 0; i < n; i++) {
        for (int ch = 0; ch < 3; ch++) {
            int64_t sum = s->accum[i * 3 + ch];
            if (sum != last) { last = sum; byte = encode(s->cfg.aov, sum); }
            rgba[i * 4 + ch] = byte;
        }
        rgba[i * 4 + 3] = 255;
    }
}

gr_graph *rtp_render(const sc_scene *scene, const sc_geometry *geo, const rt_bvh *bvh,
                     const rtp_config *cfg, uint8_t *rgba, rtp_counts *counts,
                     char err[SC_ERR_MAX])
{
    if (!check_config(cfg, err)) return NULL;
    rtp_state *s = calloc(1, sizeof *s);
    if (!s) { snprintf(err, SC_ERR_MAX, "raytrace: out of memory"); return NULL; }
    s->scene = scene;
    s->geo = geo;
    s->bvh = bvh;
    s->cfg = *cfg;
    if (s->cfg.aov != PL_AOV_COLOR) s->cfg.spp = 1;
    pl_camera_frame_init(&s->frame, &scene->camera, cfg->width, cfg->height);
    sh_ray_env_init(&s->env, scene, geo, &s->frame);
    s->accum = calloc((size_t)cfg->width * cfg->height * 3, sizeof *s->accum);
    gr_graph *g = s->accum ? build_graph(s) : NULL;
    gr_launch_opts o = {.workers = cfg->workers};
    if (!g || gr_launch(g, &o, NULL, 0) != GR_OK || gr_wait(g) != GR_OK) {
        snprintf(err, SC_ERR_MAX, "raytrace: %s", g ? gr_error(g) : "out of memory");
        gr_graph_destroy(g);
        g = NULL;
    } else {
        resolve(s, rgba);
        if (counts) *counts = (rtp_counts){s->primary, s->shadow, s->secondary};
    }
    free(s->accum);
    free(s);
    return g;
}
