/* Our ray tracer against Intel Embree 3 in Embree's best configuration, 1 and 2 threads
 * (--threads: any list of thread counts, with each one's speedup when 1 is among them),
 * on the bunny, the teapot and the dragon (a held-out mesh of the bunny's size), or the
 * scenes named as arguments (built-ins, .scene or mesh files). Prints "name value
 * unit"; ratios are ours / Embree's (frame times: below 1 is faster than Embree; rates:
 * above 1 is faster). A '# rt_isa' line names our kernels' instruction set
 * (GRAMPS_ISA=baseline: SSE).
 *
 * The frame (the figure that counts): the whole GRAMPS ray-tracing graph (plrt_render:
 * rays generated, traced, shaded, blended; primary + shadow + one mirror bounce + its
 * shadows, 1024x1024) against a renderer of the same frame on Embree written the way
 * Embree is fastest: the scene built with RTC_BUILD_QUALITY_HIGH (its build time is
 * reported apart), camera rays made inside the timed frame per 8x8 tile and traced as
 * four 16-ray packets of 4x4 pixels (rtcIntersect16 with the coherent flag), then the
 * tile's shadow rays and reflection rays packed 16 at a time (rtcOccluded16 /
 * rtcIntersect16 with valid masks, incoherent flag), shaded with our ray tracer's own
 * kernel (sh_ray_shade: same lights, materials, shadow and reflection rays), summed per
 * pixel and encoded to sRGB. Tiles are handed to the threads one at a time. The same
 * frame is also traced with Embree's ray streams (rtcIntersect1M / rtcOccluded1M, same
 * flags); the faster of the two is "embree". Each of the three frames runs in turn,
 * 5 times (--reps), and the best time counts ('#' lines give the range). --frames-only
 * skips the kernel rates (e.g. under callgrind, with --toggle-collect=embree_frame).
 *
 * Kernel rates (context for the frame): the pre-made rays of bench_rt_kernels.c
 * (included below without its main: primary 8x8 tiles, shadow rays, random rays) in the
 * same plain pthread loop, traced by our packet/single-ray kernels and by Embree's
 * rtcIntersect1 and rtcIntersect16 on the same HIGH-quality scene.
 *
 * Built only when Embree 3 is installed (`make embree`; mk/embree.mk adds -lembree3);
 * otherwise it prints a note and exits. */
#if __has_include(<embree3/rtcore.h>)

#define BENCH_RT_NO_MAIN
#include "bench/bench_rt_kernels.c"

#include <embree3/rtcore.h>

#include "bench/line_round_trip.h"
#include "bench/thread_list.h"
#include "pipelines/frame_memory.h"
#include "pipelines/kept_graph.h"
#include "pipelines/raytrace/raytrace.h"
#include "scenes/camera.h"
#include "shaders/color.h"
#include "shaders/ray_shading.h"

/* Embree 3's C headers declare these as plain structs. */
typedef struct RTCRay RTCRay;
typedef struct RTCHit RTCHit;
typedef struct RTCRayHit RTCRayHit;
typedef struct RTCRay16 RTCRay16;
typedef struct RTCRayHit16 RTCRayHit16;
typedef struct RTCIntersectContext RTCIntersectContext;

/* ---- Embree's scene ---------------------------------------------------------------- */

typedef struct embree {
    RTCDevice dev;
    RTCScene scene;
    double build_ms;
} embree;

/* One triangle geometry in a scene of the given build quality, default (non-robust)
 * mode; built with threads=1, so the build time compares with our single-threaded one. */
