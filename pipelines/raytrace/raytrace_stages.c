/* raytrace_stages.c — the ray tracer's stages (thesis Fig. 4.2) as registered stage
 * types: rt.tiler (Thread), rt.sampler, rt.camera, rt.primary (the two in one),
 * rt.intersect, rt.shade and rt.shadow (Shader), rt.blend (Thread, one instance per
 * subqueue). Each keeps its own parameters and reads the
 * scene, BVH and buffers from the frame (pipelines/frame.h); pipelines/graphs/
 * raytrace.graph wires them. Packet formats: pipelines/raytrace/packets.h. */
#include "pipelines/stages.h"
#include "pipelines/surface.h"

#include "pipelines/raytrace/packets.h"
#include "pipelines/raytrace/sums.h"
#include "pipelines/raytrace/sum_encode.h"
#include "pipelines/raytrace/sample_runs.h"
#include "pipelines/raytrace/shade_opencl.h"
#include "pipelines/raytrace/trace_opencl.h"
#include "pipelines/raytrace/transmittance.h"
#include "accel/opencl.h"
#include "rasterizer/samples.h"
#include "raytracer/bvh_traverse.h"
#include "raytracer/packet.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- Tiler -------------------------------------------------------------------------------- */

/* The Tiler does no per-sample work, only cuts each tile into sample runs (one per
 * Sampler packet), a few operations per 8x8 block. The Sampler, a Shader, then writes
 * the samples of each run in parallel. Replicated, copy k cuts only its share of the
 * tiles (plrt_tile_deal, by the `bands` given: the Blend instances'), so each worker's
 * rays, queues and pixel sums stay its own; which copy cuts a tile changes no pixel. */
typedef struct tiler_state {
    int tile, spp;
    uint32_t packet, replica;
    plrt_tile_deal deal;
    const pl_frame *frame;
} tiler_state;

static void *tiler_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    pl_frame *f = i->frame;
    if (!pl_agree_spp(i, err)) return NULL;
    tiler_state *s = malloc(sizeof *s);
    if (!s) { snprintf(err, CP_ERR_MAX, "out of memory"); return NULL; }
    *s = (tiler_state){(int)cp_int(i, "tile"), pl_samples_per_pixel(i), (uint32_t)cp_int(i, "samples"),
                       i->replica, {{0, 0, 0, 0, 0}, 0, 0, 1, NULL}, f};
    if (plrt_tile_cutter_init(&s->deal, i, (uint32_t)cp_int(i, "bands"), s->tile, i->replicas,
                              err))
        return s;
    free(s);
    return NULL;
}

static int min_int(int a, int b) { return a < b ? a : b; }
static int max_int(int a, int b) { return a > b ? a : b; }

/* The image's tiles (a grid from pixel 0,0, so a tile's pixels are the same whatever the
 * region) clipped to the frame's region, each cut into runs; tiles outside it, and
 * other copies' tiles, are not emitted. */
static void emit_tiles(gr_ctx *c, int output, const tiler_state *s)
{
    int t = s->tile;
    const pl_region *r = &s->frame->region;
    plrt_run_cutter runs;
    plrt_runs_init(&runs, s->spp, s->packet, output);
    for (int y = r->y0 / t * t; y < r->y1; y += t)
        for (int x = r->x0 / t * t; x < r->x1; x += t) {
            plrt_tile tile = {max_int(x, r->x0), max_int(y, r->y0), min_int(x + t, r->x1),
                             min_int(y + t, r->y1)};
            if (plrt_tile_copy(&s->deal, tile.x0, tile.y0) != s->replica) continue;
            plrt_clear_tile_sums(&s->deal, tile.x0, tile.y0, tile.x1, tile.y1);
            plrt_runs_cut(&runs, c, &tile);
        }
    plrt_runs_flush(&runs, c);
}

static void tiler_main(gr_ctx *c) { emit_tiles(c, 0, gr_user(c)); }

/* ---- Sampler ------------------------------------------------------------------------------- */

typedef struct sampler_state { int width, height, spp; uint32_t packet; } sampler_state;

static void *sampler_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    pl_frame *f = i->frame;
    if (!pl_agree_spp(i, err)) return NULL;
    sampler_state *s = malloc(sizeof *s);
    if (!s) { snprintf(err, CP_ERR_MAX, "out of memory"); return NULL; }
    *s = (sampler_state){f->width, f->height, pl_samples_per_pixel(i), cp_port_elements(i, "out")};
    return s;
}

/* One run of samples into one packet (sample_runs.h: plrt_run_samples). */
static void sampler_main(gr_ctx *c)
{
    const sampler_state *s = gr_user(c);
    const plrt_sample_run *r = gr_input(c, NULL);
    void *out = gr_output(c, 0);
    uint32_t n = plrt_run_samples_checked(c, r, s->packet, s->width, s->height, s->spp, plrt_elems(out));
    gr_set_count(out, n);
}

/* ---- Camera -------------------------------------------------------------------------------- */

/* rt.primary with `trace` also holds the BVH and the primary-ray counter, and with
 * `background` the colour its misses add to the sums (plrt_sum_misses). */
typedef struct camera_state {
    const pl_frame *frame;
    int spp;
    float weight;
    float spread;                         /* the camera rays' cone (plrt_camera_spread) */
    uint32_t packet;
    const rt_bvh *bvh;                    /* rt.primary with `trace`, else NULL */
    _Atomic(uint64_t) *traced;
    plrt_misses misses;                   /* rt.primary with `trace` */
} camera_state;

