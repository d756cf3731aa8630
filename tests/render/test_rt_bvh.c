/* Tests of the ray-tracing kernels (raytracer/): BVH build, single-ray and packet
 * traversal, against a brute-force loop over all triangles with the same watertight test.
 *
 * Meshes: every OBJ in ../shared/scenes (read by a small parser here: v and f lines,
 * fan triangulation in file order, negative indices, a/b/c forms), random triangle soups
 * with duplicates and degenerate triangles, icospheres and an axis-aligned grid box for
 * watertightness. Every comparison runs the baseline (SSE, 4-wide) kernels and, when the
 * CPU has AVX2, the AVX2 (8-wide) ones too, and checks that the two agree bit for bit.
 * Ray counts are modest so the program also fits under ThreadSanitizer; RT_TEST_SCALE=n
 * multiplies them. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raytracer/bvh.h"
#include "raytracer/bvh_traverse.h"
#include "raytracer/isa.h"
#include "raytracer/packet.h"
#include "raytracer/ray.h"
#include "raytracer/tri_intersect.h"
#include "tests/check.h"

/* ---- meshes ------------------------------------------------------------------------ */

typedef struct mesh {
    float *pos;
    size_t nv, capv;
    uint32_t *idx;
    size_t nt, capt;
} mesh;

static void mesh_free(mesh *m)
{
    free(m->pos);
    free(m->idx);
    memset(m, 0, sizeof *m);
}

static uint32_t mesh_vertex(mesh *m, float x, float y, float z)
{
    if (m->nv == m->capv) {
        m->capv = m->capv ? 2 * m->capv : 64;
        m->pos = realloc(m->pos, 3 * m->capv * sizeof *m->pos);
    }
    m->pos[3 * m->nv] = x;
    m->pos[3 * m->nv + 1] = y;
    m->pos[3 * m->nv + 2] = z;
    return (uint32_t)m->nv++;
}

static void mesh_tri(mesh *m, uint32_t a, uint32_t b, uint32_t c)
{
    if (m->nt == m->capt) {
        m->capt = m->capt ? 2 * m->capt : 64;
        m->idx = realloc(m->idx, 3 * m->capt * sizeof *m->idx);
    }
    m->idx[3 * m->nt] = a;
    m->idx[3 * m->nt + 1] = b;
    m->idx[3 * m->nt + 2] = c;
    m->nt++;
}

static const float *vtx(const mesh *m, size_t tri, int k)
{
    return m->pos + 3 * (size_t)m->idx[3 * tri + (size_t)k];
}

/* One OBJ face index token ("7", "-3", "7/2/5", "7//5") -> 0-based vertex index. */
static int obj_index(const char *tok, size_t nv, uint32_t *out)
{
    char *end;
    long i = strtol(tok, &end, 10);
    if (end == tok || i == 0) return -1;
    i = i < 0 ? (long)nv + i : i - 1;
    if (i < 0 || (size_t)i >= nv) return -1;
    *out = (uint32_t)i;
    return 0;
}

static int obj_face(mesh *m, char *rest)
{
    uint32_t first = 0, prev = 0, cur;
    int k = 0;
    for (char *tok = strtok(rest, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n"), k++) {
        if (obj_index(tok, m->nv, &cur) != 0) return -1;
        if (k == 0) first = cur;
        else if (k >= 2) mesh_tri(m, first, prev, cur);   /* fan, in file order */
        prev = cur;
    }
    return 0;
}

static int load_obj(const char *path, mesh *m)
{
    memset(m, 0, sizeof *m);
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    char line[4096];
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        char *s = line;
        while (*s == ' ' || *s == '\t') s++;
        if (s[0] == 'v' && (s[1] == ' ' || s[1] == '\t')) {
            float x, y, z;
            if (sscanf(s + 2, "%f %f %f", &x, &y, &z) != 3) rc = -1;
            else mesh_vertex(m, x, y, z);
        } else if (s[0] == 'f' && (s[1] == ' ' || s[1] == '\t')) {
            rc = obj_face(m, s + 2);
        }
    }
    fclose(f);
    if (rc != 0) mesh_free(m);
    return rc;
}

static void mesh_bounds(const mesh *m, float lo[3], float hi[3])
{
    for (int a = 0; a < 3; a++) {
        lo[a] = INFINITY;
        hi[a] = -INFINITY;
    }
    for (size_t i = 0; i < 3 * m->nt; i++)
        for (int a = 0; a < 3; a++) {
            lo[a] = fminf(lo[a], m->pos[3 * (size_t)m->idx[i] + a]);
            hi[a] = fmaxf(hi[a], m->pos[3 * (size_t)m->idx[i] + a]);
        }
}

/* Midpoint vertex of edge (a, b), shared between the two triangles using the edge. */
typedef struct edge_cache {
    uint32_t (*e)[3];
    size_t n;
} edge_cache;

static uint32_t midpoint(mesh *m, edge_cache *ec, uint32_t a, uint32_t b, float r)
{
    const uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
    for (size_t i = 0; i < ec->n; i++)
        if (ec->e[i][0] == lo && ec->e[i][1] == hi) return ec->e[i][2];
    float p[3];
    double len = 0.0;
    for (int k = 0; k < 3; k++) {
        p[k] = m->pos[3 * a + k] + m->pos[3 * b + k];
        len += (double)p[k] * p[k];
    }
    const float s = (float)(r / sqrt(len));
    ec->e = realloc(ec->e, (ec->n + 1) * sizeof *ec->e);
    ec->e[ec->n][0] = lo;
    ec->e[ec->n][1] = hi;
    ec->e[ec->n][2] = mesh_vertex(m, p[0] * s, p[1] * s, p[2] * s);
    return ec->e[ec->n++][2];
}

/* Closed icosphere of radius r around c (vertices shared, so edges match exactly). */
static void add_icosphere(mesh *m, const float c[3], float r, int levels)
{
    const float t = 1.6180339887f;
    const float v[12][3] = {{-1, t, 0}, {1, t, 0}, {-1, -t, 0}, {1, -t, 0},
                            {0, -1, t}, {0, 1, t}, {0, -1, -t}, {0, 1, -t},
                            {t, 0, -1}, {t, 0, 1}, {-t, 0, -1}, {-t, 0, 1}};
    static const uint32_t f[20][3] = {
        {0, 11, 5}, {0, 5, 1},  {0, 1, 7},   {0, 7, 10}, {0, 10, 11}, {1, 5, 9}, {5, 11, 4},
        {11, 10, 2}, {10, 7, 6}, {7, 1, 8},  {3, 9, 4},  {3, 4, 2},   {3, 2, 6}, {3, 6, 8},
        {3, 8, 9},  {4, 9, 5},  {2, 4, 11}, {6, 2, 10}, {8, 6, 7},   {9, 8, 1}};
    mesh s = {0};
    const float scale = r / sqrtf(1.0f + t * t);
    for (int i = 0; i < 12; i++) mesh_vertex(&s, v[i][0] * scale, v[i][1] * scale, v[i][2] * scale);
    for (int i = 0; i < 20; i++) mesh_tri(&s, f[i][0], f[i][1], f[i][2]);
    for (int l = 0; l < levels; l++) {
        mesh d = {0};
        edge_cache ec = {0};
        for (size_t i = 0; i < s.nv; i++) mesh_vertex(&d, s.pos[3 * i], s.pos[3 * i + 1], s.pos[3 * i + 2]);
        for (size_t i = 0; i < s.nt; i++) {
            const uint32_t a = s.idx[3 * i], b = s.idx[3 * i + 1], cc = s.idx[3 * i + 2];
            const uint32_t ab = midpoint(&d, &ec, a, b, r), bc = midpoint(&d, &ec, b, cc, r),
                           ca = midpoint(&d, &ec, cc, a, r);
            mesh_tri(&d, a, ab, ca);
            mesh_tri(&d, b, bc, ab);
            mesh_tri(&d, cc, ca, bc);
            mesh_tri(&d, ab, bc, ca);
        }
        free(ec.e);
        mesh_free(&s);
        s = d;
    }
    const uint32_t base = (uint32_t)m->nv;
    for (size_t i = 0; i < s.nv; i++)
        mesh_vertex(m, s.pos[3 * i] + c[0], s.pos[3 * i + 1] + c[1], s.pos[3 * i + 2] + c[2]);
    for (size_t i = 0; i < s.nt; i++)
        mesh_tri(m, base + s.idx[3 * i], base + s.idx[3 * i + 1], base + s.idx[3 * i + 2]);
    mesh_free(&s);
}

