/* hybrid_stages.c — the stage that joins the raster front end to the ray tracer in the
 * hybrid graph (pipelines/graphs/hybrid.graph):
 *
 *   hybrid.visible (Shader): sample positions -> rays with their primary hits, taken from
 *   the visibility buffer the depth-only raster pass wrote (raster.zom) instead of
 *   traversing the BVH. For a pixel the raster pass saw primitive P, the camera ray is
 *   tested against P alone with the ray tracer's own watertight triangle test, whose
 *   answer is bit-identical to the BVH traversal's for that triangle (tri_intersect.h);
 *   so wherever rasterization and ray casting agree on visibility, the hit, and hence the
 *   shading of rt.shade and every contribution, are the ray tracer's exactly. A ray that
 *   misses P (a jittered sample off the pixel centre, an edge the two methods resolve
 *   differently) is traced through the BVH like the ray tracer's. */
#include "pipelines/stages.h"

#include "pipelines/raytrace_packets.h"
#include "raytracer/bvh_traverse.h"
#include "raytracer/tri_intersect.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct visible_state {
    const pl_frame *frame;
    const uint32_t *vis;
    const sc_geometry *geo;
    const rt_bvh *bvh;
    float weight;
    _Atomic(uint64_t) *from_raster, *traced;
} visible_state;

static void *visible_create(const cp_stage_init *i, char err[CP_ERR_MAX])
{
    pl_frame *f = i->frame;
    visible_state *s = malloc(sizeof *s);
    int spp = f->aov == SH_AOV_COLOR ? (int)cp_int(i, "spp") : 1;
    if (s) *s = (visible_state){f, pl_frame_vis(f), f->data->geo, pl_frame_bvh(f), 1.0f / (float)spp,
                                pl_frame_counter(f, "primary_hits_from_raster"),
                                pl_frame_counter(f, "rays.primary")};
    if (!s || !s->vis || !s->bvh || !s->from_raster || !s->traced) {
        free(s);
        snprintf(err, CP_ERR_MAX, "out of memory (visibility buffer, BVH or counters)");
        return NULL;
    }
    return s;
}

/* The hit of ray r on primitive prim alone; false when it misses it. */
static bool hit_on(const visible_state *s, const rt_ray *r, uint32_t prim, rt_hit *h)
{
    const uint32_t *idx = s->geo->indices + 3 * (size_t)prim;
    const float *p = s->geo->positions;
    rt_wtray w;
    rt_wtray_init(&w, r->org, r->dir);
    if (!rt_tri_intersect(&w, p + 3 * (size_t)idx[0], p + 3 * (size_t)idx[1],
                          p + 3 * (size_t)idx[2], r->tmin, r->tmax, &h->t, &h->u, &h->v))
        return false;
    h->prim = prim;
    return true;
}

/* The primary hit of sample smp: from the visibility buffer, else traced. Returns true
 * when it came from the raster pass. Where nothing was rasterized the ray is not made
 * at all: Shade reads only the weight of a miss. */
static bool primary_hit(const visible_state *s, const rtp_sample *smp, rtp_ray *r)
{
    const pl_frame *f = s->frame;
    uint32_t seen = s->vis[smp->pixel];
    if (seen == 0) {
        memset(&r->ray, 0, sizeof r->ray);
        r->hit = (rt_hit){0, 0, 0, RT_NO_HIT};
        return true;
    }
    memcpy(r->ray.org, f->camera.eye, sizeof r->ray.org);
    sc_camera_ray(&f->camera, f->width, f->height, smp->px, smp->py, r->ray.dir);
    r->ray.tmin = 0.0f;
    r->ray.tmax = INFINITY;
    if (hit_on(s, &r->ray, seen - 1, &r->hit)) return true;
    rt_intersect1(s->bvh, &r->ray, &r->hit);
    return false;
}

static void visible_main(gr_ctx *c)
{
    visible_state *s = gr_user(c);
    void *in = gr_input(c, NULL), *out = gr_output(c, 0);
    uint32_t n = gr_count(in), raster = 0;
    const rtp_sample *smp = rtp_elems(in);
    rtp_ray *rays = rtp_elems(out);
    for (uint32_t i = 0; i < n; i++) {
        rtp_ray *r = &rays[i];
        r->weight[0] = r->weight[1] = r->weight[2] = s->weight;
        r->pixel = smp[i].pixel;
        r->depth = 0;
        raster += primary_hit(s, &smp[i], r);
    }
    gr_set_count(out, n);
    atomic_fetch_add_explicit(s->from_raster, raster, memory_order_relaxed);
    atomic_fetch_add_explicit(s->traced, n - raster, memory_order_relaxed);
}

static const cp_port visible_ports[] = {
    {"in", GR_BIND_INPUT, "rt.samples", NULL},
    {"out", GR_BIND_OUTPUT, "rt.rays", "primary rays with their hits, ready to shade"}};
static const cp_param visible_params[] = {
    {"spp", CP_INT, "1", 1, 4096, "samples per pixel (the sampler's)"}};

static const cp_stage_type stages[] = {
    {"hybrid.visible", "primary hits from the visibility buffer of a depth-only raster pass "
     "(traced where it misses)", GR_SHADER, false, visible_ports, 2, visible_params, 1,
     visible_main, visible_create, NULL, free},
};

int pl_register_hybrid_stages(cp_registry *r, char err[CP_ERR_MAX])
{
    for (size_t i = 0; i < sizeof stages / sizeof *stages; i++)
        if (cp_register_stage(r, &stages[i], err)) return -1;
    return 0;
}
