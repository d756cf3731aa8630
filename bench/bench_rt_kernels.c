/* Ray-tracing kernel benchmarks (raytracer/), single-threaded unless --threads. Prints
 * "name value unit".
 *
 *  - rt_build_<mesh> ms: BVH build time per mesh in ../shared/scenes (best of 5), with the
 *    tree statistics as '#' comment lines.
 *  - On the bunny, 1024x1024 camera from ../shared/scenes/README.md, rays made in advance:
 *    rt_primary_packet{64,16}_bunny (closest hit, 8x8 / 4x4 pixel tiles as packets),
 *    rt_primary_single_bunny, rt_shadow_{packet,single}_bunny (any hit toward the light
 *    from every primary hit, packets per tile), rt_random_single_bunny (random origins in
 *    the bounds, random directions), in Mrays/s.
 *  - rt_thesis_bunny: the thesis workload in a plain loop, rays made on the fly per 8x8
 *    tile: primary ray per pixel, shadow ray per hit, one mirror reflection ray per hit,
 *    shadow ray per reflection hit; Mrays/s over all of those rays.
 *
 * Flags (--help): --scene (a built-in or another mesh instead of the bunny, with the
 * scene's camera and first light; names end in _<scene>), --threads, --repeats, --only
 * (some workloads, e.g. for a callgrind run), --no-builds. A '# rt_isa' line names the
 * kernels' instruction set (GRAMPS_ISA=baseline forces the SSE ones).
 *
 * bench_rt_embree.c includes this file (with BENCH_RT_NO_MAIN) so that the Embree
 * comparison traces exactly the same rays with the same loops. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raytracer/bvh.h"
#include "raytracer/bvh_traverse.h"
#include "raytracer/packet.h"
#include "raytracer/ray.h"
#include "scenes/scene.h"
#include "tools/common/measure.h"

/* ---- meshes ------------------------------------------------------------------------ */

typedef struct bmesh {
    float *pos;
    size_t nv;
    uint32_t *idx;
    size_t nt;
} bmesh;

static void push_tri(bmesh *m, size_t *cap, uint32_t a, uint32_t b, uint32_t c)
{
    if (m->nt == *cap) {
        *cap = *cap ? 2 * *cap : 1024;
        m->idx = realloc(m->idx, 3 * *cap * sizeof *m->idx);
    }
    m->idx[3 * m->nt] = a;
    m->idx[3 * m->nt + 1] = b;
    m->idx[3 * m->nt + 2] = c;
    m->nt++;
}

/* OBJ subset: v and f lines, fan triangulation in file order, negative indices, a/b/c. */
static int bench_load_obj(const char *path, bmesh *m)
{
    memset(m, 0, sizeof *m);
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    char line[4096];
    size_t capv = 0, capt = 0;
    while (fgets(line, sizeof line, f)) {
        char *s = line;
        while (*s == ' ' || *s == '\t') s++;
        if (s[0] == 'v' && (s[1] == ' ' || s[1] == '\t')) {
            if (m->nv == capv) {
                capv = capv ? 2 * capv : 1024;
                m->pos = realloc(m->pos, 3 * capv * sizeof *m->pos + 16);
            }
            float *p = m->pos + 3 * m->nv++;
            if (sscanf(s + 2, "%f %f %f", &p[0], &p[1], &p[2]) != 3) return fclose(f), -1;
        } else if (s[0] == 'f' && (s[1] == ' ' || s[1] == '\t')) {
            uint32_t first = 0, prev = 0;
            int k = 0;
            for (char *tok = strtok(s + 2, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n"), k++) {
                long i = strtol(tok, NULL, 10);
                i = i < 0 ? (long)m->nv + i : i - 1;
                if (i < 0 || (size_t)i >= m->nv) return fclose(f), -1;
                if (k == 0) first = (uint32_t)i;
                else if (k >= 2) push_tri(m, &capt, first, prev, (uint32_t)i);
                prev = (uint32_t)i;
            }
        }
    }
    fclose(f);
    return 0;
}

static void bmesh_free(bmesh *m)
{
    free(m->pos);
    free(m->idx);
}

/* ---- timing, camera, rays ---------------------------------------------------------- */

#define RES 1024
#define TILE 8

typedef struct bcam {
    float eye[3], u[3], v[3], w[3];
} bcam;

static void vnorm(float v[3])
{
    const float l = sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int a = 0; a < 3; a++) v[a] /= l;
}

