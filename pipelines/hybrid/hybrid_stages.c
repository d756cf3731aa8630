/* hybrid_stages.c — the stage that joins the raster front end to the ray tracer in the
 * hybrid graph (pipelines/graphs/hybrid.graph):
 *
 *   hybrid.visible (Shader): runs of samples -> rays with their primary hits, taken from
 *   the visibility buffer the depth-only raster pass wrote (raster.zom) instead of
 *   traversing the BVH. For a pixel the raster pass saw primitive P, the camera ray is
 *   tested against P alone with the ray tracer's own watertight triangle test, whose
 *   answer is bit-identical to the BVH traversal's for that triangle (tri_intersect.h);
 *   so wherever rasterization and ray casting agree on visibility, the hit, and hence the
 *   shading of rt.shade and every contribution, are the ray tracer's exactly. A ray that
 *   misses P (a jittered sample off the pixel centre, an edge the two methods resolve
 *   differently) is traced through the BVH like the ray tracer's. */
#include "pipelines/stages.h"

#include "pipelines/raytrace/packets.h"
#include "pipelines/raytrace/sums.h"
#include "pipelines/raytrace/sample_runs.h"
#include "raytracer/bvh_traverse.h"
#include "raytracer/tri_each.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct visible_state {
    const pl_frame *frame;
    const uint32_t *vis;
    const sc_geometry *geo;
    const rt_bvh *bvh;
    int spp;
    float weight, spread;                 /* spread: the camera rays' cone (plrt_camera_spread) */
    uint32_t packet;
    _Atomic(uint64_t) *from_raster, *traced;
    plrt_misses misses;
} visible_state;

static void *visible_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    pl_frame *f = i->frame;
    visible_state *s = malloc(sizeof *s);
    int spp = pl_samples_per_pixel(i);
    if (!s) {
        snprintf(err, CP_ERR_MAX, "out of memory");
        return NULL;
    }
    *s = (visible_state){f, NULL, f->data->geo, NULL, spp, 1.0f / (float)spp, plrt_camera_spread(f),
                         cp_port_elements(i, "out"), pl_frame_counter(f, "primary_hits_from_raster"),
                         pl_frame_counter(f, "rays.primary"), {0}};
    bool counted = s->from_raster && s->traced;
    if (!counted) snprintf(err, CP_ERR_MAX, "out of memory (counters)");
    if (counted && (s->vis = pl_frame_use(i, "visibility", err)) &&
        (s->bvh = pl_frame_use(i, "bvh", err)) &&
        plrt_misses_init(&s->misses, i, cp_bool(i, "background"), err))
        return s;
    free(s);
    return NULL;
}

/* The rays of a packet that the raster pass saw a primitive for, tested against it. */
typedef struct own_tests {
    rt_each_rays rays;
    uint32_t ray_of[RT_EACH_MAX];         /* lane -> index in the packet */
} own_tests;

/* Rays that miss their primitive (a jittered sample off the pixel centre, an edge the
 * two methods resolve differently) are traced like the ray tracer's. Returns how many
 * hits came from the raster pass. */
static uint32_t run_own_tests(const visible_state *s, own_tests *o, plrt_ray *rays)
{
    float t[RT_EACH_MAX], u[RT_EACH_MAX], v[RT_EACH_MAX];
    uint8_t hit[RT_EACH_MAX];
    rt_intersect_each(s->geo->positions, s->geo->indices, &o->rays, t, u, v, hit);
    uint32_t raster = 0;
    for (int k = 0; k < o->rays.n; k++) {
        plrt_ray *r = &rays[o->ray_of[k]];
        if (hit[k]) r->hit = (rt_hit){t[k], u[k], v[k], o->rays.prim[k]};
        else rt_intersect1(s->bvh, &r->ray, &r->hit);
        raster += hit[k];
    }
    o->rays.n = 0;
    return raster;
}

/* Sample smp's primary ray. Where nothing was rasterized the ray is not made at all
 * (Shade reads only the weight of a miss); elsewhere it joins the tests against the
 * visible primitive. Returns 1 for a background sample (its miss is the raster's). */
