/* Multisampling in the raster graphs (issue 30 item 4), on an OBJ + MTL scene the test
 * writes into a temporary directory:
 *
 * - coverage-weighted edges: an axis-aligned rectangle whose edges fall between sample
 *   columns and rows, flat-coloured (albedo AOV: unlit, linear, black background), gives
 *   at msaa 4 and 8 each pixel exactly round(k * c / n), k its samples inside the
 *   rectangle by Direct3D's standard positions (written out here, not the library's
 *   table), in every raster graph; at msaa 1 only c or 0;
 * - blending per sample: the same rectangle blended (alpha 0.5) is the average of its
 *   covered samples' src * a + dst * (1 - a);
 * - texture LOD: a receding textured floor at msaa 4 is the msaa 1 image inside (shaded
 *   once per pixel at the centre, with the quad's derivatives), differing only on edges;
 * - determinism: every raster graph, 1, 2, 3 and 8 workers and every scheduler give the
 *   same bytes at msaa 4 and 8 on a scene with blended, alpha-tested and textured quads;
 * - a full store: with thousands of small triangles over 8-pixel tiles the sort-middle
 *   Tile-Shade's store fills while triangles wait, and the image is still the ordered
 *   graph's;
 * - the AVX2 kernels against the baseline ones (GRAMPS_ISA=baseline), three graphs;
 * - gramps-render: --msaa 3 (and 0, 16, x) and graph.msaa=3 refused naming the flag and
 *   the values; the ray tracer refuses --msaa; the memory estimate grows by the sample
 *   buffers; the statistics report msaa and their bytes. */
#include "pipelines/stages.h"
#include "scenes/loaders.h"
#include "tests/check.h"
#include "tests/scene_data.h"
#include "tests/cli.h"
#include "tests/scratch_dir.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define W 32
#define H 32

static char dir[64];

/* The rectangle's screen edges, in pixels, and its colour: with the camera at (0, 0, 3)
 * looking at the origin, fovy 90, a point (X, Y, 0) lands at x = (X / 3 / 2 + 1 / 2) W.
 * No edge lies on a sample of either pattern (sample x and y are i/16 + 1/32 apart from
 * them at least). */
static const double rx0 = 10.3, rx1 = 20.7, ry0 = 5.6, ry1 = 25.2;

static double world_x(double sx) { return 3.0 * (2.0 * sx / W - 1.0); }
static double world_y(double sy) { return -3.0 * (2.0 * sy / H - 1.0); }

/* dense.obj: three grids of DENSE x DENSE small quads over the whole view, tilted a
 * little, at three depths: the front one first, with every other quad left out, then
 * the back one, then the middle one. At 32x32 with 8-pixel tiles each tile receives
 * about 400 triangles, more than a chunk of the multisampling Tile-Shade's store (256):
 * the store fills while triangles wait to be walked, the first to fill it are visible,
 * and its unnamed slots (the back grid) are collected. */
#define DENSE 40
static void write_dense(void)
{
    static char obj[3 * DENSE * DENSE * 160];
    size_t at = (size_t)snprintf(obj, sizeof obj, "mtllib m.mtl\n");
    static const double z[3] = {0.6, -0.5, 0.2};
    static const char *const mtl[3] = {"a", "flat", "b"};
    int v = 0;
    for (int layer = 0; layer < 3; layer++) {
        at += (size_t)snprintf(obj + at, sizeof obj - at, "usemtl %s\n", mtl[layer]);
        for (int j = 0; j < DENSE; j++)
            for (int i = 0; i < DENSE; i++) {
                if (layer == 0 && (i + j) % 2) continue;
                const double x0 = -3.2 + 6.4 * i / DENSE, x1 = -3.2 + 6.4 * (i + 1) / DENSE;
                const double y0 = -3.2 + 6.4 * j / DENSE, y1 = -3.2 + 6.4 * (j + 1) / DENSE;
                const double tilt = 0.05 * (x0 + y0);
                at += (size_t)snprintf(obj + at, sizeof obj - at,
                                       "v %.6f %.6f %.6f\nv %.6f %.6f %.6f\nv %.6f %.6f %.6f\nv %.6f %.6f %.6f\n"
                                       "f %d %d %d\nf %d %d %d\n",
                                       x0, y0, z[layer] + tilt, x1, y0 + 0.01, z[layer] + tilt,
                                       x1, y1, z[layer] + tilt, x0 - 0.01, y1, z[layer] + tilt,
                                       v + 1, v + 2, v + 3, v + 1, v + 3, v + 4);
                v += 4;
            }
    }
    scratch_write_text(dir, "dense.obj", obj);
}