static void *camera_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    if (!pl_agree_spp(i, err)) return NULL;
    camera_state *s = malloc(sizeof *s);
    if (!s) { snprintf(err, CP_ERR_MAX, "out of memory"); return NULL; }
    int spp = pl_samples_per_pixel(i);
    *s = (camera_state){i->frame, spp, 1.0f / (float)spp, plrt_camera_spread(i->frame),
                        cp_port_elements(i, "out"), NULL, NULL, {0}};
    return s;
}

static void *primary_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    camera_state *s = camera_create(i, err);
    if (!s || !cp_bool(i, "trace")) return s;
    s->bvh = pl_frame_use(i, "bvh", err);
    s->traced = pl_frame_counter(i->frame, "rays.primary");
    if (s->bvh && !s->traced) snprintf(err, CP_ERR_MAX, "out of memory (counters)");
    if (s->bvh && s->traced && plrt_misses_init(&s->misses, i, cp_bool(i, "background"), err))
        return s;
    free(s);
    return NULL;
}

/* The primary rays through n samples. */
static void camera_rays(const camera_state *s, const plrt_sample *smp, uint32_t n, plrt_ray *rays)
{
    const pl_frame *f = s->frame;
    for (uint32_t i = 0; i < n; i++) {
        plrt_ray *r = &rays[i];
        memcpy(r->ray.org, f->camera.eye, sizeof r->ray.org);
        sc_camera_ray(&f->camera, f->width, f->height, smp[i].px, smp[i].py, r->ray.dir);
        r->ray.tmin = 0.0f;
        r->ray.tmax = INFINITY;
        r->weight[0] = r->weight[1] = r->weight[2] = s->weight;
        r->pixel = smp[i].pixel;
        r->depth = 0;
        r->hit = (rt_hit){0.0f, 0.0f, 0.0f, PLRT_UNTRACED};
        r->cone = (rt_cone){0.0f, s->spread};
        r->layers = 0;
    }
}

static void camera_main(gr_ctx *c)
{
    void *in = gr_input(c, NULL), *out = gr_output(c, 0);
    uint32_t n = gr_count(in);
    camera_rays(gr_user(c), plrt_elems(in), n, plrt_elems(out));
    gr_set_count(out, n);
}

/* Sampler and Camera in one task: a run's samples stay on the stack instead of going
 * through a queue, which halves the tasks and packets before Intersect. With `trace`,
 * Intersect's work on them too: the packet leaves with its hits, one task and one
 * packet hand-over fewer per primary packet. */
static void primary_main(gr_ctx *c)
{
    const camera_state *s = gr_user(c);
    const plrt_sample_run *r = gr_input(c, NULL);
    void *out = gr_output(c, 0);
    plrt_sample smp[RT_PACKET_MAX];
    uint32_t n = plrt_run_samples_checked(c, r, s->packet, s->frame->width, s->frame->height, s->spp, smp);
    camera_rays(s, smp, n, plrt_elems(out));
    gr_set_count(out, n);
    if (!s->bvh) return;
    plrt_ray *pr = plrt_elems(out);
    rt_ray rays[RT_PACKET_MAX];
    rt_hit hits[RT_PACKET_MAX];
    for (uint32_t i = 0; i < n; i++) rays[i] = pr[i].ray;
    rt_intersect_packet(s->bvh, rays, (int)n, hits, NULL);
    atomic_fetch_add_explicit(s->traced, n, memory_order_relaxed);
    for (uint32_t i = 0; i < n; i++) pr[i].hit = hits[i];
    plrt_drop_misses(c, 0, out, &s->misses, s->spp, pr, n);
}

/* ---- Intersect and Shadow ------------------------------------------------------------------ */

typedef plrt_trace_state trace_state;    /* trace_opencl.h: the kernels read it too */

/* The blend keys of the contributions set bound to `port`. */
static bool blend_keys_of(const cp_stage_init *i, const char *port, plrt_blend_keys *keys,
                          char err[CP_ERR_MAX])
{
    if (plrt_blend_keys_of(i->frame, cp_port_subqueues(i, port), keys)) return true;
    snprintf(err, CP_ERR_MAX, "port '%s': the contributions queue set needs a power of two "
             "of subqueues (one rt.blend instance each), not %u", port, cp_port_subqueues(i, port));
    return false;
}

static void *trace_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    pl_frame *f = i->frame;
    trace_state *s = malloc(sizeof *s);
    if (s) *s = (trace_state){pl_frame_use(i, "bvh", err), pl_frame_counter(f, "rays.primary"),
                              pl_frame_counter(f, "rays.secondary"),
                              pl_frame_counter(f, "rays.shadow"), {0, 0, 0, 0, 0},
                              f->data->scene && sh_ray_scene_blends(f->data->scene) ? pl_frame_ray_env(f) : NULL,
                              NULL};
    if (s && s->bvh && i->on_device && !(s->device = pl_frame_use(i, "bvh.opencl", err))) {
        snprintf(err, CP_ERR_MAX, "the scene's BVH is not on the OpenCL device: %s",
                 plrt_device_bvh_error());
        free(s);
        return NULL;
    }
    if (s && cp_port_subqueues(i, "out") && !blend_keys_of(i, "out", &s->keys, err)) {
        free(s);
        return NULL;
    }
    if (!s || !s->bvh || !s->primary || !s->secondary || !s->shadow) {
        if (!s || s->bvh) snprintf(err, CP_ERR_MAX, "out of memory (counters)");
        free(s);
        return NULL;
    }
    return s;
}