static void vcross(const float a[3], const float b[3], float o[3])
{
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}

static bcam make_cam(const float eye[3], const float target[3], const float up[3], float fovy)
{
    bcam c;
    for (int a = 0; a < 3; a++) {
        c.eye[a] = eye[a];
        c.w[a] = target[a] - eye[a];
    }
    vnorm(c.w);
    vcross(c.w, up, c.u);
    vnorm(c.u);
    vcross(c.u, c.w, c.v);
    const float h = tanf(fovy * 3.14159265f / 360.0f);
    for (int a = 0; a < 3; a++) {
        c.u[a] *= h;
        c.v[a] *= h;
    }
    return c;
}

static rt_ray cam_ray(const bcam *c, int x, int y)
{
    const float sx = 2.0f * ((float)x + 0.5f) / RES - 1.0f;
    const float sy = 1.0f - 2.0f * ((float)y + 0.5f) / RES;
    rt_ray r = {{c->eye[0], c->eye[1], c->eye[2]}, 0.0f, {0, 0, 0}, INFINITY};
    for (int a = 0; a < 3; a++) r.dir[a] = c->w[a] + sx * c->u[a] + sy * c->v[a];
    return r;
}

/* Rays of square tiles of side ts, tile after tile, rows inside a tile. */
static void tile_rays(const bcam *c, int ts, rt_ray *out)
{
    size_t k = 0;
    for (int ty = 0; ty < RES; ty += ts)
        for (int tx = 0; tx < RES; tx += ts)
            for (int y = ty; y < ty + ts; y++)
                for (int x = tx; x < tx + ts; x++) out[k++] = cam_ray(c, x, y);
}

static const float *tri_v(const bmesh *m, uint32_t prim, int k)
{
    return m->pos + 3 * (size_t)m->idx[3 * (size_t)prim + (size_t)k];
}

/* Offset from surfaces for secondary rays, relative to the scene size. */
static float scene_eps(const bmesh *m)
{
    float ext = 0.0f;
    for (size_t i = 0; i < 3 * m->nv; i++) ext = fmaxf(ext, fabsf(m->pos[i]));
    return 1e-5f * ext;
}

static void shadow_ray(const float p[3], const float light[3], float eps, rt_ray *r)
{
    *r = (rt_ray){{p[0], p[1], p[2]}, eps, {light[0] - p[0], light[1] - p[1], light[2] - p[2]},
                  1.0f - eps};
}

/* Hit point and mirror direction about the geometric normal. */
static void reflect_ray(const bmesh *m, const rt_ray *r, const rt_hit *h, float eps, float p[3],
                        rt_ray *out)
{
    const float *a = tri_v(m, h->prim, 0), *b = tri_v(m, h->prim, 1), *c = tri_v(m, h->prim, 2);
    float e1[3], e2[3], n[3];
    for (int k = 0; k < 3; k++) {
        p[k] = r->org[k] + h->t * r->dir[k];
        e1[k] = b[k] - a[k];
        e2[k] = c[k] - a[k];
    }
    vcross(e1, e2, n);
    vnorm(n);
    const float dn = r->dir[0] * n[0] + r->dir[1] * n[1] + r->dir[2] * n[2];
    *out = (rt_ray){{p[0], p[1], p[2]}, eps,
                    {r->dir[0] - 2 * dn * n[0], r->dir[1] - 2 * dn * n[1], r->dir[2] - 2 * dn * n[2]},
                    INFINITY};
}

/* ---- tracers: ours, as batches of up to 64 rays ------------------------------------ */

typedef struct tracer {
    const char *name;
    void (*closest)(const void *ctx, const rt_ray *rays, int n, rt_hit *hits);
    void (*occluded)(const void *ctx, const rt_ray *rays, int n, uint8_t *occ);
    const void *ctx;
} tracer;