static void write_scenes(void)
{
    scratch_write_text(dir, "m.mtl", "newmtl flat\nKd 0.8 0.4 0.2\nnewmtl floor\nKd 1 1 1\n"
                                     "newmtl a\nKd 0.9 0.2 0.1\nnewmtl b\nKd 0.1 0.3 0.9\n"
                                     "newmtl cut\nKd 1 1 1\n");
    char obj[1024];
    snprintf(obj, sizeof obj, "mtllib m.mtl\nv %.9f %.9f 0\nv %.9f %.9f 0\nv %.9f %.9f 0\n"
             "v %.9f %.9f 0\nusemtl flat\nf 1 2 3\nf 1 3 4\n", world_x(rx0), world_y(ry1),
             world_x(rx1), world_y(ry1), world_x(rx1), world_y(ry0), world_x(rx0), world_y(ry0));
    scratch_write_text(dir, "rect.obj", obj);
    /* a floor receding to the horizon (textured in load), tiled uv */
    scratch_write_text(dir, "floor.obj", "mtllib m.mtl\nv -40 -1 4\nv 40 -1 4\nv 40 -1 -80\nv -40 -1 -80\n"
                                         "vt 0 0\nvt 40 0\nvt 40 40\nvt 0 40\nusemtl floor\n"
                                         "f 1/1 2/2 3/3\nf 1/1 3/3 4/4\n");
    /* everything: the floor, a cut-out quad, two tilted blended quads over it */
    scratch_write_text(dir, "all.obj", "mtllib m.mtl\nv -40 -1 4\nv 40 -1 4\nv 40 -1 -80\nv -40 -1 -80\n"
                                       "vt 0 0\nvt 40 0\nvt 40 40\nvt 0 40\nusemtl floor\n"
                                       "f 1/1 2/2 3/3\nf 1/1 3/3 4/4\n"
                                       "v -1.2 -0.9 0.2\nv 0.3 -1.0 -0.3\nv 0.4 0.6 -0.2\nv -1.1 0.8 0.3\n"
                                       "vt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nusemtl cut\n"
                                       "f 5/5 6/6 7/7\nf 5/5 7/7 8/8\n"
                                       "v -0.5 -0.7 0.5\nv 1.3 -0.4 0.4\nv 1.0 1.1 0.6\nusemtl a\nf 9 10 11\n"
                                       "v -0.9 0.1 0.8\nv 1.1 -0.9 0.9\nv 0.6 0.9 0.7\nusemtl b\nf 12 13 14\n");
    write_dense();
}

/* A w x h RGBA texture as material m's albedo map (repeat, trilinear: the defaults). */
static bool give_texture(sc_scene *s, sc_material *m, int w, int h, bool alpha)
{
    unsigned char *rgba = malloc((size_t)w * h * 4);
    if (!rgba) return false;
    for (int i = 0; i < w * h; i++) {
        bool on = (i % w / 2 + i / w / 2) % 2;
        rgba[4 * i] = on ? 230 : 20;
        rgba[4 * i + 1] = (unsigned char)(i * 7);
        rgba[4 * i + 2] = on ? 40 : 200;
        rgba[4 * i + 3] = alpha ? (on ? 255 : 0) : 255;
    }
    char err[SC_ERR_MAX];
    int t = sc_add_texture(s, m->name, w, h, rgba, err);
    if (t < 0) { fprintf(stderr, "  %s\n", err); return false; }
    m->albedo_map = sc_texture_ref_none();
    m->albedo_map.texture = t;
    return true;
}