/* ---- random numbers and rays ------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static void rng_seed(uint64_t s) { rng_state = s * 0x9e3779b97f4a7c15ull + 1; }

static float frand(void)   /* [0, 1) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (float)(rng_state >> 40) * (1.0f / 16777216.0f);
}

static void rand_dir(float d[3])
{
    const float z = 2.0f * frand() - 1.0f, phi = 6.2831853f * frand();
    const float r = sqrtf(fmaxf(0.0f, 1.0f - z * z));
    d[0] = r * cosf(phi);
    d[1] = r * sinf(phi);
    d[2] = z;
}

/* Ray-count multiplier in 1/4 units: RT_TEST_SCALE=n gives n times the default; under
 * ThreadSanitizer (about 10x slower) the brute-force loops get a quarter of the rays. */
static int test_scale4(void)
{
    const char *s = getenv("RT_TEST_SCALE");
    const int n = s ? atoi(s) : 1;
#if defined(__SANITIZE_THREAD__)
    return n > 0 ? n : 1;
#else
    return 4 * (n > 0 ? n : 1);
#endif
}

static rt_ray make_ray(const float o[3], const float d[3], float tmin, float tmax)
{
    return (rt_ray){{o[0], o[1], o[2]}, tmin, {d[0], d[1], d[2]}, tmax};
}

/* Rays from random points around the bounds in random directions. */
static void random_rays(const float lo[3], const float hi[3], rt_ray *r, int n)
{
    for (int i = 0; i < n; i++) {
        float o[3], d[3];
        for (int a = 0; a < 3; a++) {
            const float ext = hi[a] - lo[a];
            o[a] = lo[a] - 0.25f * ext + 1.5f * ext * frand();
        }
        rand_dir(d);
        r[i] = make_ray(o, d, 0.0f, INFINITY);
    }
}

typedef struct camera {
    float eye[3], target[3], up[3], fovy;
} camera;

static void normalize(float v[3])
{
    const float l = sqrtf(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int a = 0; a < 3; a++) v[a] /= l;
}

static void cross(const float a[3], const float b[3], float o[3])
{
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}

/* Primary ray through pixel (x, y) of a res x res image (row 0 at the top). */
static rt_ray camera_ray(const camera *c, int res, float x, float y)
{
    float w[3], u[3], v[3], d[3];
    for (int a = 0; a < 3; a++) w[a] = c->target[a] - c->eye[a];
    normalize(w);
    cross(w, c->up, u);
    normalize(u);
    cross(u, w, v);
    const float h = tanf(c->fovy * 3.14159265f / 360.0f);
    const float sx = (2.0f * (x + 0.5f) / (float)res - 1.0f) * h;
    const float sy = (1.0f - 2.0f * (y + 0.5f) / (float)res) * h;
    for (int a = 0; a < 3; a++) d[a] = w[a] + sx * u[a] + sy * v[a];
    return make_ray(c->eye, d, 0.0f, INFINITY);
}

/* 8x8-pixel tiles at random places of a 1024x1024 image: coherent packets of 64. */
static void camera_tiles(const camera *c, rt_ray *r, int ntiles)
{
    for (int t = 0; t < ntiles; t++) {
        const int tx = (int)(frand() * 128) * 8, ty = (int)(frand() * 128) * 8;
        for (int k = 0; k < 64; k++)
            r[64 * t + k] = camera_ray(c, 1024, (float)(tx + k % 8), (float)(ty + k / 8));
    }
}

/* ---- brute force and comparisons --------------------------------------------------- */

static void brute_closest(const mesh *m, const rt_ray *r, rt_hit *h)
{
    rt_wtray w;
    rt_wtray_init(&w, r->org, r->dir);
    *h = (rt_hit){r->tmax, 0.0f, 0.0f, RT_NO_HIT};
    for (size_t i = 0; i < m->nt; i++) {
        float t, u, v;
        if (!rt_tri_intersect(&w, vtx(m, i, 0), vtx(m, i, 1), vtx(m, i, 2), r->tmin, h->t, &t,
                              &u, &v))
            continue;
        if (t < h->t || (t == h->t && (uint32_t)i < h->prim)) *h = (rt_hit){t, u, v, (uint32_t)i};
    }
}

static int same_hit(const rt_hit *a, const rt_hit *b)
{
    if (a->prim != b->prim) return 0;
    if (a->prim == RT_NO_HIT) return 1;
    return a->t == b->t && a->u == b->u && a->v == b->v;
}

typedef struct tally {
    const char *what;
    int rays, hits, bad;
} tally;

static void note(tally *tl, const rt_ray *r, const rt_hit *got, const rt_hit *want, int ok)
{
    tl->rays++;
    tl->hits += want->prim != RT_NO_HIT;
    if (ok) return;
    if (tl->bad++ < 5)
        fprintf(stderr,
                "  %s: ray o=(%.9g %.9g %.9g) d=(%.9g %.9g %.9g) [%g,%g]: got prim %u t=%.9g "
                "u=%.9g v=%.9g, brute force prim %u t=%.9g u=%.9g v=%.9g\n",
                tl->what, r->org[0], r->org[1], r->org[2], r->dir[0], r->dir[1], r->dir[2],
                r->tmin, r->tmax, got->prim, got->t, got->u, got->v, want->prim, want->t,
                want->u, want->v);
}

/* The kernels a test can run on bvh: the baseline always, AVX2 when the CPU has it and
 * the build made its nodes (not under GRAMPS_ISA=baseline). Says once when AVX2 is not
 * tested. Returns the count. */
static int test_isas(const rt_bvh *bvh, rt_isa isas[2])
{
    static int noted;
    int n = 0;
    isas[n++] = RT_ISA_BASELINE;
    if (rt_isa_available(RT_ISA_AVX2) && (bvh->nodes8 || bvh->root == RT_EMPTY_REF))
        isas[n++] = RT_ISA_AVX2;
    else if (!noted++)
        printf("note: AVX2 kernels not tested (%s)\n",
               rt_isa_available(RT_ISA_AVX2) ? "GRAMPS_ISA=baseline" : "this CPU lacks AVX2");
    return n;
}

/* The stream kernels on rays[0..n), in streams of every size up to RT_STREAM_MAX in
 * turn and in one call for all n, give the single-ray answers (hit1, occ1) bit for bit,
 * misses included. */
static void check_streams(const rt_bvh *bvh, const rt_ray *rays, int n, const rt_hit *hit1,
                          const uint8_t *occ1, const char *label)
{
    rt_hit h[RT_STREAM_MAX];
    uint8_t occ[RT_STREAM_MAX];
    int bad_hits = 0, bad_occ = 0;
    for (int i = 0, size = 1; i < n; i += size, size = size % RT_STREAM_MAX + 1) {
        const int m = n - i < size ? n - i : size;
        rt_intersect_stream(bvh, rays + i, m, h);
        rt_occluded_stream(bvh, rays + i, m, occ);
        for (int j = 0; j < m; j++) {
            bad_hits += memcmp(&h[j], &hit1[i + j], sizeof h[j]) != 0;
            bad_occ += occ[j] != occ1[i + j];
        }
    }
    rt_hit *all = malloc((size_t)n * sizeof *all);   /* one call for all n, past RT_STREAM_MAX */
    uint8_t *all_occ = malloc((size_t)n);
    rt_intersect_stream(bvh, rays, n, all);
    rt_occluded_stream(bvh, rays, n, all_occ);
    for (int i = 0; i < n; i++) {
        bad_hits += memcmp(&all[i], &hit1[i], sizeof all[i]) != 0;
        bad_occ += all_occ[i] != occ1[i];
    }
    free(all);
    free(all_occ);
    CHECK_MSG(bad_hits == 0 && bad_occ == 0, "%s: %d closest and %d any hits of %d differ "
              "between streams and single rays", label, bad_hits, bad_occ, n);
}

/* Checks single-ray and packet closest hit and any hit for n rays against brute force,
 * with every ISA test_isas gives, and the AVX2 answers against the baseline's bit for bit
 * (t, u, v, primitive, occlusion). want may be NULL (computed here) or precomputed. */
