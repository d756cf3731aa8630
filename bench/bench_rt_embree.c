/* Comparison of our ray-tracing kernels with Intel Embree 3 on the bunny (or the scene
 * named as the argument: a built-in, .scene or mesh file, with its camera and first
 * light), 1 and 2 threads. Prints "name value unit"; ratios are ours / Embree; a
 * '# rt_isa' line names our kernels' instruction set (GRAMPS_ISA=baseline: SSE).
 *
 * Both sides trace the same pre-made rays (bench_rt_kernels.c, included below without its
 * main) in the same plain pthread loop: batches (8x8 tiles, 64 random rays) are handed to
 * threads CHUNK at a time. Embree traces with its own kernels, both ways it offers for
 * single-ray code: rtcIntersect1/rtcOccluded1 per ray and rtcIntersect16/rtcOccluded16 on
 * 16-ray slices of each batch; the faster of the two counts as "embree" (fair to Embree).
 * Our side uses packets (rt_intersect_packet/rt_occluded_packet, which fall back to single
 * rays for incoherent batches) and, for incoherent rays, single-ray traversal.
 * Embree scene: one triangle geometry, default build quality, default (non-robust) mode;
 * its BVH is built with threads=1 so the build times compare like with like.
 *
 * Built only when Embree 3 is installed (`make embree`; mk/embree.mk adds -lembree3);
 * otherwise it prints a note and exits. */
#if __has_include(<embree3/rtcore.h>)

#define BENCH_RT_NO_MAIN
#include "bench/bench_rt_kernels.c"

#include <embree3/rtcore.h>

#include "pipelines/frame_memory.h"
#include "pipelines/raytrace.h"

/* Embree 3's C headers declare these as plain structs. */
typedef struct RTCRay RTCRay;
typedef struct RTCHit RTCHit;
typedef struct RTCRayHit RTCRayHit;
typedef struct RTCRay16 RTCRay16;
typedef struct RTCRayHit16 RTCRayHit16;
typedef struct RTCIntersectContext RTCIntersectContext;

typedef struct embree {
    RTCDevice dev;
    RTCScene scene;
    double build_ms;
} embree;

static int embree_init(embree *e, const bmesh *m)
{
    e->dev = rtcNewDevice("threads=1");
    if (!e->dev) return -1;
    const double t0 = now_s();
    e->scene = rtcNewScene(e->dev);
    RTCGeometry g = rtcNewGeometry(e->dev, RTC_GEOMETRY_TYPE_TRIANGLE);
    float *v = rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3,
                                       3 * sizeof(float), m->nv);
    unsigned *ix = rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3,
                                           3 * sizeof(unsigned), m->nt);
    memcpy(v, m->pos, 3 * m->nv * sizeof *v);
    memcpy(ix, m->idx, 3 * m->nt * sizeof *ix);
    rtcCommitGeometry(g);
    rtcAttachGeometry(e->scene, g);
    rtcReleaseGeometry(g);
    rtcCommitScene(e->scene);
    e->build_ms = (now_s() - t0) * 1e3;
    return 0;
}

static void embree_free(embree *e)
{
    rtcReleaseScene(e->scene);
    rtcReleaseDevice(e->dev);
}

static struct RTCRayHit to_rayhit(const rt_ray *r)
{
    struct RTCRayHit rh;
    rh.ray.org_x = r->org[0];
    rh.ray.org_y = r->org[1];
    rh.ray.org_z = r->org[2];
    rh.ray.tnear = r->tmin;
    rh.ray.dir_x = r->dir[0];
    rh.ray.dir_y = r->dir[1];
    rh.ray.dir_z = r->dir[2];
    rh.ray.time = 0.0f;
    rh.ray.tfar = r->tmax;
    rh.ray.mask = UINT32_MAX;
    rh.ray.id = 0;
    rh.ray.flags = 0;
    rh.hit.geomID = RTC_INVALID_GEOMETRY_ID;
    rh.hit.primID = RTC_INVALID_GEOMETRY_ID;
    rh.hit.instID[0] = RTC_INVALID_GEOMETRY_ID;
    return rh;
}

static void emb_closest1(const void *ctx, const rt_ray *rays, int n, rt_hit *hits)
{
    RTCScene scene = (RTCScene)ctx;
    struct RTCIntersectContext ic;
    rtcInitIntersectContext(&ic);
    for (int i = 0; i < n; i++) {
        struct RTCRayHit rh = to_rayhit(&rays[i]);
        rtcIntersect1(scene, &ic, &rh);
        const int hit = rh.hit.geomID != RTC_INVALID_GEOMETRY_ID;
        hits[i] = (rt_hit){rh.ray.tfar, rh.hit.u, rh.hit.v, hit ? rh.hit.primID : RT_NO_HIT};
    }
}