static void our_closest_packet(const void *ctx, const rt_ray *rays, int n, rt_hit *hits)
{
    rt_intersect_packet(ctx, rays, n, hits, NULL);
}

static void our_occluded_packet(const void *ctx, const rt_ray *rays, int n, uint8_t *occ)
{
    rt_occluded_packet(ctx, rays, n, occ, NULL);
}

static void our_closest_single(const void *ctx, const rt_ray *rays, int n, rt_hit *hits)
{
    for (int i = 0; i < n; i++) rt_intersect1(ctx, &rays[i], &hits[i]);
}

static void our_occluded_single(const void *ctx, const rt_ray *rays, int n, uint8_t *occ)
{
    for (int i = 0; i < n; i++) occ[i] = (uint8_t)rt_occluded1(ctx, &rays[i]);
}

/* ---- workloads --------------------------------------------------------------------- */

/* Rays grouped in batches: batch b is rays[start[b] .. start[b+1]). */
typedef struct rayset {
    rt_ray *rays;
    rt_hit *hits;
    uint8_t *occ;
    size_t *start;
    size_t nbatches, nrays;
} rayset;

static void rayset_alloc(rayset *s, size_t nrays, size_t nbatches)
{
    s->rays = malloc(nrays * sizeof *s->rays);
    s->hits = malloc(nrays * sizeof *s->hits);
    s->occ = malloc(nrays);
    s->start = malloc((nbatches + 1) * sizeof *s->start);
    s->nrays = nrays;
    s->nbatches = nbatches;
}

static void rayset_free(rayset *s)
{
    free(s->rays);
    free(s->hits);
    free(s->occ);
    free(s->start);
}

/* Primary rays in tiles of side ts (one batch per tile). */
static void primary_set(const bcam *c, int ts, rayset *s)
{
    const size_t per = (size_t)ts * ts, n = (size_t)RES * RES;
    rayset_alloc(s, n, n / per);
    tile_rays(c, ts, s->rays);
    for (size_t b = 0; b <= s->nbatches; b++) s->start[b] = b * per;
}

/* Shadow rays from the hits of a primary set, compacted per tile. */
static void shadow_set(const rayset *prim, const float light[3], float eps, rayset *s)
{
    rayset_alloc(s, prim->nrays, prim->nbatches);
    size_t k = 0;
    for (size_t b = 0; b < prim->nbatches; b++) {
        s->start[b] = k;
        for (size_t i = prim->start[b]; i < prim->start[b + 1]; i++) {
            const rt_hit *h = &prim->hits[i];
            if (h->prim == RT_NO_HIT) continue;
            const rt_ray *r = &prim->rays[i];
            float p[3];
            for (int a = 0; a < 3; a++) p[a] = r->org[a] + h->t * r->dir[a];
            shadow_ray(p, light, eps, &s->rays[k++]);
        }
    }
    s->start[prim->nbatches] = k;
    s->nrays = k;
}

static float frand01(uint64_t *st)
{
    *st ^= *st << 13;
    *st ^= *st >> 7;
    *st ^= *st << 17;
    return (float)(*st >> 40) * (1.0f / 16777216.0f);
}

/* Random origins in the mesh bounds (grown by half), uniform random directions. */
static void random_set(const bmesh *m, size_t n, rayset *s)
{
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t i = 0; i < m->nv; i++)
        for (int a = 0; a < 3; a++) {
            lo[a] = fminf(lo[a], m->pos[3 * i + a]);
            hi[a] = fmaxf(hi[a], m->pos[3 * i + a]);
        }
    rayset_alloc(s, n, n / 64);
    uint64_t st = 12345;
    for (size_t i = 0; i < n; i++) {
        rt_ray *r = &s->rays[i];
        for (int a = 0; a < 3; a++)
            r->org[a] = lo[a] - 0.25f * (hi[a] - lo[a]) + 1.5f * (hi[a] - lo[a]) * frand01(&st);
        const float z = 2.0f * frand01(&st) - 1.0f, phi = 6.2831853f * frand01(&st);
        const float rr = sqrtf(fmaxf(0.0f, 1.0f - z * z));
        r->dir[0] = rr * cosf(phi);
        r->dir[1] = rr * sinf(phi);
        r->dir[2] = z;
        r->tmin = 0.0f;
        r->tmax = INFINITY;
    }
    for (size_t b = 0; b <= s->nbatches; b++) s->start[b] = b * 64;
}