static void compare_rays(const mesh *m, rt_bvh *bvh, const rt_ray *rays, int n,
                         int packet, const char *what, rt_hit *want_out)
{
    rt_hit *want = malloc((size_t)n * sizeof *want);
    rt_hit *hit1[2] = {malloc((size_t)n * sizeof(rt_hit)), malloc((size_t)n * sizeof(rt_hit))};
    rt_hit *hitp[2] = {malloc((size_t)n * sizeof(rt_hit)), malloc((size_t)n * sizeof(rt_hit))};
    uint8_t *occ1[2] = {malloc((size_t)n), malloc((size_t)n)};
    uint8_t *occp[2] = {malloc((size_t)n), malloc((size_t)n)};
    for (int i = 0; i < n; i++) brute_closest(m, &rays[i], &want[i]);
    const rt_isa orig = bvh->isa;
    rt_isa isas[2];
    const int nisa = test_isas(bvh, isas);
    for (int k = 0; k < nisa; k++) {
        CHECK(rt_bvh_set_isa(bvh, isas[k]) == 0 && bvh->isa == isas[k]);
        char label[300];
        snprintf(label, sizeof label, "%s [%s]", what, rt_isa_name(isas[k]));
        tally single = {label, 0, 0, 0}, pk = {label, 0, 0, 0}, any1 = {label, 0, 0, 0},
              anyp = {label, 0, 0, 0};
        for (int i = 0; i < n; i++) {
            rt_hit *h = &hit1[k][i];
            const int hit = rt_intersect1(bvh, &rays[i], h);
            note(&single, &rays[i], h, &want[i], same_hit(h, &want[i]) && hit == (h->prim != RT_NO_HIT));
            occ1[k][i] = (uint8_t)rt_occluded1(bvh, &rays[i]);
            note(&any1, &rays[i], h, &want[i], occ1[k][i] == (want[i].prim != RT_NO_HIT));
        }
        rt_hit *got = hitp[k];
        uint8_t *occ = occp[k];
        rt_intersect_packet(bvh, rays, n, got, NULL);
        for (int i = 0; packet && i < n; i++)
            note(&pk, &rays[i], &got[i], &want[i], same_hit(&got[i], &want[i]));
        rt_occluded_packet(bvh, rays, n, occ, NULL);
        for (int i = 0; packet && i < n; i++)
            note(&anyp, &rays[i], &got[i], &want[i], occ[i] == (want[i].prim != RT_NO_HIT));
        CHECK_MSG(single.bad == 0, "%s: %d/%d single-ray closest hits differ", label, single.bad, n);
        CHECK_MSG(any1.bad == 0, "%s: %d/%d single-ray any hits differ", label, any1.bad, n);
        CHECK_MSG(pk.bad == 0, "%s: %d/%d packet closest hits differ", label, pk.bad, n);
        CHECK_MSG(anyp.bad == 0, "%s: %d/%d packet any hits differ", label, anyp.bad, n);
        check_streams(bvh, rays, n, hit1[k], occ1[k], label);
    }
    if (nisa == 2) {            /* misses included: t = tmax, u = v = 0 on both */
        int bits = 0, occs = 0;
        for (int i = 0; i < n; i++) {
            bits += memcmp(&hit1[0][i], &hit1[1][i], sizeof(rt_hit)) != 0;
            occs += occ1[0][i] != occ1[1][i];
        }
        CHECK_MSG(bits == 0 && occs == 0, "%s: %d closest hits and %d any hits of %d differ "
                  "between the baseline and AVX2 kernels", what, bits, occs, n);
        int pbits = 0, poccs = 0;   /* the packet kernels, misses included */
        for (int i = 0; i < n; i++) {
            pbits += memcmp(&hitp[0][i], &hitp[1][i], sizeof(rt_hit)) != 0;
            poccs += occp[0][i] != occp[1][i];
        }
        CHECK_MSG(pbits == 0 && poccs == 0, "%s: %d closest hits and %d any hits of %d differ "
                  "between the baseline and AVX2 packet kernels", what, pbits, poccs, n);
    }
    CHECK(rt_bvh_set_isa(bvh, orig) == 0);
    if (want_out) memcpy(want_out, want, (size_t)n * sizeof *want);
    free(want);
    for (int k = 0; k < 2; k++) {
        free(hit1[k]);
        free(occ1[k]);
        free(hitp[k]);
        free(occp[k]);
    }
}

static rt_bvh *build(const mesh *m)
{
    rt_bvh *bvh = rt_bvh_build(m->pos, m->idx, m->nt, NULL);
    CHECK(bvh != NULL);
    return bvh;
}

/* ---- small cases ------------------------------------------------------------------- */

static void test_single_triangle(void)
{
    mesh m = {0};
    mesh_vertex(&m, 0, 0, 0);
    mesh_vertex(&m, 1, 0, 0);
    mesh_vertex(&m, 0, 1, 0);
    mesh_tri(&m, 0, 1, 2);
    rt_bvh *bvh = build(&m);
    rt_isa isas[2];
    const int nisa = test_isas(bvh, isas);
    for (int k = 0; k < nisa; k++) {
        CHECK(rt_bvh_set_isa(bvh, isas[k]) == 0);
        rt_hit h;
        rt_ray r = {{0.25f, 0.5f, 2.0f}, 0.0f, {0.0f, 0.0f, -1.0f}, INFINITY};
        CHECK(rt_intersect1(bvh, &r, &h) == 1);
        CHECK(h.prim == 0 && h.t == 2.0f && h.u == 0.25f && h.v == 0.5f);
        r.dir[2] = 1.0f;                       /* pointing away */
        CHECK(rt_intersect1(bvh, &r, &h) == 0 && h.prim == RT_NO_HIT);
        r.org[2] = -2.0f;                      /* from behind: both faces count */
        CHECK(rt_intersect1(bvh, &r, &h) == 1 && h.t == 2.0f);
        r.tmax = 2.0f;                         /* inclusive ends */
        CHECK(rt_occluded1(bvh, &r) == 1);
        r.tmax = nextafterf(2.0f, 0.0f);
        CHECK(rt_occluded1(bvh, &r) == 0);
        r.tmax = INFINITY;
        r.tmin = 2.0f;
        CHECK(rt_occluded1(bvh, &r) == 1);
        r.tmin = nextafterf(2.0f, 3.0f);
        CHECK(rt_occluded1(bvh, &r) == 0);
        r = (rt_ray){{0.9f, 0.9f, -1.0f}, 0.0f, {0.0f, 0.0f, 1.0f}, INFINITY};  /* outside */
        CHECK(rt_intersect1(bvh, &r, &h) == 0);
    }
    const rt_bvh_stats *s = rt_bvh_get_stats(bvh);
    CHECK(s->triangles == 1 && s->leaves == 1 && s->inner_nodes == 1 && s->depth == 1);
    CHECK(bvh->nodes8 ? s->inner_nodes8 == 1 && s->depth8 == 1 : s->inner_nodes8 == 0);
    rt_bvh_free(bvh);
    mesh_free(&m);
}

static void test_empty_scene(void)
{
    rt_bvh *bvh = rt_bvh_build(NULL, NULL, 0, NULL);
    CHECK(bvh != NULL);
    rt_ray r[3] = {{{0, 0, 0}, 0.0f, {1, 0, 0}, INFINITY},
                   {{0, 0, 0}, 0.0f, {0, 1, 0}, INFINITY},
                   {{0, 0, 0}, 0.0f, {0, 0, -1}, 5.0f}};
    rt_isa isas[2];
    const int nisa = test_isas(bvh, isas);
    for (int k = 0; k < nisa; k++) {
        CHECK(rt_bvh_set_isa(bvh, isas[k]) == 0);
        rt_hit h[3];
        uint8_t occ[3] = {1, 1, 1};
        CHECK(rt_intersect1(bvh, &r[0], &h[0]) == 0 && h[0].prim == RT_NO_HIT);
        CHECK(rt_occluded1(bvh, &r[0]) == 0);
        rt_intersect_packet(bvh, r, 3, h, NULL);
        rt_occluded_packet(bvh, r, 3, occ, NULL);
        for (int i = 0; i < 3; i++) CHECK(h[i].prim == RT_NO_HIT && occ[i] == 0);
        CHECK(h[2].t == 5.0f);
        memset(occ, 1, sizeof occ);
        memset(h, 0, sizeof h);
        rt_intersect_stream(bvh, r, 3, h);
        rt_occluded_stream(bvh, r, 3, occ);
        for (int i = 0; i < 3; i++) CHECK(h[i].prim == RT_NO_HIT && occ[i] == 0);
        CHECK(h[2].t == 5.0f);
        rt_intersect_stream(bvh, r, 0, h);     /* nothing to trace, nothing written */
        rt_occluded_stream(bvh, r, 0, occ);
    }
    CHECK(rt_bvh_get_stats(bvh)->inner_nodes == 0 && rt_bvh_get_stats(bvh)->inner_nodes8 == 0);
    rt_bvh_free(bvh);
}