/* Scene `file`; the rectangle's material blends with alpha 0.5 when `blend`. */
static bool load(const char *file, bool blend, loaded *l)
{
    char path[160], err[SC_ERR_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (sc_load(path, &l->s, err) != 0) { fprintf(stderr, "  %s\n", err); return false; }
    sc_scene *s = l->s;
    s->camera = (sc_camera){{0, 0, 3}, {0, 0, 0}, {0, 1, 0}, 90};
    sc_material *m;
    if ((m = material(s, "flat")) && blend) m->alpha_mode = SC_ALPHA_BLEND, m->alpha = 0.5f;
    if ((m = material(s, "floor")) && !give_texture(s, m, 64, 64, false)) return false;
    if ((m = material(s, "cut"))) {
        m->alpha_mode = SC_ALPHA_MASK;
        m->alpha_cutoff = 0.5f;
        if (!give_texture(s, m, 8, 8, true)) return false;
    }
    if ((m = material(s, "a"))) m->alpha_mode = SC_ALPHA_BLEND, m->alpha = 0.6f;
    if ((m = material(s, "b"))) m->alpha_mode = SC_ALPHA_BLEND, m->alpha = 0.4f;
    return loaded_ready(l);
}

/* One frame of built-in graph `name` at msaa samples into rgba (W x H); the finished
 * run (the caller destroys it), or NULL. */
static gr_graph *render_tiled(loaded *l, const char *name, int msaa, int tile, const gr_launch_opts *o,
                              sh_aov aov, uint8_t *rgba)
{
    char err[CP_ERR_MAX], v[12];                 /* any int */
    cp_registry *r = pl_registry_new(err);
    cp_graph *g = cp_graph_new(r);
    snprintf(v, sizeof v, "%d", msaa);
    CHECK_MSG(!cp_graph_load_text(g, pl_builtin_graph(name), name, err), "%s", err);
    CHECK_MSG(!cp_put(g, "graph", "msaa", v, "test", err), "%s", err);
    snprintf(v, sizeof v, "%d", tile);
    CHECK_MSG(!tile || !cp_put(g, "graph", "tile", v, "test", err), "%s", err);
    pl_frame f;
    gr_graph *run = NULL;
    if (pl_frame_init(&f, &l->data, W, H, aov, err)) {
        run = pl_render_frame(g, &f, o, err);
        CHECK_MSG(run, "%s msaa %d: %s", name, msaa, err);
        if (run) memcpy(rgba, pl_frame_image(&f), (size_t)W * H * 4);
        pl_frame_free(&f);
    }
    cp_graph_free(g);
    cp_registry_free(r);
    return run;
}

/* render_tiled with the graph's own tile edge. */
static gr_graph *render(loaded *l, const char *name, int msaa, const gr_launch_opts *o, sh_aov aov,
                        uint8_t *rgba)
{
    return render_tiled(l, name, msaa, 0, o, aov, rgba);
}

static const char *const graphs[] = {"raster", "raster-ordered", "raster-parallel"};

/* Direct3D 11's standard patterns, 1/16 pixel from the centre (y down). */
static const int d3d4[4][2] = {{-2, -6}, {6, -2}, {-6, 2}, {2, 6}};
static const int d3d8[8][2] = {{1, -3}, {-1, 3}, {5, 1}, {-3, -5}, {-5, 5}, {-7, -1}, {3, 7}, {7, -7}};

/* Samples of pixel (x, y) inside the rectangle. */
static int inside(int x, int y, int n)
{
    const int (*p)[2] = n == 4 ? d3d4 : d3d8;
    int k = 0;
    for (int i = 0; i < n; i++) {
        double sx = x + 0.5 + p[i][0] / 16.0, sy = y + 0.5 + p[i][1] / 16.0;
        k += sx > rx0 && sx < rx1 && sy > ry0 && sy < ry1;
    }
    return k;
}

/* The albedo of the rectangle's colour (0.8, 0.4, 0.2), blended at a8 over black or not,
 * covered at k of n samples, as the box resolve of 8-bit samples gives it. */
static uint32_t expected(int k, int n, bool blend)
{
    static const unsigned c8[3] = {204, 102, 51};
    uint32_t v = 0;
    for (int ch = 0; ch < 3; ch++) {
        unsigned s = blend ? (c8[ch] * 128 + 127) / 255 : c8[ch];
        v |= (((unsigned)k * s + (unsigned)n / 2) / (unsigned)n) << 8 * ch;
    }
    return v;
}

static uint32_t rgb_at(const uint8_t *img, int x, int y)
{
    uint32_t v;
    memcpy(&v, img + 4 * ((size_t)y * W + x), 4);
    return v & 0xffffffu;
}

static void check_rect(bool blend)
{
    static uint8_t img[W * H * 4];
    loaded l;
    if (!load("rect.obj", blend, &l)) { CHECK(0); return; }
    gr_launch_opts o = {.workers = 2};
    for (int g = 0; g < 3; g++)
        for (int n = 4; n <= 8; n += 4) {
            gr_graph_destroy(render(&l, graphs[g], n, &o, SH_AOV_ALBEDO, img));
            int bad = 0, partial = 0;
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++) {
                    int k = inside(x, y, n);
                    partial += k > 0 && k < n;
                    if (rgb_at(img, x, y) != expected(k, n, blend) && bad++ < 3)
                        fprintf(stderr, "  %s msaa %d: pixel (%d, %d) %06x, expected %06x (%d of %d "
                                "samples)\n", graphs[g], n, x, y, rgb_at(img, x, y),
                                expected(k, n, blend), k, n);
                }
            CHECK_MSG(bad == 0, "%s msaa %d blend %d: %d pixels not coverage-weighted", graphs[g], n,
                      (int)blend, bad);
            CHECK(partial > 40);              /* the edges have intermediate values */
        }
    /* without samples: the rectangle's colour or black, nothing between */
    gr_graph_destroy(render(&l, "raster", 1, &o, SH_AOV_ALBEDO, img));
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            uint32_t v = rgb_at(img, x, y);
            CHECK(v == 0 || v == expected(1, 1, blend));
        }
    unload(&l);
}