/* The packet path for every packet: it traces coherent packets (camera rays) as packets
 * and incoherent ones (reflections) as streams, either beating one ray at a time. The
 * hits are written into the input packet, which goes on (in place: no copy). */
static void intersect_main(gr_ctx *c)
{
    trace_state *s = gr_user(c);
    void *in = gr_input(c, NULL);
    uint32_t n = gr_count(in);
    plrt_ray *r = plrt_elems(in);
    rt_ray rays[RT_PACKET_MAX];
    rt_hit hits[RT_PACKET_MAX];
    for (uint32_t i = 0; i < n; i++) rays[i] = r[i].ray;
    bool primary = n && r[0].depth == 0 && r[0].layers == 0;   /* a packet is one or the other */
    rt_intersect_packet(s->bvh, rays, (int)n, hits, NULL);
    for (uint32_t i = 0; i < n; i++) r[i].hit = hits[i];
    atomic_fetch_add_explicit(primary ? s->primary : s->secondary, n, memory_order_relaxed);
}

/* Unoccluded shadow rays add their light's term, pushed to the Blend instance of its
 * pixel (a packet's shadow rays come from many Shade tasks, so from anywhere). In a
 * scene with blended materials each ray is traced to its nearest hits instead and adds
 * the term times what gets through (plrt_transmittance). */
static void shadow_main(gr_ctx *c)
{
    trace_state *s = gr_user(c);
    void *in = gr_input(c, NULL);
    uint32_t n = gr_count(in);
    const plrt_shadow *sh = plrt_elems(in);
    rt_ray rays[RT_PACKET_MAX];
    uint8_t occluded[RT_PACKET_MAX];
    plrt_contribs out;
    plrt_contribs_start(&out, &s->keys);
    if (s->env) {
        for (uint32_t i = 0; i < n; i++) {
            float t = plrt_transmittance(s->bvh, s->env, sh[i].ray), rgb[3];
            for (int ch = 0; ch < 3; ch++) rgb[ch] = t * sh[i].color[ch];
            if (t > 0.0f) plrt_add_contrib(&out, sh[i].pixel, rgb);
        }
    } else {
        for (uint32_t i = 0; i < n; i++) rays[i] = sh[i].ray;
        rt_occluded_packet(s->bvh, rays, (int)n, occluded, NULL);
        for (uint32_t i = 0; i < n; i++)
            if (!occluded[i]) plrt_add_contrib(&out, sh[i].pixel, sh[i].color);
    }
    plrt_push_contribs(c, 0, &out);
    atomic_fetch_add_explicit(s->shadow, n, memory_order_relaxed);
}

/* ---- Shade --------------------------------------------------------------------------------- */

enum { SHADE_REFLECT, SHADE_SHADOW, SHADE_CONTRIB };   /* output slots, as in shade_ports */

typedef struct shade_state {
    sh_ray_env own_env;                   /* the frame's, without ambient if asked */
    const sh_ray_env *env;
    sh_aov aov;
    int bounces;
    float min_weight;
    plrt_blend_keys keys;
    plrt_shade_device device;             /* placed on the device and the kernel can shade
                                             the scene: its buffers there */
    const pl_frame *frame;
    pl_surface *surface;                  /* the frame's, when a float output wants it */
} shade_state;

static void *shade_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    pl_frame *f = i->frame;
    shade_state *s = malloc(sizeof *s);
    if (!s) { snprintf(err, CP_ERR_MAX, "out of memory"); return NULL; }
    *s = (shade_state){*pl_frame_ray_env(f), NULL, f->aov, (int)cp_int(i, "bounces"),
                       (float)cp_float(i, "min_weight"), {0, 0, 0, 0, 0}, {NULL, {0}}, f,
                       NULL};
    if (!blend_keys_of(i, "out", &s->keys, err) || !pl_frame_stage_surface(i, &s->surface, err)) {
        free(s);
        return NULL;
    }
    if (!cp_bool(i, "ambient")) s->own_env.ambient = 0.0f;   /* another stage adds it (AO) */
    s->env = &s->own_env;
    if (i->on_device && !plrt_shade_unsupported(s->env, s->aov) &&
        plrt_shade_device_make(&s->device, i, s->env, err)) {
        free(s);
        return NULL;
    }
    return s;
}

static void shade_destroy(void *state)
{
    shade_state *s = state;
    if (s) plrt_shade_device_free(&s->device);
    free(s);
}

/* What one Shade task sends on: its contributions, and its shadow and reflection rays
 * gathered to be pushed a packet's worth at a time (gr_push_n; a push per ray cost
 * about a fifth of Shade). A task makes at most two secondary rays per input ray (a
 * reflection and, through a blended surface, a continuation): pushed when full. */
typedef struct shade_out {
    plrt_contribs contribs;
    uint32_t nshadow, nreflect;
    plrt_shadow shadow[RT_PACKET_MAX];
    plrt_ray reflect[RT_PACKET_MAX];
} shade_out;

static void push_shadows(gr_ctx *c, shade_out *o)
{
    if (o->nshadow) gr_push_n(c, SHADE_SHADOW, o->shadow, o->nshadow);
    o->nshadow = 0;
}

static void push_reflections(gr_ctx *c, shade_out *o)
{
    if (o->nreflect) gr_push_n(c, SHADE_REFLECT, o->reflect, o->nreflect);
    o->nreflect = 0;
}

