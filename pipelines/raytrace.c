/* raytrace.c — builds and runs the ray-tracing graph described in raytrace.h.
 *
 * Packets are Collections with a 16-byte header (element count first) so elements stay
 * 16-byte aligned. Rays carry their pixel, depth and weight; a contribution is
 * (pixel, rgb) and is summed by Blend. */
#include "pipelines/raytrace.h"

#include "raytracer/bvh_traverse.h"
#include "raytracer/packet.h"
#include "shaders/ray_shading.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define HDR 16
#define CONTRIBS_PER_PACKET 256
#define FIXED_ONE 16777216.0              /* Blend's fixed point: 24 fraction bits */

typedef struct rtp_tile { int x0, y0, x1, y1; } rtp_tile;
typedef struct rtp_sample { uint32_t pixel; float px, py; uint32_t pad; } rtp_sample;
typedef struct rtp_ray { rt_ray ray; float weight[3]; uint32_t pixel, depth, pad[3]; } rtp_ray;
typedef struct rtp_hitray { rtp_ray r; rt_hit hit; } rtp_hitray;
typedef struct rtp_shadow { rt_ray ray; float color[3]; uint32_t pixel; } rtp_shadow;
typedef struct rtp_contrib { uint32_t pixel; float rgb[3]; } rtp_contrib;

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
static void sample_pos(const rtp_state *s, uint32_t pixel, int k, float *px, float *py)
{
    int x = (int)(pixel % (uint32_t)s->cfg.width), y = (int)(pixel / (uint32_t)s->cfg.width);
    if (s->cfg.spp == 1) { *px = x + 0.5f; *py = y + 0.5f; return; }
    uint32_t h = hash32(pixel * 9781u + (uint32_t)k * 6271u + 1);
    *px = x + (float)(h & 0xffff) / 65536.0f;
    *py = y + (float)(h >> 16) / 65536.0f;
}

