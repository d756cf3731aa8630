/* The rasterizer and the Direct3D-like graph: bit-identical images for 1, 2, 3 and 8
 * workers; the primid image agrees with an independent floating-point reference
 * rasterizer (>= 99.9% of pixels) and with the ray tracer (>= 99.5%); the fill rule
 * covers every pixel exactly once; clipping handles triangles behind the camera,
 * crossing the near plane, huge or degenerate; per-queue peaks stay within capacity. */
#include "pipelines/raster/raster.h"
#include "pipelines/raytrace/raytrace.h"
#include "raytracer/bvh.h"
#include "rasterizer/raster.h"
#include "shaders/raster_shading.h"
#include "tests/check.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define W 192
#define H 192

typedef struct loaded { sc_scene *s; sc_geometry g; } loaded;

static bool load(const char *name, loaded *l)
{
    char err[SC_ERR_MAX];
    if (sc_load(name, &l->s, err) || sc_flatten(l->s, &l->g, err)) {
        fprintf(stderr, "  %s\n", err);
        return false;
    }
    return true;
}

static void unload(loaded *l) { sc_geometry_free(&l->g); sc_free(l->s); }

static plr_graph graph_kind;          /* PLR_TILED (the default) unless a test sets it */

static uint8_t *render_size(loaded *l, sh_aov aov, unsigned workers, int w, int h, gr_graph **graph)
{
    plr_config c;
    plr_config_default(&c);
    c.graph = graph_kind;
    c.width = w;
    c.height = h;
    c.tile = 32;
    c.aov = aov;
    c.workers = workers;
    char err[SC_ERR_MAX];
    uint8_t *img = malloc((size_t)w * h * 4);
    gr_graph *g = plr_render(l->s, &l->g, &c, img, NULL, err);
    CHECK_MSG(g != NULL, "%s", err);
    if (graph) *graph = g;
    else gr_graph_destroy(g);
    return img;
}

static uint8_t *render(loaded *l, sh_aov aov, unsigned workers, gr_graph **graph)
{
    return render_size(l, aov, workers, W, H, graph);
}

static void test_bit_identical(void)
{
    const char *scenes[] = {"teapot", "../shared/scenes/bunny.obj", "cornell"};
    for (int k = 0; k < 3; k++) {
        loaded l;
        if (!load(scenes[k], &l)) { CHECK(0); continue; }
        for (int a = 0; a < 2; a++) {
            sh_aov aov = a ? SH_AOV_PRIMID : SH_AOV_COLOR;
            uint8_t *ref = render(&l, aov, 1, NULL);
            unsigned ws[] = {2, 3, 8};
            for (int i = 0; i < 3; i++) {
                uint8_t *img = render(&l, aov, ws[i], NULL);
                CHECK_MSG(memcmp(ref, img, W * H * 4) == 0, "%s differs with %u workers", scenes[k], ws[i]);
                free(img);
            }
            free(ref);
        }
        unload(&l);
    }
}

/* ---- the independent reference: camera-space clipping against the near plane,
 * vertices snapped to the specified 1/256-pixel grid, double-precision edge tests at
 * every pixel centre of each piece's bounding box, and a float z-buffer on 1/depth.
 * Written separately from rasterizer/ on purpose. */

typedef struct ref_img { int w, h; uint32_t *id; float *zb; } ref_img;