/* A ray the kernel appended on the device became a handle (`appended`); where it did
 * not, the host made it from the result's spill, which the kernel then asked for. */
static void made_on_device(gr_ctx *c, const plrt_shade_result *kernel, bool appended)
{
    gr_assert(c, appended || plrt_shade_spills(kernel));
}

/* A secondary ray from h's hit, if its weight is worth tracing, with h's cone carried
 * on from the hit (`cone`: rt_cone_at_hit); its ray a handle of the mirror ray the
 * kernel appended on the device, if there is a result and it did. */
static void add_secondary(gr_ctx *c, const shade_state *s, shade_out *o, const rt_ray *ray,
                          const float weight[3], const plrt_ray *h, uint32_t depth, uint32_t layers,
                          rt_cone cone, const plrt_shade_result *kernel)
{
    const uint32_t appended = kernel ? kernel->reflect_at : AC_NO_ENTRY;
    float wmax = fmaxf(weight[0], fmaxf(weight[1], weight[2]));
    if (!(wmax >= s->min_weight)) return;
    plrt_ray rr = {*ray, {weight[0], weight[1], weight[2]}, h->pixel, depth, {0, 0, 0, 0}, cone,
                   layers};
    if (appended != AC_NO_ENTRY)
        made_on_device(c, kernel, cp_device_appended(c, PLRT_APPEND_REFLECT, appended, &rr.ray));
    if (o->nreflect == RT_PACKET_MAX) push_reflections(c, o);
    o->reflect[o->nreflect++] = rr;
}

/* The ray on through h's blended surface, unless it has gone through as many as it may. */
static void add_pass(gr_ctx *c, const shade_state *s, shade_out *o, const plrt_ray *h,
                     const rt_ray *passed, const float weight[3])
{
    if (h->layers + 1 < PLRT_MAX_LAYERS)
        add_secondary(c, s, o, passed, weight, h, h->depth, h->layers + 1,
                      rt_cone_at_hit(h->cone, &h->ray, h->hit.t, passed->dir), NULL);
}

/* One hit's shading sent on: its direct contribution, a shadow ray per lit light, a
 * reflection ray, a ray on through a blended surface. With the kernel's result, the
 * rays it appended on the device go as handles (cp_device_appended), and the
 * reflection's cone is the kernel's (h's ray and hit may be stale on the host). */
static void send_hit(gr_ctx *c, const shade_state *s, const plrt_ray *h, const sh_ray_result *res,
                     const plrt_shade_result *kernel, shade_out *o)
{
    const uint32_t shadow_at = kernel ? kernel->shadow_at : AC_NO_ENTRY;
    plrt_add_contrib(&o->contribs, h->pixel, res->direct);
    for (int l = 0; l < res->nshadow; l++) {
        if (o->nshadow == RT_PACKET_MAX) push_shadows(c, o);
        plrt_shadow *sh = &o->shadow[o->nshadow++];
        *sh = (plrt_shadow){res->shadow[l], {res->shadow_color[l][0], res->shadow_color[l][1],
                            res->shadow_color[l][2]}, h->pixel};
        if (shadow_at != AC_NO_ENTRY)
            made_on_device(c, kernel, cp_device_appended(c, PLRT_APPEND_SHADOW, shadow_at + (uint32_t)l,
                                                         &sh->ray));
    }
    if (res->reflect && (int)h->depth < s->bounces)
        add_secondary(c, s, o, &res->reflected, res->reflect_weight, h, h->depth + 1, 0,
                      kernel ? kernel->reflect_cone
                             : rt_cone_at_hit(h->cone, &h->ray, h->hit.t, res->reflected.dir),
                      kernel);
    if (res->pass) add_pass(c, s, o, h, &res->passed, res->pass_weight);
}

static void shade_hit(gr_ctx *c, const shade_state *s, const plrt_ray *h, shade_out *o)
{
    sh_ray_result res;
    sh_ray_shade_cone(s->env, &h->ray, &h->hit, h->weight, (int)h->depth, h->cone, &res);
    send_hit(c, s, h, &res, NULL, o);
}

/* The albedo AOV at h's hit: the base colour, composited front to back through blended
 * surfaces as the colour is (background black: a miss adds nothing). */
static void albedo_hit(gr_ctx *c, const shade_state *s, const plrt_ray *h, shade_out *o)
{
    float base[4], a = 1.0f, v[3];
    sh_ray_surface(s->env, &h->ray, &h->hit, h->cone, base);
    bool blended = sh_ray_blended(s->env, &h->hit, base, &a);
    for (int ch = 0; ch < 3; ch++) v[ch] = h->weight[ch] * (blended ? a * base[ch] : base[ch]);
    plrt_add_contrib(&o->contribs, h->pixel, v);
    if (!blended) return;
    float w[3];
    rt_ray passed;
    rt_cone next;
    sh_ray_pass(s->env, &h->ray, &h->hit, h->cone, &passed, &next);
    for (int i = 0; i < 3; i++) w[i] = h->weight[i] * (1.0f - a);
    add_pass(c, s, o, h, &passed, w);
}

/* A miss, or a triangle of the mesh: not a ray no stage traced (PLRT_UNTRACED), nor a
 * primitive from nowhere, either of which would index past the mesh. */
static bool hit_in_mesh(const shade_state *s, uint32_t prim)
{
    return prim == RT_NO_HIT || prim < s->env->geo->ntriangles;
}

