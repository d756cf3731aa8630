/* primary_hits.c — primary hits from the depth pass's visibility buffer (see the header). */
#include "pipelines/hybrid/primary_hits.h"

#include "pipelines/raytrace/sample_runs.h"
#include "pipelines/raytrace/sums.h"
#include "raytracer/bvh_traverse.h"
#include "raytracer/packet.h"
#include "raytracer/tri_each.h"

#include <math.h>
#include <string.h>

bool plh_primary_init(plh_primary *p, const cp_stage_init *i, const char *port, int msaa,
                      char err[CP_ERR_MAX])
{
    pl_frame *f = i->frame;
    int spp = pl_samples_per_pixel(i);
    *p = (plh_primary){f, NULL, f->data->geo, NULL, spp, 1.0f / (float)spp, plrt_camera_spread(f),
                       cp_port_elements(i, port), {NULL, NULL}, {NULL, NULL}};
    if (!pl_agree_spp(i, err)) return false;    /* p made first: the caller frees it */
    const bool counted = plh_tally_init(&p->from_raster, f, "primary_hits_from_raster");
    if (!plh_tally_init(&p->traced, f, "rays.primary") || !counted) {
        snprintf(err, CP_ERR_MAX, "out of memory (counters)");
        return false;
    }
    return (p->vis = pl_frame_use(i, pl_visibility_name(msaa), err)) && (p->bvh = pl_frame_use(i, "bvh", err));
}

void plh_primary_fold(plh_primary *p)
{
    plh_tally_fold(&p->from_raster);
    plh_tally_fold(&p->traced);
}

void plh_primary_free(plh_primary *p)
{
    plh_tally_free(&p->from_raster);
    plh_tally_free(&p->traced);
}

bool plh_miss_sums_init(plh_miss_sums *m, const cp_stage_init *i, const plh_primary *p, bool asked,
                        char err[CP_ERR_MAX])
{
    const pl_frame *f = p->frame;
    *m = (plh_miss_sums){NULL, {0, 0, 0}};
    if (!asked || p->spp != 1 || !plrt_cutters_clear_sums(i)) return true;
    const float *background = pl_frame_ray_env(i->frame)->background;
    for (int ch = 0; ch < 3 && f->aov == SH_AOV_COLOR; ch++) m->add[ch] = plrt_to_fixed(p->weight * background[ch]);
    return (m->sums = pl_frame_use(i, plrt_sums_name(f->samples), err)) != NULL;
}

/* The rays of a packet that the raster pass saw a primitive for, tested against it. */
typedef struct own_tests {
    rt_each_rays rays;
    uint32_t ray_of[RT_EACH_MAX];         /* lane -> index in the packet */
} own_tests;

/* Rays that miss their primitive are traced like the ray tracer's. Returns how many
 * hits came from the raster pass. */
static uint32_t run_own_tests(const plh_primary *p, own_tests *o, plrt_ray *rays)
{
    float t[RT_EACH_MAX], u[RT_EACH_MAX], v[RT_EACH_MAX];
    uint8_t hit[RT_EACH_MAX];
    rt_intersect_each(p->geo->positions, p->geo->indices, &o->rays, t, u, v, hit);
    uint32_t raster = 0;
    for (int k = 0; k < o->rays.n; k++) {
        plrt_ray *r = &rays[o->ray_of[k]];
        if (hit[k]) r->hit = (rt_hit){t[k], u[k], v[k], o->rays.prim[k]};
        else rt_intersect1(p->bvh, &r->ray, &r->hit);
        raster += hit[k];
    }
    o->rays.n = 0;
    return raster;
}

/* Whether pixel (x, y) and its eight neighbours all lie in tile t and saw the same at
 * their centres, primitive seen - 1 (seen 0: nothing). Only then may a jittered sample
 * of the pixel take its hit from that primitive, or be a miss: a nearer surface whose
 * edge passes between the sample and the pixel's centre covers the centre of a
 * neighbour unless it is thinner than a pixel there, so the neighbours differ. The
 * tile's pixels are final (Z-Tile folded it before cutting its runs); those of other
 * tiles may not be yet, so a pixel on the tile's border is never the same all around
 * (and the answer does not depend on the order the tiles are folded in). */
static bool same_all_around(const plh_primary *p, const plrt_tile *t, uint32_t pixel, uint32_t seen)
{
    const uint32_t width = (uint32_t)p->frame->width;
    const int x = (int)(pixel % width), y = (int)(pixel / width);
    if (x == t->x0 || y == t->y0 || x + 1 == t->x1 || y + 1 == t->y1) return false;
    for (int dy = -1; dy <= 1; dy++) {
        const uint32_t *row = &p->vis[(size_t)(y + dy) * width + (size_t)x];
        if (row[-1] != seen || row[0] != seen || row[1] != seen) return false;
    }
    return true;
}