typedef struct job {
    const tracer *tr;
    rayset *set;
    int occluded;           /* any hit instead of closest hit */
} job;

static void run_batches(const job *j, size_t b0, size_t b1)
{
    const rayset *s = j->set;
    for (size_t b = b0; b < b1; b++) {
        const size_t i = s->start[b];
        const int n = (int)(s->start[b + 1] - i);
        if (n == 0) continue;
        if (j->occluded) j->tr->occluded(j->tr->ctx, s->rays + i, n, s->occ + i);
        else j->tr->closest(j->tr->ctx, s->rays + i, n, s->hits + i);
    }
}

/* The thesis workload for a range of 8x8 tiles; returns the number of rays traced. */
typedef struct thesis {
    const tracer *tr;
    const bmesh *mesh;
    const bcam *cam;
    float light[3], eps;
} thesis;

static size_t thesis_tile(const thesis *w, int tile)
{
    rt_ray prim[64], shadow[64], refl[64], shadow2[64];
    rt_hit hp[64], hr[64];
    uint8_t occ[64];
    const int tx = tile % (RES / TILE) * TILE, ty = tile / (RES / TILE) * TILE;
    for (int k = 0; k < 64; k++) prim[k] = cam_ray(w->cam, tx + k % 8, ty + k / 8);
    w->tr->closest(w->tr->ctx, prim, 64, hp);
    int ns = 0, ns2 = 0;
    for (int k = 0; k < 64; k++) {
        if (hp[k].prim == RT_NO_HIT) continue;
        float p[3];
        reflect_ray(w->mesh, &prim[k], &hp[k], w->eps, p, &refl[ns]);
        shadow_ray(p, w->light, w->eps, &shadow[ns++]);
    }
    if (ns) {
        w->tr->occluded(w->tr->ctx, shadow, ns, occ);
        w->tr->closest(w->tr->ctx, refl, ns, hr);
    }
    for (int k = 0; k < ns; k++) {
        if (hr[k].prim == RT_NO_HIT) continue;
        float p[3];
        for (int a = 0; a < 3; a++) p[a] = refl[k].org[a] + hr[k].t * refl[k].dir[a];
        shadow_ray(p, w->light, w->eps, &shadow2[ns2++]);
    }
    if (ns2) w->tr->occluded(w->tr->ctx, shadow2, ns2, occ);
    return 64 + 2 * (size_t)ns + (size_t)ns2;
}

/* ---- the threaded driver ----------------------------------------------------------- */

typedef struct pool {
    const job *j;           /* either a batch job ... */
    const thesis *w;        /* ... or the thesis workload */
    size_t nunits;
    size_t next;            /* atomic: next unit to take */
    size_t rays;            /* atomic: rays traced (thesis) */
} pool;

#define CHUNK 16

static void *worker(void *arg)
{
    pool *p = arg;
    size_t rays = 0;
    for (;;) {
        const size_t u = __atomic_fetch_add(&p->next, CHUNK, __ATOMIC_RELAXED);
        if (u >= p->nunits) break;
        const size_t e = u + CHUNK < p->nunits ? u + CHUNK : p->nunits;
        if (p->j) {
            run_batches(p->j, u, e);
        } else {
            for (size_t t = u; t < e; t++) rays += thesis_tile(p->w, (int)t);
        }
    }
    __atomic_fetch_add(&p->rays, rays, __ATOMIC_RELAXED);
    return NULL;
}

/* Runs the pool on nthreads threads (the caller is one of them); returns seconds. */
static double run_pool(pool *p, int nthreads)
{
    pthread_t th[64];
    p->next = 0;
    p->rays = 0;
    const double t0 = io_now_s();
    for (int i = 1; i < nthreads; i++) pthread_create(&th[i], NULL, worker, p);
    worker(p);
    for (int i = 1; i < nthreads; i++) pthread_join(th[i], NULL);
    return io_now_s() - t0;
}

static int repeats = 5;     /* --repeats */