static uint32_t primary_ray(const visible_state *s, const plrt_sample *smp, plrt_ray *r,
                            uint32_t index, own_tests *o)
{
    const pl_frame *f = s->frame;
    uint32_t seen = s->vis[smp->pixel];
    if (seen == 0) {
        memset(&r->ray, 0, sizeof r->ray);
        r->hit = (rt_hit){0, 0, 0, RT_NO_HIT};
        return 1;
    }
    memcpy(r->ray.org, f->camera.eye, sizeof r->ray.org);
    sc_camera_ray(&f->camera, f->width, f->height, smp->px, smp->py, r->ray.dir);
    r->ray.tmin = 0.0f;
    r->ray.tmax = INFINITY;
    int k = o->rays.n++;
    for (int a = 0; a < 3; a++) o->rays.dir[a][k] = r->ray.dir[a];
    o->rays.prim[k] = seen - 1;
    o->ray_of[k] = index;
    return 0;
}

/* A run's samples (sample_runs.h, as rt.sampler writes them) are made here, on the
 * stack: one task per packet instead of a Sampler's and this stage's. */
static void visible_main(gr_ctx *c)
{
    visible_state *s = gr_user(c);
    const plrt_sample_run *run = gr_input(c, NULL);
    void *out = gr_output(c, 0);
    plrt_sample smp[RT_PACKET_MAX];
    gr_assert(c, run->count <= s->packet);
    uint32_t n = run->count <= s->packet ? plrt_run_samples(run, s->frame->width, s->spp, smp) : 0;
    gr_assert(c, n == run->count);        /* a Z-Tile with another spp ran past the tile */
    uint32_t raster = 0;
    plrt_ray *rays = plrt_elems(out);
    own_tests o;
    o.rays.n = 0;
    memcpy(o.rays.org, s->frame->camera.eye, sizeof o.rays.org);
    o.rays.tmin = 0.0f;
    o.rays.tmax = INFINITY;
    for (uint32_t i = 0; i < n; i++) {
        plrt_ray *r = &rays[i];
        r->weight[0] = r->weight[1] = r->weight[2] = s->weight;
        r->pixel = smp[i].pixel;
        r->depth = 0;
        r->cone = (rt_cone){0.0f, s->spread};   /* the camera ray's: Shade widens it to the hit */
        r->layers = 0;
        raster += primary_ray(s, &smp[i], r, i, &o);
        if (o.rays.n == RT_EACH_MAX) raster += run_own_tests(s, &o, rays);
    }
    if (o.rays.n) raster += run_own_tests(s, &o, rays);
    gr_set_count(out, n);
    atomic_fetch_add_explicit(s->from_raster, raster, memory_order_relaxed);
    atomic_fetch_add_explicit(s->traced, n - raster, memory_order_relaxed);
    plrt_drop_misses(c, 0, out, &s->misses, s->spp, rays, n);
}

static const cp_port visible_ports[] = {
    {"in", GR_BIND_INPUT, "rt.sample-runs", "runs of samples (raster.ztile's, once a tile is final)"},
    {"out", GR_BIND_OUTPUT, "rt.rays", "primary rays with their hits, ready to shade"}};
static const cp_param visible_params[] = {
    {"spp", CP_INT, "1", 1, PL_MAX_SPP, "samples per pixel (the sampler's)"},
    {"background", CP_BOOL, "false", 0, 0, "with spp 1, after raster.ztile (which clears the sums): add each miss's "
     "background to its pixel's sums here, as rt.shade would, instead of sending it on (out must go to rt.shade); "
     "otherwise misses go on as without it"}};

static const cp_resource_use visible_uses[] = {
    {"visibility", CP_READS, "raster.ztile's visible primitives"},
    {"bvh", CP_READS, "traces where the raster pass missed"},
    {"sums", CP_WRITES, "with `background`: adds its misses' background"}};

static const cp_stage_type stages[] = {
    {"hybrid.visible", "primary hits from the visibility buffer of a depth-only raster pass "
     "(traced where it misses)", GR_SHADER, false, visible_ports, 2, visible_params, 2,
     visible_main, visible_create, NULL, free, visible_uses, 3},
};

int pl_register_hybrid_stages(cp_registry *r, char err[CP_ERR_MAX])
{
    for (size_t i = 0; i < sizeof stages / sizeof *stages; i++)
        if (cp_register_stage(r, &stages[i], err)) return -1;
    return 0;
}