/* Rays parallel to the triangles' planes, in the plane and beside it, never hit them. */
static void test_parallel_rays(void)
{
    mesh m = {0};
    for (int i = 0; i < 8; i++) {   /* a strip of triangles in the plane z = 0 */
        const uint32_t a = mesh_vertex(&m, (float)i, 0, 0), b = mesh_vertex(&m, (float)i + 1, 0, 0),
                       c = mesh_vertex(&m, (float)i, 1, 0);
        mesh_tri(&m, a, b, c);
    }
    rt_bvh *bvh = build(&m);
    rt_ray rays[64];
    for (int i = 0; i < 64; i++) {
        const float o[3] = {-1.0f, 0.1f + 0.8f * frand(), i % 2 ? 0.0f : 1e-3f * frand()};
        float d[3] = {1.0f, 0.3f * (frand() - 0.5f), 0.0f};
        rays[i] = make_ray(o, d, 0.0f, INFINITY);
    }
    for (int i = 0; i < 64; i++) {
        rt_hit h;
        CHECK(rt_intersect1(bvh, &rays[i], &h) == 0);
    }
    compare_rays(&m, bvh, rays, 64, 1, "parallel", NULL);
    rt_bvh_free(bvh);
    mesh_free(&m);
}

/* ---- watertightness ---------------------------------------------------------------- */

/* An icosphere is closed: every ray from inside must hit it, and rays aimed exactly at
 * its vertices (or at float midpoints of its edges) from outside must hit it there. */
static void test_watertight_icosphere(void)
{
    mesh m = {0};
    const float c[3] = {0, 0, 0};
    add_icosphere(&m, c, 1.0f, 3);
    rt_bvh *bvh = build(&m);
    const int nv = (int)m.nv;
    rt_ray *rays = malloc((size_t)(4 * nv) * sizeof *rays);
    int n = 0;
    for (int i = 0; i < nv; i++) {
        const float *v = m.pos + 3 * i;
        const float o_in[3] = {0.125f, -0.0625f, 0.25f};
        const float d_in[3] = {v[0] - o_in[0], v[1] - o_in[1], v[2] - o_in[2]};
        rays[n++] = make_ray(c, v, 0.0f, INFINITY);              /* centre through vertex */
        rays[n++] = make_ray(o_in, d_in, 0.0f, INFINITY);        /* off-centre, near vertex */
        const float o[3] = {2 * v[0], 2 * v[1], 2 * v[2]}, d[3] = {-v[0], -v[1], -v[2]};
        rays[n++] = make_ray(o, d, 0.0f, INFINITY);              /* exactly through vertex */
    }
    for (size_t t = 0; t < m.nt && n < 4 * nv; t++) {           /* edge midpoints */
        const float *a = vtx(&m, t, 0), *b = vtx(&m, t, 1);
        const float mid[3] = {0.5f * (a[0] + b[0]), 0.5f * (a[1] + b[1]), 0.5f * (a[2] + b[2])};
        const float o[3] = {2 * mid[0], 2 * mid[1], 2 * mid[2]};
        const float d[3] = {-mid[0], -mid[1], -mid[2]};
        rays[n++] = make_ray(o, d, 0.0f, INFINITY);
    }
    int missed = 0;
    for (int i = 0; i < n; i++) {
        rt_hit h;
        missed += !rt_intersect1(bvh, &rays[i], &h);
    }
    CHECK_MSG(missed == 0, "%d of %d rays through vertices/edges missed", missed, n);
    compare_rays(&m, bvh, rays, n, 1, "icosphere", NULL);
    free(rays);
    rt_bvh_free(bvh);
    mesh_free(&m);
}

static uint32_t grid_vertex(mesh *m, uint32_t *ids, int n, int face, int i, int j)
{
    uint32_t *slot = &ids[(face * (n + 1) + i) * (n + 1) + j];
    if (*slot != UINT32_MAX) return *slot;
    float p[3];
    const int axis = face / 2, side = face % 2;
    p[axis] = side ? (float)n : 0.0f;
    p[(axis + 1) % 3] = (float)i;
    p[(axis + 2) % 3] = (float)j;
    /* Reuse a vertex at the same spot from another face: the box must be closed. */
    for (size_t k = 0; k < m->nv; k++)
        if (m->pos[3 * k] == p[0] && m->pos[3 * k + 1] == p[1] && m->pos[3 * k + 2] == p[2])
            return *slot = (uint32_t)k;
    return *slot = mesh_vertex(m, p[0], p[1], p[2]);
}

/* The surface of [0,n]^3 as an integer grid of triangles with alternating diagonals;
 * axis-aligned rays through grid points hit vertices, edges and diagonals exactly. */
static void grid_box(mesh *m, int n)
{
    uint32_t *ids = malloc((size_t)(6 * (n + 1) * (n + 1)) * sizeof *ids);
    memset(ids, 0xff, (size_t)(6 * (n + 1) * (n + 1)) * sizeof *ids);
    for (int f = 0; f < 6; f++)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                const uint32_t a = grid_vertex(m, ids, n, f, i, j),
                               b = grid_vertex(m, ids, n, f, i + 1, j),
                               c = grid_vertex(m, ids, n, f, i + 1, j + 1),
                               d = grid_vertex(m, ids, n, f, i, j + 1);
                if ((i + j) % 2) {
                    mesh_tri(m, a, b, c);
                    mesh_tri(m, a, c, d);
                } else {
                    mesh_tri(m, a, b, d);
                    mesh_tri(m, b, c, d);
                }
            }
    free(ids);
}

static void test_watertight_grid(void)
{
    const int n = 4;
    mesh m = {0};
    grid_box(&m, n);
    rt_bvh *bvh = build(&m);
    rt_ray rays[6 * 9 * 9];
    int k = 0;
    for (int axis = 0; axis < 3; axis++)
        for (int side = 0; side < 2; side++)
            for (int i = 0; i <= 2 * n; i++)
                for (int j = 0; j <= 2 * n; j++) {
                    float o[3], d[3] = {0, 0, 0};
                    o[axis] = side ? (float)n + 1.0f : -1.0f;
                    d[axis] = side ? -1.0f : 1.0f;
                    o[(axis + 1) % 3] = 0.5f * (float)i;
                    o[(axis + 2) % 3] = 0.5f * (float)j;
                    rays[k++] = make_ray(o, d, 0.0f, INFINITY);
                }
    int bad = 0;
    for (int i = 0; i < k; i++) {
        rt_hit h;
        if (!rt_intersect1(bvh, &rays[i], &h) || h.t != 1.0f) bad++;
    }
    CHECK_MSG(bad == 0, "%d of %d axis rays through grid vertices/edges missed", bad, k);
    compare_rays(&m, bvh, rays, k, 1, "grid box", NULL);
    rt_bvh_free(bvh);
    mesh_free(&m);
}

/* ---- random soups ------------------------------------------------------------------ */

static void random_soup(mesh *m, int ntri)
{
    for (int i = 0; i < ntri; i++) {
        const float s = i % 50 == 0 ? 0.5f : 0.03f;   /* a few large triangles */
        float c[3];
        for (int a = 0; a < 3; a++) c[a] = frand();
        uint32_t v[3];
        for (int k = 0; k < 3; k++)
            v[k] = mesh_vertex(m, c[0] + s * (frand() - 0.5f), c[1] + s * (frand() - 0.5f),
                               c[2] + s * (frand() - 0.5f));
        if (i % 97 == 0) v[2] = v[1];                       /* degenerate: zero area */
        mesh_tri(m, v[0], v[1], v[2]);
        if (i % 31 == 0) mesh_tri(m, v[0], v[1], v[2]);     /* exact duplicate: a tie */
        if (i % 37 == 0) mesh_tri(m, v[1], v[2], v[0]);     /* same triangle, rotated */
    }
}

static void test_random_soups(void)
{
    const int scale4 = test_scale4();
    for (int round = 0; round < 3; round++) {
        rng_seed(100 + (uint64_t)round);
        mesh m = {0};
        random_soup(&m, 1000 + 1500 * round);
        for (int s = 0; s < 8; s++) {
            const float c[3] = {frand(), frand(), frand()};
            add_icosphere(&m, c, 0.02f + 0.1f * frand(), 2);
        }
        rt_bvh *bvh = build(&m);
        float lo[3], hi[3];
        mesh_bounds(&m, lo, hi);
        const int n = 256 * scale4;
        rt_ray *rays = malloc((size_t)n * sizeof *rays);
        random_rays(lo, hi, rays, n);
        compare_rays(&m, bvh, rays, n, 1, "soup random", NULL);
        const camera cam = {{0.5f, 0.5f, 3.0f}, {0.5f, 0.5f, 0.5f}, {0, 1, 0}, 30.0f};
        camera_tiles(&cam, rays, n / 64);
        compare_rays(&m, bvh, rays, n / 64 * 64, 1, "soup camera", NULL);
        free(rays);
        rt_bvh_free(bvh);
        mesh_free(&m);
    }
}