static void emb_occluded1(const void *ctx, const rt_ray *rays, int n, uint8_t *occ)
{
    RTCScene scene = (RTCScene)ctx;
    struct RTCIntersectContext ic;
    rtcInitIntersectContext(&ic);
    for (int i = 0; i < n; i++) {
        struct RTCRayHit rh = to_rayhit(&rays[i]);
        rtcOccluded1(scene, &ic, &rh.ray);
        occ[i] = rh.ray.tfar == -INFINITY;
    }
}

/* Fills lanes [0, m) of a 16-ray packet; the rest are switched off in valid. */
static void fill16(struct RTCRayHit16 *p, int valid[16], const rt_ray *rays, int m)
{
    for (int k = 0; k < 16; k++) {
        valid[k] = k < m ? -1 : 0;
        const rt_ray *r = &rays[k < m ? k : 0];
        p->ray.org_x[k] = r->org[0];
        p->ray.org_y[k] = r->org[1];
        p->ray.org_z[k] = r->org[2];
        p->ray.tnear[k] = r->tmin;
        p->ray.dir_x[k] = r->dir[0];
        p->ray.dir_y[k] = r->dir[1];
        p->ray.dir_z[k] = r->dir[2];
        p->ray.time[k] = 0.0f;
        p->ray.tfar[k] = r->tmax;
        p->ray.mask[k] = UINT32_MAX;
        p->ray.id[k] = (unsigned)k;
        p->ray.flags[k] = 0;
        p->hit.geomID[k] = RTC_INVALID_GEOMETRY_ID;
        p->hit.instID[0][k] = RTC_INVALID_GEOMETRY_ID;
    }
}

static void emb_closest16(const void *ctx, const rt_ray *rays, int n, rt_hit *hits)
{
    RTCScene scene = (RTCScene)ctx;
    struct RTCIntersectContext ic;
    rtcInitIntersectContext(&ic);
    struct RTCRayHit16 p __attribute__((aligned(64)));
    int valid[16] __attribute__((aligned(64)));
    for (int i = 0; i < n; i += 16) {
        const int m = n - i < 16 ? n - i : 16;
        fill16(&p, valid, rays + i, m);
        rtcIntersect16(valid, scene, &ic, &p);
        for (int k = 0; k < m; k++) {
            const int hit = p.hit.geomID[k] != RTC_INVALID_GEOMETRY_ID;
            hits[i + k] = (rt_hit){p.ray.tfar[k], p.hit.u[k], p.hit.v[k],
                                   hit ? p.hit.primID[k] : RT_NO_HIT};
        }
    }
}

static void emb_occluded16(const void *ctx, const rt_ray *rays, int n, uint8_t *occ)
{
    RTCScene scene = (RTCScene)ctx;
    struct RTCIntersectContext ic;
    rtcInitIntersectContext(&ic);
    struct RTCRayHit16 p __attribute__((aligned(64)));
    int valid[16] __attribute__((aligned(64)));
    for (int i = 0; i < n; i += 16) {
        const int m = n - i < 16 ? n - i : 16;
        fill16(&p, valid, rays + i, m);
        rtcOccluded16(valid, scene, &ic, &p.ray);
        for (int k = 0; k < m; k++) occ[i + k] = p.ray.tfar[k] == -INFINITY;
    }
}

/* Share of rays on which two hit arrays agree on the primitive (sanity check). */
static double agreement(const rt_hit *a, const rt_hit *b, size_t n)
{
    size_t same = 0;
    for (size_t i = 0; i < n; i++) same += a[i].prim == b[i].prim;
    return n ? (double)same / (double)n : 1.0;
}

static void check_agreement(const tracer *ours, const tracer *emb, rayset *s)
{
    rt_hit *mine = malloc(s->nrays * sizeof *mine);
    const job jo = {ours, s, 0}, je = {emb, s, 0};
    run_batches(&jo, 0, s->nbatches);
    memcpy(mine, s->hits, s->nrays * sizeof *mine);
    run_batches(&je, 0, s->nbatches);
    printf("# primary rays with the same primitive as Embree: %.4f%%\n",
           100.0 * agreement(mine, s->hits, s->nrays));
    free(mine);
}

static const char *scene_name = "bunny";   /* suffix of every figure's name */

static void report(const char *what, int threads, double ours, double e1, double e16)
{
    const double emb = e1 > e16 ? e1 : e16;
    const char *sn = scene_name;
    printf("rt_%s_%dt_%s %.2f Mrays/s\n", what, threads, sn, ours);
    printf("embree1_%s_%dt_%s %.2f Mrays/s\n", what, threads, sn, e1);
    printf("embree16_%s_%dt_%s %.2f Mrays/s\n", what, threads, sn, e16);
    printf("ratio_%s_%dt_%s %.3f ratio\n", what, threads, sn, ours / emb);
}