/* Ray h's contribution, if it has one (AOVs of a miss have none); a hit's shading from
 * the kernel's result when there is one. With a result, h's ray and hit are not read
 * (they are stale on the host where Intersect's output stayed on the device): the
 * primitive comes from the result, and a result means the colour AOV and no surface
 * output (shade_reads_resident). */
static void shade_one(gr_ctx *c, const shade_state *s, const plrt_ray *h,
                      const plrt_shade_result *kernel, shade_out *o)
{
    plrt_contribs *out = &o->contribs;
    const uint32_t prim = kernel ? kernel->prim : h->hit.prim;
    if (!hit_in_mesh(s, prim)) {
        gr_assert_at(c, false, "a ray came with no hit or a primitive outside the mesh (is the "
                     "input Intersect's output, or rt.primary's with trace = true?)", __FILE__, __LINE__);
        return;
    }
    if (s->surface && plrt_surface_ray(s->frame, h))
        s->surface[h->pixel] = pl_surface_of_hit(s->env, s->frame->camera.eye, &h->ray, &h->hit);
    if (s->aov == SH_AOV_ALBEDO) {
        if (h->hit.prim != RT_NO_HIT) albedo_hit(c, s, h, o);
    } else if (s->aov != SH_AOV_COLOR) {
        float v[3];
        if (h->hit.prim == RT_NO_HIT) return;
        sh_ray_aov(s->env, s->aov, &h->ray, &h->hit, v);
        plrt_add_contrib(out, h->pixel, v);
    } else if (prim == RT_NO_HIT) {
        float bg[3];
        for (int ch = 0; ch < 3; ch++) bg[ch] = h->weight[ch] * s->env->background[ch];
        plrt_add_contrib(out, h->pixel, bg);
    } else if (kernel) {
        sh_ray_result res;
        plrt_shade_result_of(s->env, kernel, &res);
        send_hit(c, s, h, &res, kernel, o);
    } else {
        shade_hit(c, s, h, o);
    }
}

/* Contributions, shadow rays and reflection rays are all pushed: a contribution goes
 * to the Blend instance of its pixel, and one packet of rays (reflections come from
 * many tasks) may cover pixels of every instance. Each ray makes at most one
 * contribution and one reflection, so the task's fit one shade_out. */
static void shade_packet(gr_ctx *c, const shade_state *s, void *in, const unsigned char *kernel)
{
    const size_t stride = plrt_shade_result_bytes(s->env->nlights);
    uint32_t n = gr_count(in);
    const plrt_ray *h = plrt_elems(in);
    shade_out o;
    plrt_contribs_start(&o.contribs, &s->keys);
    o.nshadow = o.nreflect = 0;
    gr_assert(c, n <= RT_PACKET_MAX);
    for (uint32_t i = 0; i < n && i < RT_PACKET_MAX; i++)
        shade_one(c, s, &h[i], kernel ? (const plrt_shade_result *)(kernel + i * stride) : NULL, &o);
    push_shadows(c, &o);
    push_reflections(c, &o);
    plrt_push_contribs(c, SHADE_CONTRIB, &o.contribs);
}

static void shade_main(gr_ctx *c)
{
    shade_packet(c, gr_user(c), gr_input(c, NULL), NULL);
}

/* This instance's kernel results: the scene's lights only, and the spill. */
static size_t shade_results_of(void *state)
{
    const shade_state *s = state;
    return plrt_shade_result_bytes(s->env->nlights);
}

/* On the device: the kernel shaded the hits; the host sends them on as shade_main. */
static void shade_emit(gr_ctx *c, void *state, void *packet, const void *results, uint32_t n)
{
    (void)n;
    shade_packet(c, state, packet, results);
}

/* The Blend keys of a task's contributions: one at most per ray, to its pixel's
 * (shade_one), for a batch's room in `contributions` (cp_kernel.set_pushes). */
static uint32_t shade_set_pushes(void *state, const void *packet, int output, gr_set_push *pushes)
{
    const shade_state *s = state;
    if (output != SHADE_CONTRIB) return GR_SET_PUSHES_UNKNOWN;   /* rays: plain queues */
    return plrt_contrib_pushes(&s->keys, plrt_elems((void *)packet), sizeof(plrt_ray),
                               offsetof(plrt_ray, pixel), gr_count(packet), pushes);
}

/* The emit reads of an element only what Intersect leaves as it was (weight, pixel,
 * depth, cone) and takes the rest from the result, so Intersect's hits may stay on the
 * device; not with a float surface output, which reads the camera rays' hits. */
static bool shade_reads_resident(void *state)
{
    const shade_state *s = state;
    return !s->surface;
}

static const char *shade_kernel_unsupported(void *state)
{
    const shade_state *s = state;
    return plrt_shade_unsupported(s->env, s->aov);
}

static int shade_kernel_buffers(void *state, const struct ac_buffer *out[CP_KERNEL_BUFFERS])
{
    const shade_state *s = state;
    return plrt_shade_device_buffers(&s->device, out);
}

/* A hit makes a shadow ray per lit light at most. */
static uint32_t shade_most_shadows(void *state)
{
    const shade_state *s = state;
    return (uint32_t)s->env->nlights;
}

/* ---- Blend --------------------------------------------------------------------------------- */