/* Build options change the tree, never the answers. */
static void test_build_options(void)
{
    rng_seed(7);
    mesh m = {0};
    random_soup(&m, 1500);
    float lo[3], hi[3];
    mesh_bounds(&m, lo, hi);
    rt_ray rays[512];
    random_rays(lo, hi, rays, 512);
    const rt_build_opts base = rt_build_opts_default();
    rt_build_opts opts[4] = {base, base, base, base};
    opts[0].max_leaf = 1;
    opts[1].max_leaf = 32;
    opts[1].isect_cost = 0.2f;
    opts[2].bins = 4;
    opts[3].bins = 64;
    opts[3].trav_cost = 3.0f;
    for (int k = 0; k < 4; k++) {
        rt_bvh *bvh = rt_bvh_build(m.pos, m.idx, m.nt, &opts[k]);
        CHECK(bvh != NULL);
        compare_rays(&m, bvh, rays, 512, 1, "build options", NULL);
        rt_bvh_free(bvh);
    }
    mesh_free(&m);
}

static void test_deterministic_build(void)
{
    rng_seed(11);
    mesh m = {0};
    random_soup(&m, 3000);
    rt_bvh *a = build(&m), *b = build(&m);
    CHECK(a->nnodes == b->nnodes && a->nblocks == b->nblocks && a->root == b->root);
    CHECK(memcmp(a->nodes, b->nodes, a->nnodes * sizeof *a->nodes) == 0);
    CHECK(memcmp(a->tris, b->tris, a->nblocks * sizeof *a->tris) == 0);
    CHECK(a->nnodes8 == b->nnodes8 && a->root8 == b->root8);
    CHECK(a->nnodes8 == 0 || memcmp(a->nodes8, b->nodes8, a->nnodes8 * sizeof *a->nodes8) == 0);
    const rt_bvh_stats *s = rt_bvh_get_stats(a);
    CHECK(s->triangles == m.nt);
    CHECK(fabs(s->avg_leaf_size * (double)s->leaves - (double)m.nt) < 0.5);
    CHECK(s->depth > 1 && s->sah_cost > 0.0 && s->memory_bytes > m.nt * 36);
    CHECK(s->block_fill > 0.25 && s->block_fill <= 1.0);
    rt_bvh_free(a);
    rt_bvh_free(b);
    mesh_free(&m);
}

/* GRAMPS_ISA=baseline gives the baseline's BVH (no 8-wide nodes) and kernels; otherwise
 * an AVX2 CPU gets the 8-wide nodes and the AVX2 kernels. rt_bvh_set_isa refuses what the
 * BVH or the CPU cannot run. */
static void test_isa_selection(void)
{
    rng_seed(13);
    mesh m = {0};
    random_soup(&m, 300);
    const char *env = getenv("GRAMPS_ISA");
    char *saved = env ? strdup(env) : NULL;
    setenv("GRAMPS_ISA", "baseline", 1);
    CHECK(rt_isa_best() == RT_ISA_BASELINE);
    rt_bvh *base = build(&m);
    CHECK(base->isa == RT_ISA_BASELINE && base->nodes8 == NULL && base->root8 == RT_EMPTY_REF);
    CHECK(rt_bvh_get_stats(base)->inner_nodes8 == 0 && rt_bvh_get_stats(base)->memory8_bytes == 0);
    CHECK(rt_bvh_set_isa(base, RT_ISA_AVX2) == -1 && base->isa == RT_ISA_BASELINE);
    unsetenv("GRAMPS_ISA");
    rt_bvh *best = build(&m);
    if (rt_isa_available(RT_ISA_AVX2)) {
        CHECK(rt_isa_best() == RT_ISA_AVX2);
        CHECK(best->isa == RT_ISA_AVX2 && best->nodes8 != NULL && best->root8 == 0);
        const rt_bvh_stats *s = rt_bvh_get_stats(best);
        CHECK(s->inner_nodes8 == best->nnodes8 && s->depth8 >= 1 && s->depth8 <= s->depth);
        CHECK(s->memory8_bytes == best->nnodes8 * sizeof(rt_node8) && s->sah_cost8 > 0.0);
        CHECK(rt_bvh_set_isa(best, RT_ISA_BASELINE) == 0 && best->isa == RT_ISA_BASELINE);
        CHECK(rt_bvh_set_isa(best, RT_ISA_AVX2) == 0 && best->isa == RT_ISA_AVX2);
    } else {
        printf("note: this CPU lacks AVX2; only the baseline is selectable\n");
        CHECK(best->isa == RT_ISA_BASELINE && best->nodes8 == NULL);
        CHECK(rt_bvh_set_isa(best, RT_ISA_AVX2) == -1);
    }
    CHECK(!strcmp(rt_isa_name(RT_ISA_BASELINE), "baseline") && !strcmp(rt_isa_name(RT_ISA_AVX2), "avx2"));
    /* Same triangle blocks either way: the 8-wide nodes only add a way down to them. */
    CHECK(base->nblocks == best->nblocks &&
          memcmp(base->tris, best->tris, base->nblocks * sizeof *base->tris) == 0);
    CHECK(base->nnodes == best->nnodes &&
          memcmp(base->nodes, best->nodes, base->nnodes * sizeof *base->nodes) == 0);
    if (saved) setenv("GRAMPS_ISA", saved, 1);
    free(saved);
    rt_bvh_free(base);
    rt_bvh_free(best);
    mesh_free(&m);
}

/* Leaf references of a wide tree with their boxes, by a walk from the root; also checks
 * that every inner child comes after its parent (depth-first layout). */
typedef struct leaf_box {
    uint32_t ref;
    float box[6];
} leaf_box;

static int cmp_leaf_box(const void *a, const void *b)
{
    const uint32_t x = ((const leaf_box *)a)->ref, y = ((const leaf_box *)b)->ref;
    return (x > y) - (x < y);
}

static void collect4(const rt_bvh *bvh, uint32_t node, leaf_box *out, size_t *n, int *bad)
{
    const rt_node4 *nd = &bvh->nodes[node];
    for (int i = 0; i < 4; i++) {
        const uint32_t ref = nd->child[i];
        if (ref == RT_EMPTY_REF) continue;
        if (!rt_ref_is_leaf(ref)) {
            *bad += ref <= node;
            collect4(bvh, ref, out, n, bad);
            continue;
        }
        out[*n].ref = ref;
        for (int p = 0; p < 6; p++) out[*n].box[p] = nd->b[p][i];
        ++*n;
    }
}

static void collect8(const rt_bvh *bvh, uint32_t node, leaf_box *out, size_t *n, int *bad)
{
    const rt_node8 *nd = &bvh->nodes8[node];
    for (int i = 0; i < 8; i++) {
        const uint32_t ref = nd->child[i];
        if (ref == RT_EMPTY_REF) {          /* empty slots fail every slab test */
            for (int a = 0; a < 3; a++) *bad += !(nd->b[2 * a][i] > nd->b[2 * a + 1][i]);
            continue;
        }
        if (!rt_ref_is_leaf(ref)) {
            *bad += ref <= node || ref >= bvh->nnodes8;
            if (ref > node && ref < bvh->nnodes8) collect8(bvh, ref, out, n, bad);
            continue;
        }
        out[*n].ref = ref;
        for (int p = 0; p < 6; p++) out[*n].box[p] = nd->b[p][i];
        ++*n;
    }
}

/* The 8-wide tree reaches exactly the 4-wide tree's leaves, each with the same (widened)
 * box, so both kernels test the same blocks under the same margin. */