static void test_edges_coverage_weighted(void) { check_rect(false); }
static void test_blending_per_sample(void) { check_rect(true); }

/* Shaded once per pixel at the centre with the quad's derivatives: inside the floor the
 * msaa 4 image is the msaa 1 image; only pixels the floor's two triangles share (its
 * diagonal) and the horizon may differ. */
static void test_texture_lod_kept(void)
{
    static uint8_t one[W * H * 4], four[W * H * 4];
    loaded l;
    if (!load("floor.obj", false, &l)) { CHECK(0); return; }
    gr_launch_opts o = {.workers = 2};
    gr_graph_destroy(render(&l, "raster", 1, &o, SH_AOV_ALBEDO, one));
    gr_graph_destroy(render(&l, "raster", 4, &o, SH_AOV_ALBEDO, four));
    int same = 0, floor = 0;
    for (int i = 0; i < W * H; i++) {
        uint32_t a, b;
        memcpy(&a, one + 4 * i, 4);
        memcpy(&b, four + 4 * i, 4);
        if (!(a & 0xffffffu)) continue;       /* sky */
        floor++;
        same += a == b;
    }
    CHECK_MSG(floor > W * H / 3 && same >= floor * 9 / 10, "%d of %d floor pixels as at msaa 1",
              same, floor);
    unload(&l);
}

/* Everything at once: every raster graph, worker count and scheduler gives the raster
 * graph's bytes at 1 worker, at msaa 4 and 8, colour and albedo. */
static void test_deterministic(void)
{
    static const char *const scheds[] = {"gramps", "task-stealing", "breadth-first", "static"};
    static const unsigned workers[] = {1, 2, 3, 8};
    static uint8_t ref[W * H * 4], img[W * H * 4];
    loaded l;
    if (!load("all.obj", false, &l)) { CHECK(0); return; }
    for (int n = 4; n <= 8; n += 4)
        for (int aov = 0; aov < 2; aov++) {
            sh_aov which = aov ? SH_AOV_ALBEDO : SH_AOV_COLOR;
            gr_launch_opts o = {.workers = 1, .scheduler = "gramps"};
            gr_graph_destroy(render(&l, "raster", n, &o, which, ref));
            for (int g = 0; g < 3; g++) {
                gr_graph *run = render(&l, graphs[g], n, &o, which, img);
                gr_profile *prof = run ? gr_profile_take(run) : NULL;
                gr_graph_destroy(run);
                for (int s = 0; s < 4; s++)
                    for (int w = 0; w < 4; w++) {
                        memset(img, 0xcd, sizeof img);
                        gr_launch_opts lo = {.workers = workers[w], .scheduler = scheds[s], .profile = prof};
                        gr_graph_destroy(render(&l, graphs[g], n, &lo, which, img));
                        CHECK_MSG(!memcmp(ref, img, sizeof img), "%s, %s, %u workers, msaa %d, aov %d",
                                  graphs[g], scheds[s], workers[w], n, (int)which);
                    }
                gr_profile_free(prof);
            }
        }
    unload(&l);
}