/* Best-of-repeats rate of a batch job, Mrays/s. */
static double rate_job(const tracer *tr, rayset *s, int occluded, int nthreads)
{
    const job j = {tr, s, occluded};
    pool p = {&j, NULL, s->nbatches, 0, 0};
    double best = 1e30;
    for (int r = 0; r < repeats; r++) best = fmin(best, run_pool(&p, nthreads));
    return (double)s->nrays / best * 1e-6;
}

/* ---- the scene setup shared with the Embree comparison ------------------------------ */

#define SCENES "../shared/scenes/"

static const float bunny_eye[3] = {0.03327f, 0.1937f, 0.3326f};
static const float bunny_target[3] = {-0.01684f, 0.1102f, -0.001537f};
static const float bunny_up[3] = {0.0f, 1.0f, 0.0f};
static const float bunny_light[3] = {0.1576f, 0.3603f, 0.1661f};

typedef struct bench_scene {
    char name[64];          /* suffix of the output names: bunny, teapot, ... */
    char source[256];       /* what sc_load takes for the same scene (the graph bench) */
    bmesh mesh;
    bcam cam;
    float light[3];
    float eps;
    rayset prim64, prim16, shadow, random;
} bench_scene;

/* Loads SCENE's triangles, camera and first light: NULL or "bunny" is
 * ../shared/scenes/bunny.obj with the camera and light of ../shared/scenes/README.md;
 * anything else goes through sc_load (a built-in name, a .scene or a mesh file) and uses
 * the scene's camera and its first light (the eye when it has none). */
static int scene_load(bench_scene *b, const char *scene)
{
    memset(b, 0, sizeof *b);
    if (!scene || !strcmp(scene, "bunny")) {
        snprintf(b->name, sizeof b->name, "bunny");
        snprintf(b->source, sizeof b->source, SCENES "bunny.obj");
        if (bench_load_obj(SCENES "bunny.obj", &b->mesh) != 0) {
            printf("# cannot read " SCENES "bunny.obj\n");
            return -1;
        }
        b->cam = make_cam(bunny_eye, bunny_target, bunny_up, 40.0f);
        memcpy(b->light, bunny_light, sizeof b->light);
    } else {
        sc_scene *sc;
        sc_geometry g;
        char err[SC_ERR_MAX];
        if (sc_load(scene, &sc, err) != 0) {
            printf("# %s\n", err);
            return -1;
        }
        if (sc_flatten(sc, &g, err) != 0) {
            printf("# %s\n", err);
            sc_free(sc);
            return -1;
        }
        const char *base = strrchr(scene, '/') ? strrchr(scene, '/') + 1 : scene;
        snprintf(b->name, sizeof b->name, "%.*s", (int)strcspn(base, "."), base);
        snprintf(b->source, sizeof b->source, "%s", scene);
        b->mesh.nv = g.nvertices;
        b->mesh.nt = g.ntriangles;
        b->mesh.pos = malloc(3 * g.nvertices * sizeof *b->mesh.pos + 16);
        b->mesh.idx = malloc(3 * g.ntriangles * sizeof *b->mesh.idx);
        memcpy(b->mesh.pos, g.positions, 3 * g.nvertices * sizeof *b->mesh.pos);
        memcpy(b->mesh.idx, g.indices, 3 * g.ntriangles * sizeof *b->mesh.idx);
        const sc_camera *c = &sc->camera;
        b->cam = make_cam(c->eye, c->target, c->up, c->fovy_deg);
        memcpy(b->light, sc->nlights ? sc->lights[0].position : c->eye, sizeof b->light);
        sc_geometry_free(&g);
        sc_free(sc);
    }
    b->eps = scene_eps(&b->mesh);
    return 0;
}

/* Makes every ray set of a loaded scene; the shadow rays come from hits found by tr. */
static void scene_rays(bench_scene *b, const tracer *tr)
{
    primary_set(&b->cam, 8, &b->prim64);
    primary_set(&b->cam, 4, &b->prim16);
    const job j = {tr, &b->prim64, 0};
    run_batches(&j, 0, b->prim64.nbatches);
    shadow_set(&b->prim64, b->light, b->eps, &b->shadow);
    random_set(&b->mesh, (size_t)RES * RES, &b->random);
}