/* Camera rays to trace through the BVH, as one packet once the run's samples are made
 * (rt_intersect_packet: the hits are rt_intersect1's, the traversal the ray tracer's
 * for its camera rays). */
typedef struct to_trace {
    rt_ray rays[RT_PACKET_MAX];
    uint32_t ray_of[RT_PACKET_MAX];       /* -> index in the packet */
    int n;
} to_trace;

static void trace_all(const plh_primary *p, to_trace *tr, plrt_ray *rays)
{
    if (tr->n == 0) return;
    rt_hit hits[RT_PACKET_MAX];
    rt_intersect_packet(p->bvh, tr->rays, tr->n, hits, NULL);
    for (int k = 0; k < tr->n; k++) rays[tr->ray_of[k]].hit = hits[k];
}

/* Sample smp's primary ray, the raster pass having seen primitive seen - 1 at its
 * pixel's centre (0: none). With one sample per pixel the sample is that centre: where
 * nothing was rasterized the ray is not made at all (Shade reads only the weight of a
 * miss), elsewhere it joins the tests against the visible primitive. With more, a
 * jittered sample does the same (its ray made, as a miss) only where its pixel is the
 * same all around (same_all_around); elsewhere it may meet a nearer surface than its
 * centre's, or one where its centre saw none, so its ray is traced as the ray tracer's
 * (tr). Returns 1 for a background sample (its miss is the raster's). */
static uint32_t primary_ray(const plh_primary *p, const plrt_sample *smp, uint32_t seen, const plrt_tile *tile,
                            plrt_ray *r, uint32_t index, own_tests *o, to_trace *tr)
{
    const pl_frame *f = p->frame;
    if (seen == 0 && p->spp == 1) {
        memset(&r->ray, 0, sizeof r->ray);
        r->hit = (rt_hit){0, 0, 0, RT_NO_HIT};
        return 1;
    }
    memcpy(r->ray.org, f->camera.eye, sizeof r->ray.org);
    sc_camera_ray(&f->camera, f->width, f->height, smp->px, smp->py, r->ray.dir);
    r->ray.tmin = 0.0f;
    r->ray.tmax = INFINITY;
    if (p->spp > 1 && !same_all_around(p, tile, smp->pixel, seen)) {
        tr->rays[tr->n] = r->ray;
        tr->ray_of[tr->n++] = index;
        return 0;
    }
    if (seen == 0) {
        r->hit = (rt_hit){0, 0, 0, RT_NO_HIT};
        return 1;
    }
    int k = o->rays.n++;
    for (int a = 0; a < 3; a++) o->rays.dir[a][k] = r->ray.dir[a];
    o->rays.prim[k] = seen - 1;
    o->ray_of[k] = index;
    return 0;
}

/* A run's samples are made here, on the stack (as rt.sampler would): one task per
 * packet instead of a Sampler's and this one's. */
uint32_t plh_primary_hits(gr_ctx *c, const plh_primary *p, const plrt_sample_run *run,
                          const plh_miss_sums *misses, plrt_ray *rays)
{
    plrt_sample smp[RT_PACKET_MAX];
    const uint32_t n = plrt_run_samples_checked(c, run, p->packet, p->frame->width, p->frame->height,
                                                p->spp, smp);
    int64_t *sums = misses ? misses->sums : NULL;
    uint32_t raster = 0, made = 0;
    own_tests o;
    to_trace tr;
    tr.n = 0;
    o.rays.n = 0;
    memcpy(o.rays.org, p->frame->camera.eye, sizeof o.rays.org);
    o.rays.tmin = 0.0f;
    o.rays.tmax = INFINITY;
    for (uint32_t i = 0; i < n; i++) {
        const uint32_t seen = p->vis[smp[i].pixel];
        if (!seen && sums) {
            /* the sample's only term, on sums the cutter cleared: stored, not added
               (a store waits for no cache line) */
            memcpy(sums + (size_t)smp[i].pixel * 3, misses->add, sizeof misses->add);
            raster++;
            continue;
        }
        plrt_ray *r = &rays[made];
        r->weight[0] = r->weight[1] = r->weight[2] = p->weight;
        r->pixel = smp[i].pixel;
        r->depth = 0;
        r->cone = (rt_cone){0.0f, p->spread};   /* the camera ray's: Shade widens it to the hit */
        r->layers = 0;
        raster += primary_ray(p, &smp[i], seen, &run->tile, r, made++, &o, &tr);
        if (o.rays.n == RT_EACH_MAX) raster += run_own_tests(p, &o, rays);
    }
    if (o.rays.n) raster += run_own_tests(p, &o, rays);
    trace_all(p, &tr, rays);
    plh_tally_add(&p->from_raster, c, raster);
    plh_tally_add(&p->traced, c, n - raster);
    return made;
}