/* Blend instance k owns band k of the region's pixels (plrt_blend_key): it adds its
 * contributions and encodes the sums once its subqueue closes, so no pass over the image
 * runs on one thread. Every band gets an instance, one that got no contribution too
 * (every_subqueue): its sums may still have been added to directly (plrt_sum_misses), and
 * its pixels must be written either way. The sums start at zero: the stages that cut
 * the image into tiles clear each tile's (plrt_clear_tile_sums); in a graph without such
 * a cutter each instance clears its band when it starts.
 *
 * With msaa > 1 (the hybrid's multisampling) a pixel has msaa slots of sums, one per
 * sample, and a contribution's index is pixel * msaa + slot: each of the pixel's
 * fragments (hybrid/fragments.h) sums into the slot of its first sample; the pixel is
 * resolved from its samples' bytes (sum_encode.h). */
typedef struct blend_state {
    pl_frame *f;
    plrt_blend_keys keys;
    int64_t *sums;
    uint32_t msaa;
    plrt_encoder enc;                     /* the sums' bytes */
    bool cutters_clear_sums;              /* else each instance clears its band */
} blend_state;

static void *blend_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    if (!pl_stage_agree(i, "msaa", (int)cp_int(i, "msaa"), err)) return NULL;
    pl_frame *f = i->frame;
    plrt_blend_keys keys;
    if (!blend_keys_of(i, "in", &keys, err)) return NULL;
    blend_state *b = malloc(sizeof *b);
    if (!b) {
        snprintf(err, CP_ERR_MAX, "out of memory");
        return NULL;
    }
    const int msaa = (int)cp_int(i, "msaa");
    *b = (blend_state){f, keys, NULL, (uint32_t)msaa, {f, NULL, NULL, NULL, (uint32_t)msaa, NULL},
                       plrt_cutters_clear_sums(i)};
    b->keys.shift = (uint32_t)__builtin_ctz((unsigned)msaa);
    if (!plrt_encoder_init(&b->enc, i, msaa, err) || !(b->sums = b->enc.sums)) {
        free(b);
        return NULL;
    }
    return b;
}

typedef enum blend_step { BLEND_CLEAR, BLEND_ENCODE } blend_step;

/* Does `step` for the region's pixels in band `key`, row by row. */
static void blend_band(const blend_state *b, uint32_t key, blend_step step)
{
    const pl_frame *f = b->f;
    const pl_region *r = &f->region;
    uint64_t band_lo, band_hi;
    plrt_blend_band(&b->keys, key, &band_lo, &band_hi);
    for (int y = r->y0; y < r->y1; y++) {
        uint64_t lo = (uint64_t)y * (uint64_t)f->width + (uint64_t)r->x0,
                 hi = lo + (uint64_t)(r->x1 - r->x0);
        if (hi <= band_lo) continue;
        if (lo >= band_hi) break;
        if (lo < band_lo) lo = band_lo;
        if (hi > band_hi) hi = band_hi;
        if (step == BLEND_CLEAR) memset(b->sums + lo * 3 * b->msaa, 0, (size_t)(hi - lo) * 3 * b->msaa * sizeof *b->sums);
        else plrt_encode_pixels(&b->enc, (size_t)lo, (size_t)hi);
    }
}

/* A contribution outside this instance's band (a plugin stage that pushes
 * contributions, such as examples/plugins/ao.c, computed a wrong pixel): the run fails
 * naming it, instead of adding into another band's sums or outside the image. */
static void bad_pixel(gr_ctx *c, uint32_t pixel, uint64_t lo, uint64_t hi)
{
    char why[200];
    snprintf(why, sizeof why, "a contribution to pixel %u, outside this blender's pixels "
             "%llu..%llu: a stage feeding its input computed a wrong pixel", pixel,
             (unsigned long long)lo, (unsigned long long)(hi - 1));
    gr_assert_at(c, false, why, __FILE__, __LINE__);
}

/* One instance per subqueue of the contributions set (see blend_state). Integer sums
 * are associative, so the result is independent of arrival order. */
static void blend_main(gr_ctx *c)
{
    blend_state *b = gr_user(c);
    uint32_t key = (uint32_t)gr_key(c) & b->keys.mask;
    int64_t *accum = b->sums;
    if (!b->cutters_clear_sums) blend_band(b, key, BLEND_CLEAR);
    uint64_t band_lo, band_hi;
    plrt_blend_band(&b->keys, key, &band_lo, &band_hi);
    gr_window w;
    while (gr_reserve(c, 0, 1, &w) == GR_OK) {
        uint32_t n = gr_count(w.mem);
        const plrt_contrib *k = plrt_elems(w.mem);
        for (uint32_t i = 0; i < n; i++)
            if ((k[i].pixel >> b->keys.shift) < band_lo || (k[i].pixel >> b->keys.shift) >= band_hi) {
                bad_pixel(c, k[i].pixel, band_lo, band_hi);
                return;
            }
        for (uint32_t i = 0; i < n; i++) {
            int64_t *a = accum + (size_t)k[i].pixel * 3;
            a[0] += plrt_to_fixed(k[i].v[0]);
            a[1] += plrt_to_fixed(k[i].v[1]);
            a[2] += plrt_to_fixed(k[i].v[2]);
        }
        gr_commit(c, 0, 1);
    }
    blend_band(b, key, BLEND_ENCODE);
}

/* ---- the registry -------------------------------------------------------------------------- */