static void ref_fill(ref_img *r, const float sx[3], const float sy[3], const float iz[3], uint32_t id)
{
    float area = (sx[1] - sx[0]) * (sy[2] - sy[0]) - (sx[2] - sx[0]) * (sy[1] - sy[0]);
    if (area == 0) return;
    int x0 = (int)fmaxf(0, floorf(fminf(sx[0], fminf(sx[1], sx[2])))), x1 = (int)fminf(r->w - 1, ceilf(fmaxf(sx[0], fmaxf(sx[1], sx[2]))));
    int y0 = (int)fmaxf(0, floorf(fminf(sy[0], fminf(sy[1], sy[2])))), y1 = (int)fminf(r->h - 1, ceilf(fmaxf(sy[0], fmaxf(sy[1], sy[2]))));
    for (int y = y0; y <= y1; y++)
        for (int x = x0; x <= x1; x++) {
            double px = x + 0.5, py = y + 0.5, w[3];
            for (int k = 0; k < 3; k++) {
                int a = (k + 1) % 3, b = (k + 2) % 3;
                w[k] = ((double)(sx[b] - sx[a]) * (py - sy[a]) - (double)(sy[b] - sy[a]) * (px - sx[a])) / area;
            }
            if (w[0] < 0 || w[1] < 0 || w[2] < 0) continue;
            float inv = (float)(w[0] * iz[0] + w[1] * iz[1] + w[2] * iz[2]);   /* 1/depth: larger is nearer */
            size_t at = (size_t)y * r->w + x;
            if (-inv < r->zb[at]) { r->zb[at] = -inv; r->id[at] = id; }
        }
}

static uint32_t *reference_primid(loaded *l, int w, int h)
{
    sh_raster_env e;
    sh_raster_env_init(&e, l->s, &l->g, w, h, SH_AOV_PRIMID);
    ref_img r = {w, h, calloc((size_t)w * h, sizeof(uint32_t)), malloc((size_t)w * h * sizeof(float))};
    for (int i = 0; i < w * h; i++) r.zb[i] = FLT_MAX;
    for (size_t t = 0; t < l->g.ntriangles; t++) {
        float v[3][3], poly[4][3];
        for (int k = 0; k < 3; k++) {
            const float *p = l->g.positions + 3 * l->g.indices[3 * t + k];
            float d[3] = {p[0] - e.frame.eye[0], p[1] - e.frame.eye[1], p[2] - e.frame.eye[2]};
            v[k][0] = d[0] * e.frame.right[0] + d[1] * e.frame.right[1] + d[2] * e.frame.right[2];
            v[k][1] = d[0] * e.frame.up[0] + d[1] * e.frame.up[1] + d[2] * e.frame.up[2];
            v[k][2] = d[0] * e.frame.forward[0] + d[1] * e.frame.forward[1] + d[2] * e.frame.forward[2];
        }
        int n = 0;
        for (int k = 0; k < 3; k++) {                        /* keep depth >= near */
            const float *a = v[k], *b = v[(k + 1) % 3];
            if (a[2] >= e.near) memcpy(poly[n++], a, sizeof poly[0]);
            if ((a[2] >= e.near) != (b[2] >= e.near)) {
                float s = (e.near - a[2]) / (b[2] - a[2]);
                for (int i = 0; i < 3; i++) poly[n][i] = a[i] + s * (b[i] - a[i]);
                n++;
            }
        }
        for (int k = 1; k + 1 < n; k++) {
            const float *q[3] = {poly[0], poly[k], poly[k + 1]};
            float sx[3], sy[3], iz[3];
            for (int j = 0; j < 3; j++) {
                sx[j] = roundf((q[j][0] / q[j][2] / e.frame.half_w * 0.5f + 0.5f) * w * 256) / 256;
                sy[j] = roundf((0.5f - q[j][1] / q[j][2] / e.frame.half_h * 0.5f) * h * 256) / 256;
                iz[j] = 1.0f / q[j][2];
            }
            ref_fill(&r, sx, sy, iz, (uint32_t)t + 1);
        }
    }
    free(r.zb);
    return r.id;
}

static double agreement(const uint8_t *img, const uint32_t *ref, int n)
{
    int same = 0;
    for (int i = 0; i < n; i++) same += sh_decode_primid(img + 4 * i) == ref[i];
    return (double)same / n;
}

static void test_reference_agreement(void)
{
    const char *scenes[] = {"teapot", "courtyard", "cornell", "../shared/scenes/bunny.obj",
                            "../shared/scenes/dragon.obj", "../shared/scenes/horse.obj",
                            "../shared/scenes/CornellBox-Original.obj", "scenes/bunny.scene"};
    for (int k = 0; k < 8; k++) {
        loaded l;
        if (!load(scenes[k], &l)) { CHECK(0); continue; }
        uint8_t *img = render_size(&l, SH_AOV_PRIMID, 2, 512, 512, NULL);
        uint32_t *ref = reference_primid(&l, 512, 512);
        double a = agreement(img, ref, 512 * 512);
        CHECK_MSG(a >= 0.999, "%s: %.4f%% of pixels agree", scenes[k], a * 100);
        free(img);
        free(ref);
        unload(&l);
    }
}