static void test_bvh8_structure(void)
{
    rng_seed(17);
    mesh m = {0};
    random_soup(&m, 4000);
    const rt_build_opts base = rt_build_opts_default();
    rt_build_opts opts[3] = {base, base, base};
    opts[1].max_leaf = 1;
    opts[2].max_leaf = 32;
    for (int k = 0; k < 3; k++) {
        rt_bvh *bvh = rt_bvh_build(m.pos, m.idx, m.nt, &opts[k]);
        CHECK(bvh != NULL);
        if (!bvh->nodes8) {
            test_isas(bvh, (rt_isa[2]){0});   /* prints the note */
            rt_bvh_free(bvh);
            break;
        }
        const rt_bvh_stats *s = rt_bvh_get_stats(bvh);
        leaf_box *l4 = malloc(s->leaves * sizeof *l4), *l8 = malloc(s->leaves * sizeof *l8);
        size_t n4 = 0, n8 = 0;
        int bad = 0;
        collect4(bvh, bvh->root, l4, &n4, &bad);
        collect8(bvh, bvh->root8, l8, &n8, &bad);
        CHECK(bad == 0 && n4 == s->leaves && n8 == s->leaves);
        qsort(l4, n4, sizeof *l4, cmp_leaf_box);
        qsort(l8, n8, sizeof *l8, cmp_leaf_box);
        CHECK(memcmp(l4, l8, n4 * sizeof *l4) == 0);
        CHECK(s->inner_nodes8 < s->inner_nodes && s->depth8 <= s->depth);
        free(l4);
        free(l8);
        rt_bvh_free(bvh);
    }
    mesh_free(&m);
}

/* 300 copies of one triangle (no binned split can separate them, so the build falls
 * back to median splits) plus a geometric series of ever smaller triangles (nested
 * boxes): ties go to the smallest id. */
static void test_coincident_and_deep(void)
{
    mesh m = {0};
    for (int i = 0; i < 40; i++) {       /* sizes and positions 2^-i: a deep tree */
        const float s = ldexpf(1.0f, -i);
        const uint32_t a = mesh_vertex(&m, s, 0, -1), b = mesh_vertex(&m, 2 * s, 0, -1),
                       c = mesh_vertex(&m, s, s, -1);
        mesh_tri(&m, a, b, c);
    }
    const uint32_t a = mesh_vertex(&m, -1, -1, 0), b = mesh_vertex(&m, 1, -1, 0),
                   c = mesh_vertex(&m, 0, 1, 0);
    for (int i = 0; i < 300; i++) mesh_tri(&m, a, b, c);
    rt_bvh *bvh = build(&m);
    rt_ray rays[256];
    for (int i = 0; i < 256; i++) {
        const float o[3] = {0.6f * (frand() - 0.5f), 0.6f * (frand() - 0.5f), 2.0f};
        const float d[3] = {0.05f * (frand() - 0.5f), 0.05f * (frand() - 0.5f), -1.0f};
        rays[i] = make_ray(o, d, 0.0f, INFINITY);
    }
    for (int i = 0; i < 256; i++) {
        rt_hit h;
        CHECK(rt_intersect1(bvh, &rays[i], &h) && h.prim == 40);
    }
    compare_rays(&m, bvh, rays, 256, 1, "coincident", NULL);
    float lo[3], hi[3];
    mesh_bounds(&m, lo, hi);
    random_rays(lo, hi, rays, 256);
    compare_rays(&m, bvh, rays, 256, 1, "deep", NULL);
    rt_bvh_free(bvh);
    mesh_free(&m);
}

/* Packets of random rays are traced ray by ray; camera tiles as packets. */
static void test_packet_fallback_stats(void)
{
    rng_seed(9);
    mesh m = {0};
    random_soup(&m, 500);
    rt_bvh *bvh = build(&m);
    float lo[3], hi[3];
    mesh_bounds(&m, lo, hi);
    rt_ray rays[256];
    rt_hit h[256];
    const camera cam = {{0.5f, 0.5f, 3.0f}, {0.5f, 0.5f, 0.5f}, {0, 1, 0}, 30.0f};
    const rt_isa orig = bvh->isa;
    rt_isa isas[2];
    const int nisa = test_isas(bvh, isas);
    for (int k = 0; k < nisa; k++) {
        CHECK(rt_bvh_set_isa(bvh, isas[k]) == 0);
        rt_packet_stats st = {0};
        random_rays(lo, hi, rays, 256);
        rt_intersect_packet(bvh, rays, 256, h, &st);
        CHECK(st.packets == 4 && st.rays == 256 && st.streamed_packets == 4);
        memset(&st, 0, sizeof st);
        for (int i = 0; i < 64; i++)
            rays[i] = camera_ray(&cam, 1024, (float)(600 + i % 8), (float)(600 + i / 8));
        rt_intersect_packet(bvh, rays, 64, h, &st);
        CHECK(st.packets == 1 && st.streamed_packets == 0 && st.node_visits > 0);
        CHECK(st.leaf_visits > 0 && st.leaf_active > 0);
        CHECK(st.leaf_active <= st.leaf_lanes && st.node_lanes <= 64 * st.node_visits);
    }
    CHECK(rt_bvh_set_isa(bvh, orig) == 0);
    rt_bvh_free(bvh);
    mesh_free(&m);
}

/* Every packet size from 1 to beyond RT_PACKET_MAX gives the single-ray answers. */
static void test_packet_sizes(void)
{
    rng_seed(5);
    mesh m = {0};
    const float c[3] = {0, 0, 0};
    add_icosphere(&m, c, 1.0f, 3);
    rt_bvh *bvh = build(&m);
    const camera cam = {{0.0f, 0.0f, 4.0f}, {0, 0, 0}, {0, 1, 0}, 40.0f};
    rt_ray rays[150];
    for (int i = 0; i < 150; i++) rays[i] = camera_ray(&cam, 64, (float)(i % 15) + 34, (float)(i / 15) + 34);
    rays[7].tmin = 5.0f;           /* an invalid range in the middle of a packet */
    rays[7].tmax = 1.0f;
    const int sizes[] = {1, 3, 4, 5, 8, 9, 13, 32, 63, 64, 65, 150};
    const rt_isa orig = bvh->isa;
    rt_isa isas[2];
    const int nisa = test_isas(bvh, isas);
    rt_hit h[2][150];
    uint8_t occ[2][150];
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        for (int k = 0; k < nisa; k++) {
            CHECK(rt_bvh_set_isa(bvh, isas[k]) == 0);
            rt_packet_stats st = {0};
            memset(h[k], 0xa5, sizeof h[k]);
            memset(occ[k], 0xa5, sizeof occ[k]);
            rt_intersect_packet(bvh, rays, sizes[s], h[k], &st);
            rt_occluded_packet(bvh, rays, sizes[s], occ[k], &st);
            CHECK(st.streamed_packets == 0);
            for (int i = 0; i < sizes[s]; i++) {
                rt_hit h1;
                const int hit = rt_intersect1(bvh, &rays[i], &h1);
                CHECK_MSG(same_hit(&h[k][i], &h1), "[%s] size %d ray %d", rt_isa_name(isas[k]),
                          sizes[s], i);
                CHECK_MSG(occ[k][i] == hit, "[%s] size %d ray %d", rt_isa_name(isas[k]), sizes[s], i);
            }
            /* nothing past n is written */
            CHECK(sizes[s] == 150 || (occ[k][sizes[s]] == 0xa5 && h[k][sizes[s]].prim == 0xa5a5a5a5u));
        }
        if (nisa == 2)
            CHECK_MSG(!memcmp(h[0], h[1], (size_t)sizes[s] * sizeof(rt_hit)) &&
                          !memcmp(occ[0], occ[1], (size_t)sizes[s]),
                      "size %d: baseline and AVX2 packets differ", sizes[s]);
    }
    CHECK(rt_bvh_set_isa(bvh, orig) == 0);
    rt_bvh_free(bvh);
    mesh_free(&m);
}

/* Checks hits and occlusion flags of n rays against the single-ray kernels bit for bit;
 * returns how many rays hit. */
static int same_as_single(const rt_bvh *bvh, const rt_ray *rays, int n, const rt_hit *h,
                          const uint8_t *occ, const char *isa)
{
    int hits = 0;
    for (int i = 0; i < n; i++) {
        rt_hit h1;
        const int hit = rt_intersect1(bvh, &rays[i], &h1);
        hits += hit;
        CHECK_MSG(!memcmp(&h[i], &h1, sizeof h1), "[%s] ray %d", isa, i);
        CHECK_MSG(occ[i] == hit, "[%s] ray %d", isa, i);
    }
    return hits;
}

/* An incoherent packet goes as a stream, each answer equal to the single-ray kernels'
 * bit for bit: a packet mixing direction-sign octants (two octants of about 30 rays,
 * three strays and a NaN ray in one 64-ray packet). */