static const cp_format formats[] = {
    {"rt.samples", "sample positions", GR_COLLECTION, 0, PLRT_HDR, sizeof(plrt_sample), 64, RT_PACKET_MAX},
    {"rt.rays", "rays with pixel, depth, weight and (after intersection) hit", GR_COLLECTION, 0,
     PLRT_HDR, sizeof(plrt_ray), 64, RT_PACKET_MAX},
    {"rt.shadow-rays", "rays toward lights with the light's term", GR_COLLECTION, 0, PLRT_HDR,
     sizeof(plrt_shadow), 64, RT_PACKET_MAX},
    {"rt.contributions", "(pixel, RGB as floats) to add to the image", GR_COLLECTION, 0,
     PLRT_HDR, sizeof(plrt_contrib), 64, 1024},
};

static const cp_port tiler_ports[] = {{"out", GR_BIND_OUTPUT, "rt.sample-runs", NULL}};
static const cp_param tiler_params[] = {
    {"tile", CP_INT, "32", 1, PL_MAX_IMAGE_SIDE, "tile edge in pixels"},
    {"spp", CP_INT, "1", 1, PL_MAX_SPP, "samples per pixel (as the Sampler's)"},
    {"samples", CP_INT, "64", 1, RT_PACKET_MAX, "samples per run (the packet size of the stage that samples it)"},
    {"bands", CP_INT, "1", 1, 1 << 20, "replicated: copy k emits the tiles in pixel bands k, k + copies, ... of "
     "this many (a power of two; the rt.blend instances', so each copy's pixels are summed apart)"}};
static const cp_port sampler_ports[] = {{"in", GR_BIND_INPUT, "rt.sample-runs", NULL},
                                        {"out", GR_BIND_OUTPUT, "rt.samples", NULL}};
static const cp_param spp_params[] = {{"spp", CP_INT, "1", 1, PL_MAX_SPP, "samples per pixel (jittered, fixed seed)"}};
static const cp_port camera_ports[] = {{"in", GR_BIND_INPUT, "rt.samples", NULL},
                                       {"out", GR_BIND_OUTPUT, "rt.rays", NULL}};
static const cp_port primary_ports[] = {{"in", GR_BIND_INPUT, "rt.sample-runs", NULL},
                                        {"out", GR_BIND_OUTPUT, "rt.rays", "primary rays (with `trace`: and their hits)"}};
static const cp_param primary_params[] = {
    {"spp", CP_INT, "1", 1, PL_MAX_SPP, "samples per pixel (jittered, fixed seed)"},
    {"trace", CP_BOOL, "false", 0, 0, "also find the rays' closest hits (rt.intersect's work: bind out to Shade's input)"},
    {"background", CP_BOOL, "false", 0, 0, "with trace and spp 1, in a graph whose cutter clears the sums (rt.tiler): "
     "add each miss's background to its pixel's sums here, as rt.shade would, instead of sending it on (out must go to "
     "rt.shade); otherwise misses go on as without it"}};
static const cp_port intersect_ports[] = {{"in", GR_BIND_INPUT, "rt.rays", NULL},
                                          {"out", GR_BIND_INPLACE, "rt.rays", "the input with its hits"}};
static const cp_port shade_ports[] = {
    {"in", GR_BIND_INPUT, "rt.rays", "rays with hits"},
    {"reflections", GR_BIND_PUSH, "rt.rays", "mirror rays and rays on through blended surfaces (the cycle "
     "back to intersection)"},
    {"shadow", GR_BIND_PUSH, "rt.shadow-rays", "one per light facing the surface"},
    {"out", GR_BIND_PUSH, "rt.contributions", "direct term or background, keyed by pixel (plrt_blend_key)"}};
static const cp_param shade_params[] = {
    {"bounces", CP_INT, "1", 0, PL_MAX_BOUNCES, "reflection depth"},
    {"min_weight", CP_FLOAT, "0.01", 0, 1, "drop reflections whose weight falls below"},
    {"ambient", CP_BOOL, "true", 0, 0, "add the ambient term (false: a stage such as AO adds it)"}};
static const cp_port shadow_ports[] = {
    {"in", GR_BIND_INPUT, "rt.shadow-rays", NULL},
    {"out", GR_BIND_PUSH, "rt.contributions", "unoccluded lights' terms, keyed by pixel (plrt_blend_key)"}};
static const cp_port blend_ports[] = {
    {"in", GR_BIND_INPUT, "rt.contributions", "a queue set of 2^n subqueues, one instance each"}};

/* The RGB sums per pixel, in PL_FIXED_ONE fixed point: never cleared by the frame (a
 * graph's tile cutters clear their tiles', else rt.blend its bands). */
static const cp_resource_type sums = {
    "sums", "RGB contributions per pixel in fixed point (24 fraction bits)", "3 x i64", 24,
    CP_PER_PIXEL, false, CP_CLEAR_NONE, NULL, NULL, NULL, NULL};
static const cp_resource_type sample_sums = {
    "sample-sums", "sums per sample slot (the hybrid's multisampling, msaa > 1: rt.blend)", "3 x i64",
    24, CP_PER_SAMPLE, false, CP_CLEAR_NONE, NULL, NULL, NULL, NULL};

#define SPP_USE PL_AGREED_USE("spp")
static const cp_resource_use tiler_uses[] = {
    {"sums", CP_OVERWRITES, "clears each tile's before handing the tile on"}, SPP_USE};
static const cp_resource_use spp_uses[] = {SPP_USE};
static const cp_resource_use primary_uses[] = {
    {"bvh", CP_READS, "with `trace`"},
    {"sums", CP_WRITES, "with `background`: adds its misses' background"}, SPP_USE};