/* A tile whose store of triangles fills while they wait to be walked (dense.obj, 8-pixel
 * tiles: the sort-middle Tile-Shade walks a tile's triangles when its input ends or its
 * store is full, and then collects the slots no sample names): the sort-middle graph
 * gives the ordered graph's bytes at msaa 4 and 8, 1 and 3 workers. */
static void test_full_store(void)
{
    static uint8_t ref[W * H * 4], img[W * H * 4];
    loaded l;
    if (!load("dense.obj", false, &l)) { CHECK(0); return; }
    for (int n = 4; n <= 8; n += 4) {
        gr_launch_opts one = {.workers = 1};
        gr_graph_destroy(render_tiled(&l, "raster-ordered", n, 8, &one, SH_AOV_COLOR, ref));
        int shown = 0;                    /* pixels of the middle and front grids */
        for (int i = 0; i < W * H; i++) shown += ref[4 * i] != ref[0] || ref[4 * i + 2] != ref[2];
        CHECK_MSG(shown > 0, "msaa %d: one colour everywhere", n);
        for (unsigned w = 1; w <= 3; w += 2) {
            memset(img, 0xcd, sizeof img);
            gr_launch_opts o = {.workers = w};
            gr_graph_destroy(render_tiled(&l, "raster", n, 8, &o, SH_AOV_COLOR, img));
            CHECK_MSG(!memcmp(ref, img, sizeof img), "msaa %d, %u workers: not the ordered graph's image", n, w);
        }
    }
    unload(&l);
}

/* The AVX2 kernels (Tile-Shade's sample blocks, Rast's and Z-Raster's coverage, the OM's
 * sample test) against the baseline ones (GRAMPS_ISA=baseline): the same bytes from
 * gramps-render in the three graphs that keep samples, at msaa 4 and 8 (on a CPU without
 * AVX2 both runs take the baseline). */
static void test_kernels_match_baseline(void)
{
    static const char *const pipes[] = {"raster", "raster-ordered", "hybrid"};
    for (int g = 0; g < 3; g++)
        for (int n = 4; n <= 8; n += 4) {
            char args[600], a[200], b[200];
            snprintf(a, sizeof a, "%s/isa-best.png", dir);
            snprintf(b, sizeof b, "%s/isa-baseline.png", dir);
            for (int base = 0; base < 2; base++) {
                if (base) setenv("GRAMPS_ISA", "baseline", 1);
                snprintf(args, sizeof args, "-q -t 2 -p %s --msaa %d --size 64x48 --camera 0,0,3,0,0,0,0,1,0,90 "
                         "%s/dense.obj -o %s", pipes[g], n, dir, base ? b : a);
                CHECK_MSG(run(args) == 0, "%s", out);
                unsetenv("GRAMPS_ISA");
            }
            CHECK_MSG(same_files(a, b), "%s msaa %d: the AVX2 kernels' image is not the baseline's", pipes[g], n);
        }
}

static void test_bad_values_refused(void)
{
    static const char *const bad[] = {"3", "0", "16", "2", "x", "4x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char args[160];
        snprintf(args, sizeof args, "-q --size 16x16 --msaa %s teapot", bad[i]);
        CHECK_MSG(run(args) == 2 && strstr(out, "--msaa") && strstr(out, "1, 4 or 8"),
                  "--msaa %s: %s", bad[i], out);
    }
    CHECK_MSG(run("-q --size 16x16 --set graph.msaa=3 teapot") != 0 && strstr(out, "msaa 3") &&
              strstr(out, "1, 4 or 8"), "%s", out);
    CHECK_MSG(run("-q --size 16x16 -p raytrace --msaa 4 teapot") == 2 && strstr(out, "--msaa") &&
              strstr(out, "--spp"), "%s", out);
    CHECK_MSG(run("-q --size 16x16 --msaa 4 --aov primid teapot") != 0 && strstr(out, "primid"),
              "%s", out);
}