static void scene_free(bench_scene *b)
{
    rayset_free(&b->prim64);
    rayset_free(&b->prim16);
    rayset_free(&b->shadow);
    rayset_free(&b->random);
    bmesh_free(&b->mesh);
}

/* The kernels' instruction set, so every report says which one it measured. */
static void print_isa(const rt_bvh *bvh)
{
    printf("# rt_isa %s (GRAMPS_ISA=baseline forces the SSE kernels)\n", rt_isa_name(bvh->isa));
}

#ifndef BENCH_RT_NO_MAIN

static double rate_thesis(const thesis *w, int nthreads)
{
    pool p = {NULL, w, (size_t)(RES / TILE) * (RES / TILE), 0, 0};
    double best = 1e30;
    size_t rays = 0;
    for (int r = 0; r < repeats; r++) {
        best = fmin(best, run_pool(&p, nthreads));
        rays = p.rays;
    }
    return (double)rays / best * 1e-6;
}

static void bench_builds(void)
{
    static const char *files[][2] = {{"bunny.obj", "bunny"},       {"dragon.obj", "dragon"},
                                     {"horse.obj", "horse"},       {"teapot.obj", "teapot"},
                                     {"CornellBox-Original.obj", "cornell"}};
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        bmesh m;
        char path[256];
        snprintf(path, sizeof path, SCENES "%s", files[f][0]);
        if (bench_load_obj(path, &m) != 0) {
            printf("# cannot read %s\n", path);
            continue;
        }
        double best = 1e30;
        for (int r = 0; r < repeats; r++) {
            rt_bvh *bvh = rt_bvh_build(m.pos, m.idx, m.nt, NULL);
            best = fmin(best, rt_bvh_get_stats(bvh)->build_ms);
            if (r == repeats - 1) {
                printf("# ");
                rt_bvh_print_stats(rt_bvh_get_stats(bvh), files[f][1], stdout);
            }
            rt_bvh_free(bvh);
        }
        printf("rt_build_%s %.2f ms\n", files[f][1], best);
        bmesh_free(&m);
    }
}

/* Whether workload what runs: every one unless --only named others. */
static const char *only;
static const char *const workloads[] = {"primary_packet64", "primary_packet16", "primary_single",
                                        "shadow_packet", "shadow_single", "random_single",
                                        "random_any_single", "thesis"};

/* The first name in an --only list that is no workload, or NULL. */
static const char *unknown_workload(const char *list, char *buf, size_t len)
{
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        int known = 0;
        for (size_t k = 0; k < sizeof workloads / sizeof *workloads; k++)
            known |= strlen(workloads[k]) == n && !strncmp(workloads[k], p, n);
        if (!known) {
            snprintf(buf, len, "%.*s", (int)n, p);
            return buf;
        }
        p += n + (p[n] == ',');
    }
    return NULL;
}