static double best2(double a, double b) { return a > b ? a : b; }

/* The whole GRAMPS ray-tracing graph (sampling, shading, push coalescing, blending
 * included) on the same workload, against Embree's plain loop. */
static void graph_vs_embree(const char *source, int threads, double embree_rate)
{
    sc_scene *s;
    sc_geometry g;
    char err[SC_ERR_MAX];
    if (sc_load(source, &s, err) || sc_flatten(s, &g, err)) { printf("# %s\n", err); return; }
    rt_bvh *bvh = rt_bvh_build(g.positions, g.indices, g.ntriangles, NULL);
    rtp_config c;
    rtp_config_default(&c);
    c.workers = (unsigned)threads;
    uint8_t *img = malloc((size_t)c.width * c.height * 4);
    double best = 0;
    for (int rep = 0; rep < 3; rep++) {
        rtp_counts n;
        double t0 = now_s();
        gr_graph *gg = rtp_render(s, &g, bvh, &c, img, &n, err);
        double t = now_s() - t0;
        gr_graph_destroy(gg);
        double rate = (double)(n.primary + n.shadow + n.secondary) / t / 1e6;
        if (gg && rate > best) best = rate;
    }
    printf("rt_graph_thesis_%dt_%s %.2f Mrays/s\n", threads, scene_name, best);
    printf("ratio_graph_thesis_%dt_%s %.3f ratio\n", threads, scene_name, best / embree_rate);
    free(img);
    rt_bvh_free(bvh);
    sc_geometry_free(&g);
    sc_free(s);
}

static void compare(bench_scene *b, const tracer *pk, const tracer *sg, const tracer *e1,
                    const tracer *e16, int threads)
{
    report("primary", threads, rate_job(pk, &b->prim64, 0, threads),
           rate_job(e1, &b->prim64, 0, threads), rate_job(e16, &b->prim64, 0, threads));
    report("shadow", threads, rate_job(pk, &b->shadow, 1, threads),
           rate_job(e1, &b->shadow, 1, threads), rate_job(e16, &b->shadow, 1, threads));
    report("random", threads, best2(rate_job(sg, &b->random, 0, threads), rate_job(pk, &b->random, 0, threads)),
           rate_job(e1, &b->random, 0, threads), rate_job(e16, &b->random, 0, threads));
    thesis w = {pk, &b->mesh, &b->cam, {b->light[0], b->light[1], b->light[2]}, b->eps};
    const double ours = rate_thesis(&w, threads);
    w.tr = e1;
    const double r1 = rate_thesis(&w, threads);
    w.tr = e16;
    const double r16 = rate_thesis(&w, threads);
    report("thesis", threads, ours, r1, r16);
    graph_vs_embree(b->source, threads, r1 > r16 ? r1 : r16);
}

int main(int argc, char **argv)
{
    pl_keep_freed_memory();           /* frames reuse memory, as a renderer would */
    if (argc > 2 || (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))) {
        printf("usage: bench_rt_embree [SCENE]   (default bunny: " SCENES "bunny.obj with its "
               "README camera; or a built-in, .scene or mesh file)\n");
        return argc > 2 ? 2 : 0;
    }
    bench_scene b;
    if (scene_load(&b, argc == 2 ? argv[1] : NULL) != 0) return 1;
    scene_name = b.name;
    rt_bvh *bvh = rt_bvh_build(b.mesh.pos, b.mesh.idx, b.mesh.nt, NULL);
    embree e;
    if (embree_init(&e, &b.mesh) != 0) {
        printf("# embree device failed\n");
        return 0;
    }
    print_isa(bvh);
    printf("rt_build_%s %.2f ms\n", b.name, rt_bvh_get_stats(bvh)->build_ms);
    printf("embree_build_1t_%s %.2f ms\n", b.name, e.build_ms);
    const tracer pk = {"packet", our_closest_packet, our_occluded_packet, bvh};
    const tracer sg = {"single", our_closest_single, our_occluded_single, bvh};
    const tracer e1 = {"embree1", emb_closest1, emb_occluded1, e.scene};
    const tracer e16 = {"embree16", emb_closest16, emb_occluded16, e.scene};
    scene_rays(&b, &pk);
    check_agreement(&pk, &e1, &b.prim64);
    for (int threads = 1; threads <= 2; threads++) compare(&b, &pk, &sg, &e1, &e16, threads);
    scene_free(&b);
    embree_free(&e);
    rt_bvh_free(bvh);
    return 0;
}

#else

#include <stdio.h>

int main(void)
{
    printf("# embree not installed (make embree)\n");
    return 0;
}

#endif