/* "needs about N MiB (image I, frame buffers B, ...)" of a refused render. */
static double buffers_mib(const char *args)
{
    run(args);
    const char *b = strstr(out, "frame buffers ");
    return b ? atof(b + 14) : -1;
}

static void test_memory_and_stats(void)
{
    /* 2048x2048: a sample buffer is 16 MiB per sample of RGBA8 (and of depth in the
     * ordered graph, 48 MiB of linear rgb f32). Sort-middle's Tile-Shade keeps its tile's
     * samples itself and asks for the frame's only with linear colour (raster-tonemap). */
    double one = buffers_mib("-q --size 2048x2048 --max-memory 1M teapot");
    double four = buffers_mib("-q --size 2048x2048 --max-memory 1M --msaa 4 teapot");
    double eight = buffers_mib("-q --size 2048x2048 --max-memory 1M --msaa 8 teapot");
    CHECK_MSG(one >= 0 && four == one && eight == one, "%g %g %g", one, four, eight);
    one = buffers_mib("-q -p raster-tonemap --size 2048x2048 --max-memory 1M teapot");
    four = buffers_mib("-q -p raster-tonemap --size 2048x2048 --max-memory 1M --msaa 4 teapot");
    eight = buffers_mib("-q -p raster-tonemap --size 2048x2048 --max-memory 1M --msaa 8 teapot");
    CHECK_MSG(one >= 0 && four == one + 4 * 64 && eight == one + 8 * 64, "%g %g %g", one, four,
              eight);
    double ord1 = buffers_mib("-q -p raster-ordered --size 2048x2048 --max-memory 1M teapot");
    double ord4 = buffers_mib("-q -p raster-ordered --size 2048x2048 --max-memory 1M --msaa 4 teapot");
    CHECK_MSG(ord1 >= 0 && ord4 == ord1 + 128, "%g %g", ord1, ord4);
    char json[200], args[300];
    snprintf(json, sizeof json, "%s/s.json", dir);
    snprintf(args, sizeof args, "-q --size 32x16 --msaa 8 -p raster-ordered --stats %s teapot", json);
    CHECK(run(args) == 0);
    char *text = slurp(json, NULL);
    CHECK_MSG(text && strstr(text, "\"msaa\": 8,") &&
              strstr(text, "\"sample_buffer_bytes\": 32768,"), "%s", text ? text : "(none)");
    free(text);
    snprintf(args, sizeof args, "-q --size 32x16 --stats %s teapot", json);
    CHECK(run(args) == 0);
    text = slurp(json, NULL);
    CHECK(text && strstr(text, "\"msaa\": 1,") && strstr(text, "\"sample_buffer_bytes\": 0,"));
    free(text);
    /* the sort-middle graph's Tile-Shade keeps its tile's samples itself; with linear
     * samples (an image-space stage reads the float colour) it takes the frame's colours
     * too, 4 bytes a sample, beside sample-hdr's 12 */
    snprintf(args, sizeof args, "-q --size 32x16 --msaa 4 --stats %s teapot", json);
    CHECK(run(args) == 0);
    text = slurp(json, NULL);
    CHECK_MSG(text && strstr(text, "\"msaa\": 4,") && strstr(text, "\"sample_buffer_bytes\": 0,"), "%s",
              text ? text : "(none)");
    free(text);
    snprintf(args, sizeof args, "-q -p raster-tonemap --size 32x16 --msaa 4 --stats %s teapot", json);
    CHECK(run(args) == 0);
    text = slurp(json, NULL);
    CHECK_MSG(text && strstr(text, "\"sample_buffer_bytes\": 32768,"), "%s", text ? text : "(none)");
    free(text);
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    snprintf(dir, sizeof dir, "/tmp/test_msaa_XXXXXX");
    if (!mkdtemp(dir)) return 1;
    write_scenes();
    RUN(test_edges_coverage_weighted);
    RUN(test_blending_per_sample);
    RUN(test_texture_lod_kept);
    RUN(test_deterministic);
    RUN(test_full_store);
    RUN(test_kernels_match_baseline);
    RUN(test_bad_values_refused);
    RUN(test_memory_and_stats);
    scratch_dir_remove(dir);
    return check_finish();
}