static int embree_init(embree *e, const float *pos, size_t nv, const uint32_t *idx, size_t nt,
                       enum RTCBuildQuality quality)
{
    e->dev = rtcNewDevice("threads=1");
    if (!e->dev) return -1;
    const double t0 = io_now_s();
    e->scene = rtcNewScene(e->dev);
    rtcSetSceneBuildQuality(e->scene, quality);
    RTCGeometry g = rtcNewGeometry(e->dev, RTC_GEOMETRY_TYPE_TRIANGLE);
    rtcSetGeometryBuildQuality(g, quality);
    float *v = rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_VERTEX, 0, RTC_FORMAT_FLOAT3,
                                       3 * sizeof(float), nv);
    unsigned *ix = rtcSetNewGeometryBuffer(g, RTC_BUFFER_TYPE_INDEX, 0, RTC_FORMAT_UINT3,
                                           3 * sizeof(unsigned), nt);
    memcpy(v, pos, 3 * nv * sizeof *v);
    memcpy(ix, idx, 3 * nt * sizeof *ix);
    rtcCommitGeometry(g);
    rtcAttachGeometry(e->scene, g);
    rtcReleaseGeometry(g);
    rtcCommitScene(e->scene);
    e->build_ms = (io_now_s() - t0) * 1e3;
    return 0;
}

static void embree_free(embree *e)
{
    rtcReleaseScene(e->scene);
    rtcReleaseDevice(e->dev);
}

/* ---- Embree's traversal: one ray, 16-ray packets, streams -------------------------- */

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

static rt_hit from_hit(float tfar, float u, float v, unsigned geom, unsigned prim)
{
    const int hit = geom != RTC_INVALID_GEOMETRY_ID;
    return (rt_hit){tfar, u, v, hit ? prim : RT_NO_HIT};
}