static const cp_resource_use trace_uses[] = {
    {"bvh", CP_READS, NULL}, {"bvh.opencl", CP_READS, "placed on the OpenCL device"}};
static const cp_resource_use shade_uses[] = {
    {"textures", CP_READS, "the shading samples the albedo maps (level of detail from the ray cones)"},
    {"shading.opencl", CP_READS, "placed on the OpenCL device"},
    {"surface", CP_WRITES, "the camera ray's first hit per pixel, when a float output reads it"}};
static const cp_resource_use blend_uses[] = {
    {"sums", CP_READS | CP_WRITES, "adds the contributions (clears its band without a tile cutter)"},
    {"sample-sums", CP_READS | CP_WRITES, "with msaa > 1"},
    {"color", CP_OVERWRITES, "every pixel of the region, from the sums"},
    {"sample-visibility", CP_READS, "with msaa > 1: which fragment each sample belongs to"},
    {"hdr-color", CP_OVERWRITES, "the sums as floats (with msaa > 1 the samples' mean), when an "
     "image-space stage or a float output reads them"},
    PL_AGREED_USE("msaa")};
static const cp_param blend_params[] = {
    {"msaa", CP_INT, "1", 1, PL_MAX_MSAA, "sum slots per pixel, resolved from the samples' bytes "
     "(the hybrid's multisampling: 1, 4 or 8)"}};

static const cp_stage_type stages[] = {
    {"rt.tiler", "cuts the image into tiles and each tile into runs of samples (one per "
     "Sampler packet)", GR_THREAD, false, tiler_ports, 1, tiler_params, 4, tiler_main,
     tiler_create, NULL, free, tiler_uses, 2},
    {"rt.sampler", "sample positions of one run, 8x8-pixel blocks per packet", GR_SHADER, false,
     sampler_ports, 2, spp_params, 1, sampler_main, sampler_create, NULL, free, spp_uses, 1},
    {"rt.camera", "primary rays through the sample positions", GR_SHADER, false, camera_ports, 2,
     spp_params, 1, camera_main, camera_create, NULL, free, spp_uses, 1},
    {"rt.primary", "rt.sampler and rt.camera in one stage: primary rays of one run of samples",
     GR_SHADER, false, primary_ports, 2, primary_params, 3, primary_main, primary_create, NULL, free,
     primary_uses, 3},
    {"rt.blend", "sums contributions per pixel (fixed point), an instance per subqueue, then "
     "makes the image", GR_THREAD, CP_PER_EVERY_SUBQUEUE, blend_ports, 1, blend_params, 1, blend_main,
     blend_create, NULL, free, blend_uses, 6},
};

/* rt.intersect, rt.shadow (trace_opencl.c) and rt.shade (shade_opencl.c) bring OpenCL kernels. */
static const cp_kernel_stage_type kernel_stages[] = {
    {{"rt.intersect", "closest hits (packet traversal)", GR_SHADER, false,
      intersect_ports, 2, NULL, 0, intersect_main, trace_create, NULL, free, trace_uses, 2},
     PLRT_INTERSECT_KERNEL},
    {{"rt.shadow", "occlusion tests; unoccluded lights add their term", GR_SHADER, false,
      shadow_ports, 2, NULL, 0, shadow_main, trace_create, NULL, free, trace_uses, 2},
     PLRT_SHADOW_KERNEL},
    {{"rt.shade", "Blinn-Phong at hits (albedo textures by ray cones): ambient now, shadow rays per "
      "light, reflections, rays on through blended surfaces", GR_SHADER, false, shade_ports, 4,
      shade_params, 3, shade_main, shade_create, NULL, shade_destroy, shade_uses, 3},
     {.file = PLRT_SHADE_CL, .source = cl_pipelines_raytrace_opencl_shade, .name = "rt_shade",
      .result_bytes = PLRT_SHADE_RESULT_MAX, .results_of = shade_results_of,
      .spill_bytes = sizeof(plrt_shade_spill), .spills = plrt_shade_spills,
      .buffers = shade_kernel_buffers,
      .unsupported = shade_kernel_unsupported, .emit = shade_emit,
      .reads_resident = shade_reads_resident, .set_pushes = shade_set_pushes,
      .appends = {[PLRT_APPEND_SHADOW] = {SHADE_SHADOW, sizeof(rt_ray), shade_most_shadows},
                  [PLRT_APPEND_REFLECT] = {SHADE_REFLECT, sizeof(rt_ray), NULL}},
      .nappends = 2}},
};

int pl_register_raytrace_resources(cp_registry *r, char err[CP_ERR_MAX])
{
    return cp_register_resource(r, &sums, err) || cp_register_resource(r, &sample_sums, err) ||
           cp_register_resource(r, &plrt_device_bvh_resource, err) ||
           cp_register_resource(r, &plrt_device_shading_resource, err) ? -1 : 0;
}

int pl_register_raytrace_stages(cp_registry *r, char err[CP_ERR_MAX])
{
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++)
        if (cp_register_format(r, &formats[i], err)) return -1;
    for (size_t i = 0; i < sizeof stages / sizeof *stages; i++)
        if (cp_register_stage(r, &stages[i], err)) return -1;
    for (size_t i = 0; i < sizeof kernel_stages / sizeof *kernel_stages; i++)
        if (cp_register_kernel_stage(r, &kernel_stages[i], err)) return -1;
    return 0;
}