static void test_agrees_with_raytracer(void)
{
    const char *scenes[] = {"teapot", "scenes/bunny.scene", "cornell"};
    for (int k = 0; k < 3; k++) {
        loaded l;
        if (!load(scenes[k], &l)) { CHECK(0); continue; }
        uint8_t *ras = render(&l, SH_AOV_PRIMID, 2, NULL);
        rt_bvh *bvh = rt_bvh_build(l.g.positions, l.g.indices, l.g.ntriangles, NULL);
        plrt_config c;
        plrt_config_default(&c);
        c.width = W;
        c.height = H;
        c.aov = SH_AOV_PRIMID;
        c.workers = 2;
        char err[SC_ERR_MAX];
        uint8_t *rt = malloc(W * H * 4);
        gr_graph *g = plrt_render(l.s, &l.g, bvh, &c, rt, NULL, err);
        gr_graph_destroy(g);
        int same = 0;
        for (int i = 0; i < W * H; i++) same += sh_decode_primid(ras + 4 * i) == sh_decode_primid(rt + 4 * i);
        CHECK_MSG(same >= 0.995 * W * H, "%s: %.3f%% agree", scenes[k], 100.0 * same / (W * H));
        free(ras);
        free(rt);
        rt_bvh_free(bvh);
        unload(&l);
    }
}

/* ---- kernel tests ---------------------------------------------------------------------- */

static rs_triangle screen_tri(float x0, float y0, float x1, float y1, float x2, float y2)
{
    rs_triangle t;
    memset(&t, 0, sizeof t);
    float xs[3] = {x0, x1, x2}, ys[3] = {y0, y1, y2};
    for (int k = 0; k < 3; k++) {                 /* pixels -> clip with w = 1 */
        t.v[k].clip[0] = xs[k] / W * 2 - 1;
        t.v[k].clip[1] = 1 - ys[k] / H * 2;
        t.v[k].clip[2] = 0;
        t.v[k].clip[3] = 1;
    }
    return t;
}

static void cover(const rs_triangle *t, int *count, int *outside)
{
    rs_triangle c[RS_MAX_CLIPPED];
    static rs_cover f[W * H];
    int n = rs_clip(t, c);
    for (int k = 0; k < n; k++) {
        rs_setup s;
        if (!rs_setup_triangle(&c[k], W, H, &s)) continue;
        int m = rs_raster_rect(&s, 0, 0, W, H, f);
        for (int i = 0; i < m; i++) {
            if (f[i].x >= W || f[i].y >= H) (*outside)++;
            else count[f[i].y * W + f[i].x]++;
        }
    }
}

static void test_fill_rule(void)
{
    int *count = calloc(W * H, sizeof *count), outside = 0;
    /* a fan around an off-centre point to a rectangle around the screen */
    float cx = 77.3f, cy = 101.7f;
    float ring[][2] = {{-40, -40}, {96.5f, -40}, {W + 40, -40}, {W + 40, 96.5f}, {W + 40, H + 40},
                       {96.5f, H + 40}, {-40, H + 40}, {-40, 96.5f}};
    for (int i = 0; i < 8; i++) {
        rs_triangle t = screen_tri(cx, cy, ring[i][0], ring[i][1], ring[(i + 1) % 8][0], ring[(i + 1) % 8][1]);
        cover(&t, count, &outside);
    }
    int bad = 0;
    for (int i = 0; i < W * H; i++) bad += count[i] != 1;
    CHECK_MSG(bad == 0 && outside == 0, "fan: %d pixels not covered exactly once", bad);
    /* a grid of triangles whose shared edges run exactly through pixel centres */
    memset(count, 0, W * H * sizeof *count);
    for (int gy = 0; gy < 8; gy++)
        for (int gx = 0; gx < 8; gx++) {
            float x0 = gx * 24 + (gx ? 0.5f : 0), x1 = (gx + 1) * 24 + (gx < 7 ? 0.5f : 0);
            float y0 = gy * 24 + (gy ? 0.5f : 0), y1 = (gy + 1) * 24 + (gy < 7 ? 0.5f : 0);
            rs_triangle a = screen_tri(x0, y0, x1, y0, x1, y1), b = screen_tri(x0, y0, x1, y1, x0, y1);
            cover(&a, count, &outside);
            cover(&b, count, &outside);
        }
    bad = 0;
    for (int i = 0; i < W * H; i++) bad += count[i] != 1;
    CHECK_MSG(bad == 0, "grid: %d pixels not covered exactly once", bad);
    free(count);
}