static void test_packet_octant_stream(void)
{
    mesh m = {0};
    const float c[3] = {0, 0, 0};
    add_icosphere(&m, c, 1.0f, 3);
    rt_bvh *bvh = build(&m);
    const camera front = {{0.0f, 0.0f, 4.0f}, {0, 0, 0}, {0, 1, 0}, 40.0f};
    rt_ray rays[64];
    for (int i = 0; i < 64; i++) {
        rays[i] = camera_ray(&front, 64, (float)(40 + i % 8), (float)(40 + i / 8));
        if (i % 2) {                 /* the same ray from behind the sphere */
            rays[i].org[2] = -rays[i].org[2];
            rays[i].dir[2] = -rays[i].dir[2];
        }
    }
    for (int i = 60; i < 63; i++) rays[i].dir[0] = -rays[i].dir[0];   /* a third octant */
    rays[63].dir[1] = NAN;
    const rt_isa orig = bvh->isa;
    rt_isa isas[2];
    const int nisa = test_isas(bvh, isas);
    for (int k = 0; k < nisa; k++) {
        CHECK(rt_bvh_set_isa(bvh, isas[k]) == 0);
        rt_packet_stats st = {0};
        rt_hit h[64];
        uint8_t occ[64];
        rt_intersect_packet(bvh, rays, 64, h, &st);
        CHECK(st.packets == 1 && st.streamed_packets == 1);
        rt_occluded_packet(bvh, rays, 64, occ, &st);
        CHECK(st.packets == 2 && st.streamed_packets == 2);
        const int hits = same_as_single(bvh, rays, 64, h, occ, rt_isa_name(isas[k]));
        CHECK(hits >= 50 && h[63].prim == RT_NO_HIT);
    }
    CHECK(rt_bvh_set_isa(bvh, orig) == 0);
    rt_bvh_free(bvh);
    mesh_free(&m);
}

/* rt_occluded_strided: rays in a caller's 48-byte records, the word of their tmin holding
 * something else (FLT_MAX's bits: read as tmin, no ray would be traceable), give
 * rt_occluded1's answers for the same rays with the given tmin, packets and streams
 * alike, at every size; nothing past n is written. */
typedef struct strided_record {
    rt_ray ray;                           /* tmin: not a tmin */
    float weight[3];
    uint32_t slot;
} strided_record;

static void test_occluded_strided(void)
{
    mesh m = {0};
    const float c[3] = {0, 0, 0};
    add_icosphere(&m, c, 1.0f, 3);
    rt_bvh *bvh = build(&m);
    const camera front = {{0.0f, 0.0f, 4.0f}, {0, 0, 0}, {0, 1, 0}, 40.0f};
    enum { N = 150 };
    strided_record rec[N];
    const rt_isa orig = bvh->isa;
    rt_isa isas[2];
    const int nisa = test_isas(bvh, isas);
    const float tmins[] = {0.0f, 3.5f};   /* 3.5: past the sphere's front for some rays */
    for (int mixed = 0; mixed < 2; mixed++) {
        for (int i = 0; i < N; i++) {
            rec[i] = (strided_record){camera_ray(&front, 64, (float)(34 + i % 15), (float)(34 + i / 15)),
                                      {1, 2, 3}, (uint32_t)i};
            if (mixed && i % 2) rec[i].ray.dir[0] = -rec[i].ray.dir[0] - 0.5f;   /* other octants */
            const uint32_t not_a_tmin = 0x7f7fffffu;
            memcpy(&rec[i].ray.tmin, &not_a_tmin, sizeof not_a_tmin);
        }
        for (int k = 0; k < nisa; k++)
            for (size_t t = 0; t < sizeof tmins / sizeof *tmins; t++)
                for (int n = 1; n <= N; n += n < 9 ? 1 : 47) {
                    CHECK(rt_bvh_set_isa(bvh, isas[k]) == 0);
                    uint8_t occ[N + 1];
                    memset(occ, 0xa5, sizeof occ);
                    rt_packet_stats st = {0};
                    rt_occluded_strided(bvh, rec, sizeof *rec, tmins[t], n, occ, &st);
                    CHECK(mixed || st.streamed_packets == 0);
                    CHECK(!mixed || n < 2 || st.streamed_packets > 0);
                    int hits = 0;
                    for (int i = 0; i < n; i++) {
                        rt_ray r = rec[i].ray;
                        r.tmin = tmins[t];
                        const int hit = rt_occluded1(bvh, &r);
                        hits += hit;
                        CHECK_MSG(occ[i] == hit, "[%s] %s, tmin %g, n %d: ray %d", rt_isa_name(isas[k]),
                                  mixed ? "stream" : "packet", (double)tmins[t], n, i);
                    }
                    CHECK(n < 50 || hits > 0);
                    CHECK(occ[n] == 0xa5);
                }
    }
    CHECK(rt_bvh_set_isa(bvh, orig) == 0);
    rt_bvh_free(bvh);
    mesh_free(&m);
}

/* Parallel rays whose origins spread over the scene go as a stream, those from a small
 * patch as a packet (packet.c: RT_PACKET_MAX_SPREAD), both with the single-ray answers. */
static void test_packet_spread_stream(void)
{
    mesh m = {0};
    const float c[3] = {0, 0, 0};
    add_icosphere(&m, c, 1.0f, 3);    /* diagonal 2 sqrt(3): a tenth of it is 0.35 */
    rt_bvh *bvh = build(&m);
    const float patch[2] = {1.6f, 0.2f};   /* origin spread: 2.26 and 0.28 */
    const rt_isa orig = bvh->isa;
    rt_isa isas[2];
    const int nisa = test_isas(bvh, isas);
    for (int p = 0; p < 2; p++) {
        rt_ray rays[64];
        for (int i = 0; i < 64; i++) {
            const float x = patch[p] * ((float)(i % 8) / 7.0f - 0.5f);
            const float y = patch[p] * ((float)(i / 8) / 7.0f - 0.5f);
            rays[i] = (rt_ray){{x, y, 3.0f}, 0.0f, {0.01f, 0.02f, -1.0f}, INFINITY};
        }
        for (int k = 0; k < nisa; k++) {
            CHECK(rt_bvh_set_isa(bvh, isas[k]) == 0);
            rt_packet_stats st = {0};
            rt_hit h[64];
            uint8_t occ[64];
            rt_intersect_packet(bvh, rays, 64, h, &st);
            rt_occluded_packet(bvh, rays, 64, occ, &st);
            CHECK_MSG(st.streamed_packets == (p == 0 ? 2u : 0u), "[%s] patch %.1f: %llu of 2 "
                      "packets streamed", rt_isa_name(isas[k]), (double)patch[p],
                      (unsigned long long)st.streamed_packets);
            const int hits = same_as_single(bvh, rays, 64, h, occ, rt_isa_name(isas[k]));
            CHECK(hits > 16 && (p == 1 || hits < 64));   /* the wide patch misses at its corners */
        }
    }
    CHECK(rt_bvh_set_isa(bvh, orig) == 0);
    rt_bvh_free(bvh);
    mesh_free(&m);
}

/* Packets whose directions tie in magnitude between axes (the watertight test's dominant
 * axis then goes to the lower one) or have zero components of either sign: the AVX2
 * packet path makes those constants 8 rays at a time and must pick the same axes. */
static void test_packet_direction_ties(void)
{
    mesh m = {0};
    const float c[3] = {0, 0, 0};
    add_icosphere(&m, c, 1.0f, 3);
    rt_bvh *bvh = build(&m);
    static const float dirs[][3] = {
        {-1, -1, -1},      {-1, -1, -0.75f}, {-0.75f, -1, -1}, {-1, -0.75f, -1},
        {-1, -1, -1.25f},  {-1.25f, -1, -1}, {-1, -1.25f, -1}, {-0.5f, -0.5f, -0.25f},
    };
    rt_ray rays[3 * 64];
    for (int i = 0; i < 64; i++) {
        const float o[3] = {1.6f + 0.01f * (float)(i % 8), 1.6f + 0.01f * (float)(i / 8), 1.65f};
        rays[i] = make_ray(o, dirs[(i + i / 8) % 8], 0.0f, INFINITY);
    }
    for (int i = 0; i < 64; i++) {     /* zero components: -0 in x, +0 in y */
        const float o[3] = {0.03f * (float)(i % 8) - 0.1f, 0.03f * (float)(i / 8) - 0.1f, 3.0f};
        const float d[3] = {-0.0f, i % 3 ? 0.0f : 0.25f, i % 2 ? -1.0f : -2.0f};
        rays[64 + i] = make_ray(o, d, 0.0f, INFINITY);
    }
    for (int i = 0; i < 64; i++) {     /* |dx| = |dz| > |dy|, and all three equal */
        const float o[3] = {1.5f + 0.02f * (float)(i % 8), 0.02f * (float)(i / 8), 1.5f};
        const float d[3] = {-1.0f, i % 4 ? -0.125f : -1.0f, -1.0f};
        rays[128 + i] = make_ray(o, d, 0.0f, INFINITY);
    }
    rt_packet_stats st = {0};
    rt_hit h[3 * 64];
    rt_intersect_packet(bvh, rays, 3 * 64, h, &st);
    CHECK(st.packets == 3 && st.streamed_packets == 0);   /* origins within RT_PACKET_MAX_SPREAD */
    int hits = 0;
    for (int i = 0; i < 3 * 64; i++) hits += h[i].prim != RT_NO_HIT;
    CHECK(hits > 150);
    compare_rays(&m, bvh, rays, 3 * 64, 1, "direction ties", NULL);
    rt_bvh_free(bvh);
    mesh_free(&m);
}