static void sampler_main(gr_ctx *c)
{
    rtp_state *s = gr_user(c);
    gr_window in;
    while (gr_reserve(c, 0, 1, &in) == GR_OK) {
        rtp_tile tile = *(rtp_tile *)in.mem;
        gr_commit(c, 0, 1);
        gr_window out;
        uint32_t n = 0;
        for (int y = tile.y0; y < tile.y1; y++)
            for (int x = tile.x0; x < tile.x1; x++)
                for (int k = 0; k < s->cfg.spp; k++) {
                    if (n == 0) gr_reserve_out(c, 0, 1, &out);
                    rtp_sample *smp = (rtp_sample *)elems(out.mem) + n;
                    smp->pixel = (uint32_t)(y * s->cfg.width + x);
                    sample_pos(s, smp->pixel, k, &smp->px, &smp->py);
                    if (++n == (uint32_t)s->cfg.packet_rays) {
                        gr_set_count(out.mem, n);
                        gr_commit_out(c, 0, 1);
                        n = 0;
                    }
                }
        if (n) { gr_set_count(out.mem, n); gr_commit_out(c, 0, 1); }
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

/* Primary packets are coherent: packet traversal; reflections go ray by ray. */
static void intersect_main(gr_ctx *c)
{
    rtp_state *s = gr_user(c);
    void *in = gr_input(c, NULL), *out = gr_output(c, 0);
    uint32_t n = gr_count(in);
    const rtp_ray *r = elems(in);
    rtp_hitray *h = elems(out);
    rt_ray rays[RT_PACKET_MAX];
    rt_hit hits[RT_PACKET_MAX];
    for (uint32_t i = 0; i < n; i++) rays[i] = r[i].ray;
    bool primary = n && r[0].depth == 0;
    if (primary) rt_intersect_packet(s->bvh, rays, (int)n, hits, NULL);
    else for (uint32_t i = 0; i < n; i++) rt_intersect1(s->bvh, &rays[i], &hits[i]);
    for (uint32_t i = 0; i < n; i++) { h[i].r = r[i]; h[i].hit = hits[i]; }
    gr_set_count(out, n);
    atomic_fetch_add_explicit(primary ? &s->primary : &s->secondary, n, memory_order_relaxed);
}

static void push_contrib(gr_ctx *c, uint32_t pixel, const float rgb[3])
{
    rtp_contrib k = {pixel, {rgb[0], rgb[1], rgb[2]}};
    gr_push(c, 2, &k);
}

static void shade_aov(gr_ctx *c, rtp_state *s, const rtp_hitray *h)
{
    float v[3] = {0, 0, 0};
    if (h->hit.prim == RT_NO_HIT) return;
    sh_ray_aov(&s->env, s->cfg.aov, &h->r.ray, &h->hit, v);
    push_contrib(c, h->r.pixel, v);
}

/* One hit: direct contributions, a shadow ray per lit light, a reflection ray. */
static void shade_hit(gr_ctx *c, rtp_state *s, const rtp_hitray *h)
{
    sh_ray_result res;
    sh_ray_shade(&s->env, &h->r.ray, &h->hit, h->r.weight, (int)h->r.depth, &res);
    push_contrib(c, h->r.pixel, res.direct);
    for (int l = 0; l < res.nshadow; l++) {
        rtp_shadow sh = {res.shadow[l], {res.shadow_color[l][0], res.shadow_color[l][1],
                         res.shadow_color[l][2]}, h->r.pixel};
        gr_push(c, 1, &sh);
    }
    if (res.reflect && (int)h->r.depth < s->cfg.bounces) {
        rtp_ray rr = {res.reflected, {res.reflect_weight[0], res.reflect_weight[1],
                      res.reflect_weight[2]}, h->r.pixel, h->r.depth + 1, {0, 0, 0}};
        float wmax = fmaxf(rr.weight[0], fmaxf(rr.weight[1], rr.weight[2]));
        if (wmax >= s->cfg.min_weight) gr_push(c, 0, &rr);
    }
}

static void shade_main(gr_ctx *c)
{
    rtp_state *s = gr_user(c);
    void *in = gr_input(c, NULL);
    uint32_t n = gr_count(in);
    const rtp_hitray *h = elems(in);
    for (uint32_t i = 0; i < n; i++) {
        if (s->cfg.aov != PL_AOV_COLOR) shade_aov(c, s, &h[i]);
        else if (h[i].hit.prim == RT_NO_HIT) {
            float bg[3];
            for (int k = 0; k < 3; k++) bg[k] = h[i].r.weight[k] * s->env.background[k];
            push_contrib(c, h[i].r.pixel, bg);
        } else {
            shade_hit(c, s, &h[i]);
        }
    }
}

static void shadow_main(gr_ctx *c)
{
    rtp_state *s = gr_user(c);
    void *in = gr_input(c, NULL);
    uint32_t n = gr_count(in);
    const rtp_shadow *sh = elems(in);
    rt_ray rays[RT_PACKET_MAX];
    uint8_t occluded[RT_PACKET_MAX];
    for (uint32_t i = 0; i < n; i++) rays[i] = sh[i].ray;
    rt_occluded_packet(s->bvh, rays, (int)n, occluded, NULL);
    for (uint32_t i = 0; i < n; i++) {
        if (occluded[i]) continue;
        rtp_contrib k = {sh[i].pixel, {sh[i].color[0], sh[i].color[1], sh[i].color[2]}};
        gr_push(c, 0, &k);
    }
    atomic_fetch_add_explicit(&s->shadow, n, memory_order_relaxed);
}

/* ---- Blend (Thread) ------------------------------------------------------------------- */

/* Fixed-point sums are associative, so the result is independent of arrival order. */
static void blend_main(gr_ctx *c)
{
    rtp_state *s = gr_user(c);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        uint32_t n = gr_count(w.mem);
        const rtp_contrib *k = elems(w.mem);
        for (uint32_t i = 0; i < n; i++)
            for (int ch = 0; ch < 3; ch++)
                s->accum[(size_t)k[i].pixel * 3 + ch] += llrint((double)k[i].rgb[ch] * FIXED_ONE);
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
    q[Q_HITS] = collection(g, "hits", sizeof(rtp_hitray), pr, 32);
    q[Q_SHADOW] = collection(g, "shadow-rays", sizeof(rtp_shadow), pr, 32);
    q[Q_CONTRIB] = collection(g, "contributions", sizeof(rtp_contrib), CONTRIBS_PER_PACKET, 32);
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
    gr_bind(g, isect, GR_BIND_OUTPUT, q[Q_HITS]);
    gr_bind(g, shade, GR_BIND_INPUT, q[Q_HITS]);
    gr_bind(g, shade, GR_BIND_PUSH, q[Q_RAYS]);          /* output 0: reflections (cycle) */
    gr_bind(g, shade, GR_BIND_PUSH, q[Q_SHADOW]);        /* output 1 */
    gr_bind(g, shade, GR_BIND_PUSH, q[Q_CONTRIB]);       /* output 2 */
    gr_bind(g, shadow, GR_BIND_INPUT, q[Q_SHADOW]);
    gr_bind(g, shadow, GR_BIND_PUSH, q[Q_CONTRIB]);
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

static void resolve(const rtp_state *s, uint8_t *rgba)
{
    size_t n = (size_t)s->cfg.width * s->cfg.height;
    for (size_t i = 0; i < n; i++) {
        for (int ch = 0; ch < 3; ch++) {
            double v = (double)s->accum[i * 3 + ch] / FIXED_ONE;
            if (s->cfg.aov == PL_AOV_PRIMID) rgba[i * 4 + ch] = (uint8_t)v;
            else if (s->cfg.aov == PL_AOV_COLOR) rgba[i * 4 + ch] = pl_to_srgb8((float)v);
            else rgba[i * 4 + ch] = (uint8_t)(v < 0 ? 0 : v > 1 ? 255 : v * 255.0 + 0.5);
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