static void emb_closest1(const void *ctx, const rt_ray *rays, int n, rt_hit *hits)
{
    RTCScene scene = (RTCScene)ctx;
    struct RTCIntersectContext ic;
    rtcInitIntersectContext(&ic);
    for (int i = 0; i < n; i++) {
        struct RTCRayHit rh = to_rayhit(&rays[i]);
        rtcIntersect1(scene, &ic, &rh);
        hits[i] = from_hit(rh.ray.tfar, rh.hit.u, rh.hit.v, rh.hit.geomID, rh.hit.primID);
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

/* Closest hits of n rays, 16 at a time (the last packet masked). */
static void closest16(RTCScene scene, struct RTCIntersectContext *ic, const rt_ray *rays, int n,
                      rt_hit *hits)
{
    struct RTCRayHit16 p __attribute__((aligned(64)));
    int valid[16] __attribute__((aligned(64)));
    for (int i = 0; i < n; i += 16) {
        const int m = n - i < 16 ? n - i : 16;
        fill16(&p, valid, rays + i, m);
        rtcIntersect16(valid, scene, ic, &p);
        for (int k = 0; k < m; k++)
            hits[i + k] = from_hit(p.ray.tfar[k], p.hit.u[k], p.hit.v[k], p.hit.geomID[k],
                                   p.hit.primID[k]);
    }
}

static void occluded16(RTCScene scene, struct RTCIntersectContext *ic, const rt_ray *rays, int n,
                       uint8_t *occ)
{
    struct RTCRayHit16 p __attribute__((aligned(64)));
    int valid[16] __attribute__((aligned(64)));
    for (int i = 0; i < n; i += 16) {
        const int m = n - i < 16 ? n - i : 16;
        fill16(&p, valid, rays + i, m);
        rtcOccluded16(valid, scene, ic, &p.ray);
        for (int k = 0; k < m; k++) occ[i + k] = p.ray.tfar[k] == -INFINITY;
    }
}

static void emb_closest16(const void *ctx, const rt_ray *rays, int n, rt_hit *hits)
{
    struct RTCIntersectContext ic;
    rtcInitIntersectContext(&ic);
    closest16((RTCScene)ctx, &ic, rays, n, hits);
}

static void emb_occluded16(const void *ctx, const rt_ray *rays, int n, uint8_t *occ)
{
    struct RTCIntersectContext ic;
    rtcInitIntersectContext(&ic);
    occluded16((RTCScene)ctx, &ic, rays, n, occ);
}

/* The stream versions: n rays in one call, Embree packs them itself. rh has room for n. */
static void closest_stream(RTCScene scene, struct RTCIntersectContext *ic, const rt_ray *rays,
                           int n, rt_hit *hits, struct RTCRayHit *rh)
{
    for (int i = 0; i < n; i++) rh[i] = to_rayhit(&rays[i]);
    rtcIntersect1M(scene, ic, rh, (unsigned)n, sizeof *rh);
    for (int i = 0; i < n; i++)
        hits[i] = from_hit(rh[i].ray.tfar, rh[i].hit.u, rh[i].hit.v, rh[i].hit.geomID,
                           rh[i].hit.primID);
}

static void occluded_stream(RTCScene scene, struct RTCIntersectContext *ic, const rt_ray *rays,
                            int n, uint8_t *occ, struct RTCRayHit *rh)
{
    for (int i = 0; i < n; i++) rh[i] = to_rayhit(&rays[i]);
    rtcOccluded1M(scene, ic, &rh[0].ray, (unsigned)n, sizeof *rh);
    for (int i = 0; i < n; i++) occ[i] = rh[i].ray.tfar == -INFINITY;
}

/* ---- the frame on Embree: our ray tracer's workload and shading --------------------- */

#define FTILE 8                 /* tile edge: four 4x4 primary packets */
#define FTILE_RAYS (FTILE * FTILE)
#define FBATCH (FTILE_RAYS * SH_MAX_LIGHTS)   /* most rays of one kind in a tile */

static int frame_reps = 5;      /* --reps */
static bench_threads frame_threads; /* --threads */

typedef enum emb_mode { EMB_PACKET16, EMB_STREAM } emb_mode;

typedef struct emb_frame {
    RTCScene scene;
    emb_mode mode;
    const sh_ray_env *env;
    sc_camera_frame cam;
    int width, height, bounces;
    float min_weight;
    uint8_t *rgba;
    size_t next_tile;           /* atomic: the next tile to render */
    size_t rays;                /* atomic: rays traced in the frame */
} emb_frame;

/* Rays of one generation in a tile, with what comes back from Embree. */
typedef struct ray_batch {
    int n;
    rt_ray ray[FBATCH];
    float color[FBATCH][3];     /* closest: the ray's weight; shadow: the light's term */
    uint16_t pixel[FBATCH];     /* in the tile */
    rt_hit hit[FBATCH];
    uint8_t occluded[FBATCH];
} ray_batch;

/* A thread's scratch: the tile's sums and its batches (too large for a stack). cur and
 * next point into gen: the generation being shaded and the reflections it makes. */
typedef struct tile_work {
    float sum[FTILE_RAYS][3];
    ray_batch gen[2], shadow;
    ray_batch *cur, *next;
    struct RTCRayHit stream[FBATCH];
} tile_work;

static void batch_push(ray_batch *b, const rt_ray *r, const float color[3], int pixel)
{
    b->ray[b->n] = *r;
    memcpy(b->color[b->n], color, sizeof b->color[0]);
    b->pixel[b->n++] = (uint16_t)pixel;
}

static void trace_closest(const emb_frame *f, tile_work *w, ray_batch *b, int coherent)
{
    struct RTCIntersectContext ic;
    rtcInitIntersectContext(&ic);
    ic.flags = coherent ? RTC_INTERSECT_CONTEXT_FLAG_COHERENT : RTC_INTERSECT_CONTEXT_FLAG_INCOHERENT;
    if (f->mode == EMB_STREAM) closest_stream(f->scene, &ic, b->ray, b->n, b->hit, w->stream);
    else closest16(f->scene, &ic, b->ray, b->n, b->hit);
}

/* Traces the shadow batch and adds the terms of the unoccluded rays. */
static void trace_shadows(const emb_frame *f, tile_work *w)
{
    ray_batch *b = &w->shadow;
    struct RTCIntersectContext ic;
    rtcInitIntersectContext(&ic);
    ic.flags = RTC_INTERSECT_CONTEXT_FLAG_INCOHERENT;
    if (f->mode == EMB_STREAM) occluded_stream(f->scene, &ic, b->ray, b->n, b->occluded, w->stream);
    else occluded16(f->scene, &ic, b->ray, b->n, b->occluded);
    for (int i = 0; i < b->n; i++)
        if (!b->occluded[i])
            for (int ch = 0; ch < 3; ch++) w->sum[b->pixel[i]][ch] += b->color[i][ch];
}

/* The Shade stage's work on one generation: the direct terms go to the sums, shadow rays
 * to w->shadow, reflection rays (before the last bounce, above min_weight) to w->next. */
static void shade_batch(const emb_frame *f, tile_work *w, int depth)
{
    const ray_batch *b = w->cur;
    w->shadow.n = w->next->n = 0;
    for (int i = 0; i < b->n; i++) {
        float *sum = w->sum[b->pixel[i]];
        if (b->hit[i].prim == RT_NO_HIT) {
            for (int ch = 0; ch < 3; ch++) sum[ch] += b->color[i][ch] * f->env->background[ch];
            continue;
        }
        sh_ray_result res;
        sh_ray_shade(f->env, &b->ray[i], &b->hit[i], b->color[i], depth, &res);
        for (int ch = 0; ch < 3; ch++) sum[ch] += res.direct[ch];
        for (int l = 0; l < res.nshadow; l++)
            batch_push(&w->shadow, &res.shadow[l], res.shadow_color[l], b->pixel[i]);
        const float *rw = res.reflect_weight;
        if (res.reflect && depth < f->bounces && fmaxf(rw[0], fmaxf(rw[1], rw[2])) >= f->min_weight)
            batch_push(w->next, &res.reflected, rw, b->pixel[i]);
    }
}

/* Camera rays of the tile at (x0, y0) in 4x4 blocks, so each 16 rays are one block. */
static void camera_batch(const emb_frame *f, int x0, int y0, ray_batch *b)
{
    static const float one[3] = {1.0f, 1.0f, 1.0f};
    b->n = 0;
    for (int blk = 0; blk < 4; blk++)
        for (int k = 0; k < 16; k++) {
            const int lx = blk % 2 * 4 + k % 4, ly = blk / 2 * 4 + k / 4;
            const int x = x0 + lx, y = y0 + ly;
            if (x >= f->width || y >= f->height) continue;
            rt_ray r = {{f->cam.eye[0], f->cam.eye[1], f->cam.eye[2]}, 0.0f, {0, 0, 0}, INFINITY};
            sc_camera_ray(&f->cam, f->width, f->height, (float)x + 0.5f, (float)y + 0.5f, r.dir);
            batch_push(b, &r, one, ly * FTILE + lx);
        }
}

static void encode_tile(const emb_frame *f, const tile_work *w, int x0, int y0)
{
    for (int ly = 0; ly < FTILE && y0 + ly < f->height; ly++)
        for (int lx = 0; lx < FTILE && x0 + lx < f->width; lx++) {
            uint8_t *px = f->rgba + 4 * ((size_t)(y0 + ly) * f->width + x0 + lx);
            for (int ch = 0; ch < 3; ch++) px[ch] = sh_srgb8_lookup(w->sum[ly * FTILE + lx][ch]);
            px[3] = 255;
        }
}

/* Renders one tile; returns the rays traced. */
static size_t render_tile(const emb_frame *f, tile_work *w, int tile)
{
    const int tiles_x = (f->width + FTILE - 1) / FTILE;
    const int x0 = tile % tiles_x * FTILE, y0 = tile / tiles_x * FTILE;
    size_t rays = 0;
    memset(w->sum, 0, sizeof w->sum);
    w->cur = &w->gen[0];
    w->next = &w->gen[1];
    camera_batch(f, x0, y0, w->cur);
    for (int depth = 0; w->cur->n; depth++) {
        trace_closest(f, w, w->cur, depth == 0);
        shade_batch(f, w, depth);
        trace_shadows(f, w);
        rays += (size_t)(w->cur->n + w->shadow.n);
        ray_batch *done = w->cur;   /* the reflections become the next generation */
        w->cur = w->next;
        w->next = done;
    }
    encode_tile(f, w, x0, y0);
    return rays;
}

static void *frame_worker(void *arg)
{
    emb_frame *f = arg;
    tile_work *w = aligned_alloc(64, (sizeof(tile_work) + 63) / 64 * 64);
    const size_t ntiles = (size_t)((f->width + FTILE - 1) / FTILE) * ((f->height + FTILE - 1) / FTILE);
    size_t rays = 0;
    for (size_t t; (t = __atomic_fetch_add(&f->next_tile, 1, __ATOMIC_RELAXED)) < ntiles;)
        rays += render_tile(f, w, (int)t);
    __atomic_fetch_add(&f->rays, rays, __ATOMIC_RELAXED);
    free(w);
    return NULL;
}

/* One frame on nthreads threads (the caller is one of them); returns milliseconds. */
static double embree_frame(emb_frame *f, int nthreads)
{
    pthread_t th[BENCH_MAX_THREADS];
    f->next_tile = 0;
    f->rays = 0;
    const double t0 = io_now_s();
    for (int i = 1; i < nthreads; i++) pthread_create(&th[i], NULL, frame_worker, f);
    frame_worker(f);
    for (int i = 1; i < nthreads; i++) pthread_join(th[i], NULL);
    return (io_now_s() - t0) * 1e3;
}

/* ---- our frame and the comparison --------------------------------------------------- */

static pl_kept_builtin *keep;         /* the graph, run again while c and the scene stay */

/* One frame of the GRAMPS ray-tracing graph on `workers` workers; returns milliseconds
 * (infinity when it fails) and the rays it traced. */
static double our_frame(const sc_scene *s, const sc_geometry *g, const rt_bvh *bvh, int workers,
                        uint8_t *img, uint64_t *rays)
{
    plrt_config c;
    plrt_config_default(&c);
    c.workers = (unsigned)workers;
    plrt_counts n;
    char err[SC_ERR_MAX] = "out of memory";
    if (!keep) keep = pl_kept_builtin_new();
    const double t0 = io_now_s();
    const gr_graph *gg = keep ? plrt_render_kept(keep, s, g, bvh, &c, img, &n, err) : NULL;
    const double ms = (io_now_s() - t0) * 1e3;
    if (!gg) {
        printf("# plrt_render: %s\n", err);
        return INFINITY;
    }
    *rays = n.primary + n.shadow + n.secondary;
    return ms;
}

typedef struct span {
    double lo, hi;              /* fastest and slowest of the repeats, ms */
} span;

static void span_add(span *s, double ms)
{
    s->lo = fmin(s->lo, ms);
    s->hi = fmax(s->hi, ms);
}

/* Pixels whose channels differ by more than one level (the two sum in different orders
 * and precisions, and Embree's default mode is not watertight). */
static size_t pixels_differing(const uint8_t *a, const uint8_t *b, size_t npix)
{
    size_t n = 0;
    for (size_t i = 0; i < npix; i++) {
        int d = 0;
        for (int ch = 0; ch < 3; ch++) d |= abs(a[4 * i + ch] - b[4 * i + ch]) > 1;
        n += (size_t)d;
    }
    return n;
}

/* Our frame and Embree's two, in turn, FRAME_REPS times; prints the best of each and
 * returns ours and Embree's best in *ours_ms and *emb_ms. */
static void frames_at(const char *name, const sc_scene *s, const sc_geometry *g,
                      const rt_bvh *bvh, emb_frame *f, int threads, double *ours_ms,
                      double *emb_ms)
{
    const size_t npix = (size_t)f->width * f->height;
    uint8_t *ours_img = malloc(4 * npix);
    span ours = {INFINITY, 0}, e16 = {INFINITY, 0}, e1m = {INFINITY, 0};
    uint64_t ours_rays = 0;
    size_t emb_rays = 0;
    const double trip_before = threads > 1 ? bench_line_round_trip_ns() : 0;
    for (int rep = 0; rep < frame_reps; rep++) {
        span_add(&ours, our_frame(s, g, bvh, threads, ours_img, &ours_rays));
        f->mode = EMB_STREAM;
        span_add(&e1m, embree_frame(f, threads));
        f->mode = EMB_PACKET16;
        span_add(&e16, embree_frame(f, threads));
        emb_rays = f->rays;
    }
    const double emb = fmin(e16.lo, e1m.lo);
    printf("rt_frame_%dt_%s %.2f ms\n", threads, name, ours.lo);
    printf("embree16_frame_%dt_%s %.2f ms\n", threads, name, e16.lo);
    printf("embree1M_frame_%dt_%s %.2f ms\n", threads, name, e1m.lo);
    printf("embree_frame_%dt_%s %.2f ms\n", threads, name, emb);
    printf("ratio_frame_%dt_%s %.3f ratio\n", threads, name, ours.lo / emb);
    *ours_ms = ours.lo;
    *emb_ms = emb;
    printf("# %dt %s: ours %.1f-%.1f ms, embree16 %.1f-%.1f ms, embree1M %.1f-%.1f ms (%d runs "
           "each, in turn); rays ours %llu, embree %zu; pixels differing by more than one "
           "level: %zu of %zu\n",
           threads, name, ours.lo, ours.hi, e16.lo, e16.hi, e1m.lo, e1m.hi, frame_reps,
           (unsigned long long)ours_rays, emb_rays, pixels_differing(ours_img, f->rgba, npix),
           npix);
    if (threads > 1)
        printf("# %dt %s: cache-line round trip between two threads %.0f ns before, %.0f ns "
               "after (bench/line_round_trip.h)\n", threads, name, trip_before,
               bench_line_round_trip_ns());
    free(ours_img);
}

/* The frame comparison on one scene (source: what sc_load takes), 1 and 2 threads. */
static void compare_frames(const char *source, const char *name)
{
    sc_scene *s;
    sc_geometry g;
    char err[SC_ERR_MAX];
    if (sc_load(source, &s, err) || sc_flatten(s, &g, err)) {
        printf("# %s\n", err);
        return;
    }
    rt_bvh *bvh = rt_bvh_build(g.positions, g.indices, g.ntriangles, NULL);
    embree high, medium;
    if (embree_init(&high, g.positions, g.nvertices, g.indices, g.ntriangles, RTC_BUILD_QUALITY_HIGH) ||
        embree_init(&medium, g.positions, g.nvertices, g.indices, g.ntriangles, RTC_BUILD_QUALITY_MEDIUM)) {
        printf("# embree device failed\n");
        return;
    }
    printf("rt_build_%s %.2f ms\n", name, rt_bvh_get_stats(bvh)->build_ms);
    printf("embree_build_high_1t_%s %.2f ms\n", name, high.build_ms);
    printf("embree_build_medium_1t_%s %.2f ms\n", name, medium.build_ms);
    embree_free(&medium);
    plrt_config c;
    plrt_config_default(&c);
    emb_frame f = {.scene = high.scene, .mode = EMB_PACKET16, .width = c.width,
                   .height = c.height, .bounces = c.bounces, .min_weight = c.min_weight,
                   .rgba = malloc((size_t)c.width * c.height * 4)};
    sh_ray_env env;
    sc_camera_frame_init(&f.cam, &s->camera, c.width, c.height);
    sh_ray_env_init(&env, s, &g, &f.cam);
    sh_srgb_init();
    f.env = &env;
    double ours[BENCH_MAX_COUNTS], emb[BENCH_MAX_COUNTS];
    for (int i = 0; i < frame_threads.n; i++)
        frames_at(name, s, &g, bvh, &f, frame_threads.count[i], &ours[i], &emb[i]);
    const int one = bench_threads_one(&frame_threads);
    for (int i = 0; one >= 0 && i < frame_threads.n; i++) {
        printf("rt_speedup_%dt_%s %.2f x\n", frame_threads.count[i], name, ours[one] / ours[i]);
        printf("embree_speedup_%dt_%s %.2f x\n", frame_threads.count[i], name, emb[one] / emb[i]);
    }
    free(f.rgba);
    embree_free(&high);
    pl_kept_builtin_forget(keep);     /* before the BVH its scene data points to */
    rt_bvh_free(bvh);
    sc_geometry_free(&g);
    sc_free(s);
}

/* ---- kernel rates on pre-made rays --------------------------------------------------- */

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

static void report(const char *what, int threads, const char *sn, double ours, double e1,
                   double e16)
{
    printf("rt_%s_%dt_%s %.2f Mrays/s\n", what, threads, sn, ours);
    printf("embree1_%s_%dt_%s %.2f Mrays/s\n", what, threads, sn, e1);
    printf("embree16_%s_%dt_%s %.2f Mrays/s\n", what, threads, sn, e16);
    printf("ratio_%s_%dt_%s %.3f ratio\n", what, threads, sn, ours / fmax(e1, e16));
}

static void kernel_rates(bench_scene *b, const tracer *pk, const tracer *sg, const tracer *e1,
                         const tracer *e16, int threads)
{
    report("primary", threads, b->name, rate_job(pk, &b->prim64, 0, threads),
           rate_job(e1, &b->prim64, 0, threads), rate_job(e16, &b->prim64, 0, threads));
    report("shadow", threads, b->name, rate_job(pk, &b->shadow, 1, threads),
           rate_job(e1, &b->shadow, 1, threads), rate_job(e16, &b->shadow, 1, threads));
    report("random", threads, b->name,
           fmax(rate_job(sg, &b->random, 0, threads), rate_job(pk, &b->random, 0, threads)),
           rate_job(e1, &b->random, 0, threads), rate_job(e16, &b->random, 0, threads));
}

/* Returns 0, or -1 when the scene cannot be loaded. */
static int compare_kernels(bench_scene *b)
{
    rt_bvh *bvh = rt_bvh_build(b->mesh.pos, b->mesh.idx, b->mesh.nt, NULL);
    embree e;
    if (embree_init(&e, b->mesh.pos, b->mesh.nv, b->mesh.idx, b->mesh.nt, RTC_BUILD_QUALITY_HIGH)) {
        printf("# embree device failed\n");
        rt_bvh_free(bvh);
        return -1;
    }
    print_isa(bvh);
    const tracer pk = {"packet", our_closest_packet, our_occluded_packet, bvh};
    const tracer sg = {"single", our_closest_single, our_occluded_single, bvh};
    const tracer e1 = {"embree1", emb_closest1, emb_occluded1, e.scene};
    const tracer e16 = {"embree16", emb_closest16, emb_occluded16, e.scene};
    scene_rays(b, &pk);
    check_agreement(&pk, &e1, &b->prim64);
    for (int threads = 1; threads <= 2; threads++) kernel_rates(b, &pk, &sg, &e1, &e16, threads);
    embree_free(&e);
    rt_bvh_free(bvh);
    return 0;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: bench_rt_embree [--frames-only] [--reps N] [--threads LIST] [SCENE...]\n"
                 "  SCENE  default: bunny teapot " SCENES "dragon.obj; bunny is " SCENES "bunny.obj\n"
                 "         (its README camera for the kernel rates), dragon the held-out mesh of\n"
                 "         the same size; or a built-in, .scene or mesh file\n"
                 "  --frames-only  only the frame comparison, not the kernel rates\n"
                 "  --reps N       frames of each kind per thread count (default 5)\n"
                 "  --threads LIST thread counts of the frame comparison, e.g. 1,2,4,8,16\n"
                 "                 (default 1,2), with speedups when 1 is among them\n");
}

int main(int argc, char **argv)
{
    pl_keep_freed_memory();           /* frames reuse memory, as a renderer would */
    frame_threads = bench_threads_default;
    static const char *defaults[] = {"bunny", "teapot", SCENES "dragon.obj"};
    const char *scenes[64];
    int nscenes = 0, kernels = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--frames-only")) {
            kernels = 0;
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc && atoi(argv[i + 1]) >= 1) {
            frame_reps = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            if (bench_threads_parse("bench_rt_embree", argv[++i], &frame_threads)) return 2;
        } else if (argv[i][0] != '-' && nscenes < 64) {
            scenes[nscenes++] = argv[i];
        } else {
            fprintf(stderr, "bench_rt_embree: bad argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (nscenes == 0)
        for (size_t i = 0; i < sizeof defaults / sizeof *defaults; i++) scenes[nscenes++] = defaults[i];
    int status = 0;
    for (int i = 0; i < nscenes; i++) {
        bench_scene b;
        if (scene_load(&b, scenes[i]) != 0) {
            status = 1;
            continue;
        }
        compare_frames(b.source, b.name);
        if (kernels && compare_kernels(&b) != 0) status = 1;
        scene_free(&b);
    }
    return status;
}

#else

#include <stdio.h>

int main(void)
{
    printf("# embree not installed (make embree)\n");
    return 0;
}

#endif