/* ---- the shared scenes ------------------------------------------------------------- */

typedef struct scene_file {
    const char *file;
    camera cam;
    float light[3];
} scene_file;

static const scene_file scenes[] = {
    {"teapot.obj", {{4.269f, 6.784f, 11.58f}, {0.217f, 1.575f, 0}, {0, 1, 0}, 40}, {7.445f, 12.2f, 3.537f}},
    {"bunny.obj", {{0.03327f, 0.1937f, 0.3326f}, {-0.01684f, 0.1102f, -0.001537f}, {0, 1, 0}, 40},
     {0.1576f, 0.3603f, 0.1661f}},
    {"dragon.obj", {{6.346f, 12.59f, 25.38f}, {0, 4.97f, 0}, {0, 1, 0}, 40}, {14.66f, 25.16f, 10.97f}},
    {"horse.obj", {{0.3119f, 0.1404f, 0.1092f}, {0, 0, 0}, {0, 0, 1}, 40}, {0.1017f, 0.2128f, 0.2707f}},
    {"CornellBox-Original.obj", {{0, 1, 3.9f}, {0, 1, 0}, {0, 1, 0}, 40}, {0, 1.9f, 0}},
};

/* Shadow rays to the light and mirror rays from each primary hit. */
static int secondary_rays(const mesh *m, const rt_ray *prim, const rt_hit *hits, int n,
                          const float light[3], float eps, rt_ray *shadow, rt_ray *refl)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (hits[i].prim == RT_NO_HIT) continue;
        const rt_ray *r = &prim[i];
        float p[3], nrm[3], e1[3], e2[3], d[3], l[3];
        const float *a = vtx(m, hits[i].prim, 0), *b = vtx(m, hits[i].prim, 1),
                    *c = vtx(m, hits[i].prim, 2);
        for (int ax = 0; ax < 3; ax++) {
            p[ax] = r->org[ax] + hits[i].t * r->dir[ax];
            e1[ax] = b[ax] - a[ax];
            e2[ax] = c[ax] - a[ax];
            l[ax] = light[ax] - p[ax];
        }
        cross(e1, e2, nrm);
        normalize(nrm);
        const float dn = r->dir[0] * nrm[0] + r->dir[1] * nrm[1] + r->dir[2] * nrm[2];
        for (int ax = 0; ax < 3; ax++) d[ax] = r->dir[ax] - 2.0f * dn * nrm[ax];
        shadow[k] = make_ray(p, l, eps, 1.0f - eps);
        refl[k] = make_ray(p, d, eps, INFINITY);
        k++;
    }
    return k;
}

static void check_scene(const scene_file *sf, int scale4)
{
    char path[256];
    snprintf(path, sizeof path, "../shared/scenes/%s", sf->file);
    mesh m;
    if (load_obj(path, &m) != 0) {
        CHECK_MSG(0, "cannot read %s", path);
        return;
    }
    rt_bvh *bvh = build(&m);
    rt_bvh_print_stats(rt_bvh_get_stats(bvh), sf->file, stdout);
    float lo[3], hi[3];
    mesh_bounds(&m, lo, hi);
    float ext = 0.0f;
    for (int a = 0; a < 3; a++) ext = fmaxf(ext, hi[a] - lo[a]);
    /* Brute force costs rays x triangles: fewer rays on the big meshes. */
    const int big = m.nt > 20000;
    const int ncam = (big ? 64 : 256) * scale4, nrand = (big ? 48 : 192) * scale4;
    rt_ray *rays = malloc((size_t)(ncam + nrand) * sizeof *rays);
    rt_ray *shadow = malloc((size_t)ncam * sizeof *rays), *refl = malloc((size_t)ncam * sizeof *rays);
    rt_hit *hits = malloc((size_t)ncam * sizeof *hits);
    char what[300];
    camera_tiles(&sf->cam, rays, ncam / 64);
    snprintf(what, sizeof what, "%s camera", sf->file);
    compare_rays(&m, bvh, rays, ncam, 1, what, hits);
    const int ns = secondary_rays(&m, rays, hits, ncam, sf->light, 1e-5f * ext, shadow, refl);
    snprintf(what, sizeof what, "%s shadow", sf->file);
    compare_rays(&m, bvh, shadow, ns, 1, what, NULL);
    snprintf(what, sizeof what, "%s reflection", sf->file);
    compare_rays(&m, bvh, refl, ns, 1, what, NULL);
    random_rays(lo, hi, rays, nrand);
    snprintf(what, sizeof what, "%s random", sf->file);
    compare_rays(&m, bvh, rays, nrand, 1, what, NULL);
    free(rays);
    free(shadow);
    free(refl);
    free(hits);
    rt_bvh_free(bvh);
    mesh_free(&m);
}

static void test_shared_scenes(void)
{
    rng_seed(42);
    for (size_t i = 0; i < sizeof scenes / sizeof scenes[0]; i++) check_scene(&scenes[i], test_scale4());
}

/* tmin and tmax are honoured at the exact float distances of the hits. */
static void test_t_range(void)
{
    rng_seed(3);
    mesh m;
    if (load_obj("../shared/scenes/teapot.obj", &m) != 0) {
        CHECK_MSG(0, "cannot read teapot.obj");
        return;
    }
    rt_bvh *bvh = build(&m);
    rt_ray rays[4 * 256];
    rt_hit hits[256];
    camera_tiles(&scenes[0].cam, rays, 4);
    for (int i = 0; i < 256; i++) rt_intersect1(bvh, &rays[i], &hits[i]);
    int n = 0;
    for (int i = 0; i < 256; i++) {
        if (hits[i].prim == RT_NO_HIT) continue;
        const float t = hits[i].t;
        rt_ray r = rays[i];
        r.tmax = t;
        rays[256 + n] = r;                     /* hit exactly at tmax: still hit */
        r.tmax = nextafterf(t, 0.0f);
        rays[512 + n] = r;                     /* just before it: something else or none */
        r.tmax = INFINITY;
        r.tmin = nextafterf(t, INFINITY);
        rays[768 + n] = r;                     /* just after it */
        n++;
    }
    for (int i = 0; i < n; i++) {
        rt_hit h;
        rt_intersect1(bvh, &rays[256 + i], &h);
        CHECK(h.prim != RT_NO_HIT && h.t == rays[256 + i].tmax);
    }
    compare_rays(&m, bvh, rays + 256, n, 1, "tmax = hit", NULL);
    compare_rays(&m, bvh, rays + 512, n, 1, "tmax below hit", NULL);
    compare_rays(&m, bvh, rays + 768, n, 1, "tmin above hit", NULL);
    rt_bvh_free(bvh);
    mesh_free(&m);
}

int main(void)
{
    RUN(test_single_triangle);
    RUN(test_empty_scene);
    RUN(test_parallel_rays);
    RUN(test_watertight_icosphere);
    RUN(test_watertight_grid);
    RUN(test_random_soups);
    RUN(test_build_options);
    RUN(test_deterministic_build);
    RUN(test_isa_selection);
    RUN(test_bvh8_structure);
    RUN(test_packet_sizes);
    RUN(test_packet_direction_ties);
    RUN(test_packet_octant_stream);
    RUN(test_packet_spread_stream);
    RUN(test_occluded_strided);
    RUN(test_coincident_and_deep);
    RUN(test_packet_fallback_stats);
    RUN(test_t_range);
    RUN(test_shared_scenes);
    return check_finish();
}