static void test_clipping(void)
{
    int *count = calloc(W * H, sizeof *count), outside = 0;
    rs_triangle behind = screen_tri(10, 10, 100, 10, 10, 100);
    for (int k = 0; k < 3; k++) behind.v[k].clip[3] = -1;           /* w < 0: behind the eye */
    cover(&behind, count, &outside);
    int any = 0;
    for (int i = 0; i < W * H; i++) any += count[i];
    CHECK(any == 0);
    /* crossing the near plane: one vertex behind, two in front */
    rs_triangle cross;
    memset(&cross, 0, sizeof cross);
    float v[3][4] = {{-0.5f, -0.5f, 0.5f, 1}, {0.5f, -0.5f, 0.5f, 1}, {0, 0.5f, -3, -1}};
    for (int k = 0; k < 3; k++) memcpy(cross.v[k].clip, v[k], sizeof v[k]);
    rs_triangle c[RS_MAX_CLIPPED];
    int n = rs_clip(&cross, c);
    CHECK(n >= 1);
    for (int k = 0; k < n; k++)
        for (int j = 0; j < 3; j++) CHECK(c[k].v[j].clip[2] >= -c[k].v[j].clip[3] - 1e-5f);
    cover(&cross, count, &outside);
    /* huge: far beyond the guard band, covering everything once */
    memset(count, 0, W * H * sizeof *count);
    rs_triangle huge = screen_tri(-1e7f, -1e7f, 1e7f, -1e7f, 0, 1e7f);
    cover(&huge, count, &outside);
    int once = 0;
    for (int i = 0; i < W * H; i++) once += count[i] == 1;
    CHECK_MSG(once == W * H, "huge triangle: %d of %d pixels once", once, W * H);
    /* degenerate and off-screen: nothing */
    memset(count, 0, W * H * sizeof *count);
    rs_triangle flat = screen_tri(10, 10, 50, 50, 90, 90), off = screen_tri(-50, -50, -10, -50, -10, -10);
    rs_triangle point = screen_tri(20, 20, 20, 20, 20, 20);
    cover(&flat, count, &outside);
    cover(&off, count, &outside);
    cover(&point, count, &outside);
    any = 0;
    for (int i = 0; i < W * H; i++) any += count[i];
    CHECK(any == 0 && outside == 0);
    free(count);
}

/* The three graphs give the same image, for any worker count, every AOV: the sort-middle
 * default (any order, ties to the smaller primitive id, each visible pixel shaded once),
 * the thesis' ordered graph and its parallel-Rast variant. Sanitizer builds check two
 * AOVs at 3 workers (112 renders took a minute under ThreadSanitizer). */