static int wanted(const char *what)
{
    if (!only) return 1;
    const size_t n = strlen(what);
    for (const char *p = strstr(only, what); p; p = strstr(p + 1, what))
        if ((p == only || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 1;
    return 0;
}

/* Returns 0, or -1 when the scene cannot be loaded (scene_load printed why). */
static int bench_scene_kernels(const char *scene, int threads)
{
    bench_scene b;
    if (scene_load(&b, scene) != 0) return -1;
    rt_bvh *bvh = rt_bvh_build(b.mesh.pos, b.mesh.idx, b.mesh.nt, NULL);
    print_isa(bvh);
    const tracer packet = {"packet", our_closest_packet, our_occluded_packet, bvh};
    const tracer single = {"single", our_closest_single, our_occluded_single, bvh};
    scene_rays(&b, &packet);
    /* 1 thread keeps the historical names; more threads get a _<n>t suffix. */
    char sfx[80];
    if (threads == 1) snprintf(sfx, sizeof sfx, "%s", b.name);
    else snprintf(sfx, sizeof sfx, "%dt_%s", threads, b.name);
    if (wanted("primary_packet64"))
        printf("rt_primary_packet64_%s %.2f Mrays/s\n", sfx, rate_job(&packet, &b.prim64, 0, threads));
    if (wanted("primary_packet16"))
        printf("rt_primary_packet16_%s %.2f Mrays/s\n", sfx, rate_job(&packet, &b.prim16, 0, threads));
    if (wanted("primary_single"))
        printf("rt_primary_single_%s %.2f Mrays/s\n", sfx, rate_job(&single, &b.prim64, 0, threads));
    if (wanted("shadow_packet"))
        printf("rt_shadow_packet_%s %.2f Mrays/s\n", sfx, rate_job(&packet, &b.shadow, 1, threads));
    if (wanted("shadow_single"))
        printf("rt_shadow_single_%s %.2f Mrays/s\n", sfx, rate_job(&single, &b.shadow, 1, threads));
    if (wanted("random_single"))
        printf("rt_random_single_%s %.2f Mrays/s\n", sfx, rate_job(&single, &b.random, 0, threads));
    if (wanted("random_any_single"))
        printf("rt_random_any_single_%s %.2f Mrays/s\n", sfx, rate_job(&single, &b.random, 1, threads));
    if (wanted("thesis")) {
        const thesis w = {&packet, &b.mesh, &b.cam, {b.light[0], b.light[1], b.light[2]}, b.eps};
        printf("rt_thesis_%s %.2f Mrays/s\n", sfx, rate_thesis(&w, threads));
    }
    if (!only) {
        rt_packet_stats st = {0};
        for (size_t i = 0; i < b.prim64.nbatches; i++)
            rt_intersect_packet(bvh, b.prim64.rays + 64 * i, 64, b.prim64.hits + 64 * i, &st);
        printf("# ");
        rt_packet_stats_print(&st, "primary 8x8", stdout);
        memset(&st, 0, sizeof st);
        for (size_t i = 0; i < b.shadow.nbatches; i++) {
            const size_t s0 = b.shadow.start[i];
            rt_occluded_packet(bvh, b.shadow.rays + s0, (int)(b.shadow.start[i + 1] - s0),
                               b.shadow.occ + s0, &st);
        }
        printf("# ");
        rt_packet_stats_print(&st, "shadow", stdout);
    }
    scene_free(&b);
    rt_bvh_free(bvh);
    return 0;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: bench_rt_kernels [--scene S] [--threads N] [--repeats N] [--only LIST] "
            "[--no-builds]\n"
            "  --scene S    bunny (default: ../shared/scenes/bunny.obj, README camera and light),\n"
            "               a built-in (teapot, courtyard, fairy, cornell), a .scene or mesh file\n"
            "  --threads N  threads tracing (default 1; N > 1 adds _<N>t to the names)\n"
            "  --repeats N  best of N runs per figure (default 5)\n"
            "  --only LIST  comma-separated workloads: primary_packet64, primary_packet16,\n"
            "               primary_single, shadow_packet, shadow_single, random_single,\n"
            "               random_any_single, thesis (implies --no-builds)\n"
            "  --no-builds  skip the build timings of the ../shared/scenes meshes\n"
            "GRAMPS_ISA=baseline forces the SSE kernels; the '# rt_isa' line names the ones used.\n");
}

int main(int argc, char **argv)
{
    const char *scene = NULL;
    int threads = 1, builds = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--no-builds")) {
            builds = 0;
        } else if (v && !strcmp(a, "--scene")) {
            scene = v, i++;
        } else if (v && !strcmp(a, "--threads") && atoi(v) >= 1 && atoi(v) <= 64) {
            threads = atoi(v), i++;
        } else if (v && !strcmp(a, "--repeats") && atoi(v) >= 1) {
            repeats = atoi(v), i++;
        } else if (v && !strcmp(a, "--only")) {
            only = v, builds = 0, i++;
        } else {
            fprintf(stderr, "bench_rt_kernels: bad argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    char bad[64];
    if (only && unknown_workload(only, bad, sizeof bad)) {
        fprintf(stderr, "bench_rt_kernels: --only: unknown workload '%s'\n", bad);
        usage(stderr);
        return 2;
    }
    if (builds) bench_builds();
    return bench_scene_kernels(scene, threads) == 0 ? 0 : 1;
}

#endif