static void test_graphs_identical(void)
{
    const char *scenes[] = {"teapot", "courtyard", "fairy", "cornell"};
    const sh_aov aovs[] = {SH_AOV_COLOR, SH_AOV_PRIMID, SH_AOV_DEPTH, SH_AOV_NORMAL};
    const int naovs = CHECK_SANITIZED ? 2 : 4;
    const unsigned ws[] = {1, 2, 8}, ws_sanitized[] = {3};
    const unsigned *worker_counts = CHECK_SANITIZED ? ws_sanitized : ws;
    const int nws = CHECK_SANITIZED ? 1 : 3;
    for (int k = 0; k < 4; k++) {
        loaded l;
        if (!load(scenes[k], &l)) { CHECK(0); continue; }
        for (int a = 0; a < naovs; a++) {
            graph_kind = PLR_ORDERED;
            uint8_t *ref = render(&l, aovs[a], 1, NULL);
            const plr_graph kinds[] = {PLR_TILED, PLR_PARALLEL};
            for (int g = 0; g < 2; g++)
                for (int i = 0; i < nws; i++) {
                    graph_kind = kinds[g];
                    uint8_t *img = render(&l, aovs[a], worker_counts[i], NULL);
                    CHECK_MSG(memcmp(ref, img, W * H * 4) == 0, "%s aov %d: graph %d differs from "
                              "the ordered one (%u workers)", scenes[k], (int)aovs[a], (int)kinds[g],
                              worker_counts[i]);
                    free(img);
                }
            free(ref);
        }
        graph_kind = PLR_TILED;
        unload(&l);
    }
}

static void test_queue_peaks(void)
{
    loaded l;
    if (!load("teapot", &l)) { CHECK(0); return; }
    gr_graph *g;
    free(render(&l, SH_AOV_COLOR, 2, &g));
    const gr_stats *st = g ? gr_get_stats(g) : NULL;
    for (int i = 0; st && i < st->nqueues; i++)
        CHECK_MSG(st->queues[i].peak_subqueue_packets <= st->queues[i].capacity,
                  "%s: peak %u > capacity %u", st->queues[i].name,
                  st->queues[i].peak_subqueue_packets, st->queues[i].capacity);
    gr_graph_destroy(g);
    unload(&l);
}

/* The ordered graph's coarse depth test changes the work, never the image: bunny and
 * fairy (dense, overdrawn) render bit-identically with it on and off, for 1 and 3
 * workers (3 only in sanitizer builds), and it does skip triangles (so a test that
 * always says "visible" would be caught). */
static void test_coarse_z_exact(void)
{
    const char *scenes[] = {"../shared/scenes/bunny.obj", "fairy"};
    for (int k = 0; k < 2; k++) {
        loaded l;
        if (!load(scenes[k], &l)) { CHECK(0); continue; }
        for (int a = 0; a < 2; a++)
            for (unsigned workers = CHECK_SANITIZED ? 3 : 1; workers <= 3; workers += 2) {
                uint8_t *img[2];
                plr_counts counts[2];
                for (int on = 0; on < 2; on++) {
                    plr_config c;
                    plr_config_default(&c);
                    c.width = c.height = 256;
                    c.tile = 32;
                    c.aov = a ? SH_AOV_PRIMID : SH_AOV_COLOR;
                    c.workers = workers;
                    c.coarse_z = on;
                    c.graph = PLR_ORDERED;
                    char err[SC_ERR_MAX];
                    img[on] = malloc(256 * 256 * 4);
                    gr_graph *g = plr_render(l.s, &l.g, &c, img[on], &counts[on], err);
                    CHECK_MSG(g != NULL, "%s", err);
                    gr_graph_destroy(g);
                }
                CHECK_MSG(memcmp(img[0], img[1], 256 * 256 * 4) == 0, "%s: coarse-z changed the image",
                          scenes[k]);
                CHECK_MSG(counts[0].coarse_z_culled == 0 && counts[1].coarse_z_culled > 0,
                          "%s: culled %llu (off) and %llu (on)", scenes[k],
                          (unsigned long long)counts[0].coarse_z_culled,
                          (unsigned long long)counts[1].coarse_z_culled);
                free(img[0]);
                free(img[1]);
            }
        unload(&l);
    }
}

int main(void)
{
    RUN(test_bit_identical);
    RUN(test_coarse_z_exact);
    RUN(test_reference_agreement);
    RUN(test_agrees_with_raytracer);
    RUN(test_fill_rule);
    RUN(test_clipping);
    RUN(test_graphs_identical);
    RUN(test_queue_peaks);
    graph_kind = PLR_ORDERED;
    RUN(test_queue_peaks);
    graph_kind = PLR_PARALLEL;
    RUN(test_queue_peaks);
    return check_finish();
}
