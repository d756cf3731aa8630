/* Image-space stages (docs/image-space.md): stages a graph adds after the image is
 * complete, run per tile, tiles in parallel, reading a declared halo of neighbours in
 * linear colour before the final encode.
 *
 * - The decode and encode around them change nothing by themselves: stages that copy
 *   (with a halo) or do nothing give the image a graph without them gives.
 * - image.outline then image.tonemap equal a serial reference written here, computed on
 *   the linear colour the graph's sinks write without them (hdr-color), at 1, 2, 3 and 8 workers under every
 *   scheduler, with tiles smaller than the image and an image that is not a multiple of
 *   a tile; the same for the ray tracer's graph.
 * - FXAA's image is the same at every worker count, scheduler and tile size (a tile
 *   reads its neighbours' pixels only once they are final).
 * - Regions (gramps-render-mpi's chunks): a region rendered alone, or regions in turn
 *   into one frame, give the whole image's pixels, halos and all.
 * - A halo wider than the tile is refused, naming the stage; so are image-space stages
 *   replicated, a graph of image-space stages alone and a bad `base`.
 * - Other outputs than colour (--aov) are left alone.
 * - gramps-render: -p raster-tonemap with --set graph.exposure, the plugin stage of
 *   examples/plugins/sharpen.c, and the refusal as a user sees it (exit 1). */
#include "pipelines/image/image.h"
#include "pipelines/stages.h"
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/loaded_scene.h"
#include "tests/scratch_dir.h"
#include "tools/common/render_graph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define W 150
#define H 100

static const char *const scheds[] = {"gramps", "task-stealing", "breadth-first", "static"};
static const unsigned worker_counts[] = {1, 2, 3, 8};

/* ---- test stage types ------------------------------------------------------------------ */

static void copy_tile(void *state, const cp_image_tile *t)
{
    (void)state;
    for (int y = t->y0; y < t->y1; y++)
        for (int x = t->x0; x < t->x1; x++) memcpy(cp_image_dst(t, x, y), cp_image_src(t, x, y), 16);
}

static void nothing_tile(void *state, const cp_image_tile *t) { (void)state, (void)t; }

static const cp_image_stage_type copy_type = {{.name = "test.copy"}, 3, NULL, copy_tile};
static const cp_image_stage_type nothing_type = {{.name = "test.nothing"}, 0, NULL, nothing_tile};
static const cp_image_stage_type wide_type = {{.name = "test.wide"}, 100, NULL, copy_tile};

/* ---- rendering ------------------------------------------------------------------------- */

typedef struct setup { rg_setup g; } setup;

/* The graph of pipeline with `adds` (graph text loaded over it) and --set's. */
static bool setup_init(setup *s, const char *pipeline, const char *adds, const char **sets,
                       int nsets)
{
    char err[CP_ERR_MAX];
    rg_options o = {.pipeline = pipeline, .sets = sets, .nsets = nsets};
    if (rg_setup_init(&s->g, &o, err)) { fprintf(stderr, "  %s\n", err); return false; }
    if (cp_register_image_stage(s->g.registry, &copy_type, err) ||
        cp_register_image_stage(s->g.registry, &nothing_type, err) ||
        cp_register_image_stage(s->g.registry, &wide_type, err) ||
        (adds && cp_graph_load_text(s->g.graph, adds, "test", err))) {
        fprintf(stderr, "  %s\n", err);
        rg_setup_free(&s->g);
        return false;
    }
    return true;
}

/* When set, render() keeps the sinks' linear colour here (W x H x 4 floats). */
static float *keep_hdr;

/* One frame into img (W x H RGBA) or, with nr regions, those in turn into one frame.
 * NULL, or the message of a failed render in err. */
static bool render(setup *s, loaded *l, const gr_launch_opts *lo, sh_aov aov,
                   const pl_region *r, int nr, uint8_t *img, char err[CP_ERR_MAX],
                   gr_profile **profile)
{
    pl_scene_data d;
    pl_scene_data_init(&d, l->s, &l->g);
    pl_scene_data_set_bvh(&d, l->bvh);
    pl_frame f;
    bool ok = pl_frame_init(&f, &d, W, H, aov, err);
    if (ok && keep_hdr) pl_frame_use_hdr(&f, keep_hdr);
    for (int i = 0; ok && i < (nr ? nr : 1); i++) {
        gr_graph *run = !nr || pl_frame_set_region(&f, r[i], err)
                            ? pl_render_frame(s->g.graph, &f, lo, err) : NULL;
        ok = run != NULL;
        if (run && profile) *profile = gr_profile_take(run);
        gr_graph_destroy(run);
    }
    if (ok) memcpy(img, pl_frame_image(&f), (size_t)W * H * 4);
    pl_frame_free(&f);
    pl_scene_data_free(&d);
    return ok;
}

static bool render_simple(setup *s, loaded *l, unsigned workers, uint8_t *img)
{
    char err[CP_ERR_MAX];
    gr_launch_opts lo = {.workers = workers};
    bool ok = render(s, l, &lo, SH_AOV_COLOR, NULL, 0, img, err, NULL);
    if (!ok) fprintf(stderr, "  %s\n", err);
    return ok;
}

/* The image of pipeline (+ adds, sets) at 1 worker; NULL on failure. */
static uint8_t *image_of(loaded *l, const char *pipeline, const char *adds, const char **sets,
                         int nsets)
{
    setup s;
    uint8_t *img = calloc((size_t)W * H, 4);
    if (!img || !setup_init(&s, pipeline, adds, sets, nsets)) { free(img); return NULL; }
    if (!render_simple(&s, l, 1, img)) { free(img); img = NULL; }
    rg_setup_free(&s.g);
    return img;
}

static size_t differing(const uint8_t *a, const uint8_t *b)
{
    size_t n = 0;
    for (size_t i = 0; i < (size_t)W * H; i++) n += memcmp(a + 4 * i, b + 4 * i, 4) != 0;
    return n;
}

/* ---- the serial reference ---------------------------------------------------------------- */

static float ref_luma(const float *img, int x, int y)
{
    x = x < 0 ? 0 : x >= W ? W - 1 : x;
    y = y < 0 ? 0 : y >= H ? H - 1 : y;
    const float *p = img + 4 * ((size_t)y * W + (size_t)x);
    return 0.2126f * p[0] + 0.7152f * p[1] + 0.0722f * p[2];
}

/* image.outline (width w, threshold th, colour rgb), then image.tonemap (aces, exposure
 * e), on the sinks' linear colour lin of the graph without them, serially, into dst:
 * the formulas of docs/image-space.md, written again. */
static void reference(const float *lin, uint8_t *dst, int w, float th, const float rgb[3],
                      float e)
{
    float *res = malloc((size_t)W * H * 16);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            float gx = (ref_luma(lin, x + w, y - w) + 2.0f * ref_luma(lin, x + w, y) + ref_luma(lin, x + w, y + w)) -
                       (ref_luma(lin, x - w, y - w) + 2.0f * ref_luma(lin, x - w, y) + ref_luma(lin, x - w, y + w));
            float gy = (ref_luma(lin, x - w, y + w) + 2.0f * ref_luma(lin, x, y + w) + ref_luma(lin, x + w, y + w)) -
                       (ref_luma(lin, x - w, y - w) + 2.0f * ref_luma(lin, x, y - w) + ref_luma(lin, x + w, y - w));
            size_t at = 4 * ((size_t)y * W + (size_t)x);
            bool edge = sqrtf(gx * gx + gy * gy) > th;
            for (int ch = 0; ch < 3; ch++) {
                float v = (edge ? rgb[ch] : lin[at + ch]) * e;
                v = v > 0.0f ? (v * (2.51f * v + 0.03f)) / (v * (2.43f * v + 0.59f) + 0.14f) : 0.0f;
                res[at + ch] = v < 1.0f ? v : 1.0f;
            }
            res[at + 3] = lin[at + 3];
        }
    for (size_t i = 0; i < (size_t)W * H * 4; i++)
        dst[i] = (i & 3) == 3 ? (uint8_t)(res[i] * 255.0f + 0.5f) : sh_to_srgb8(res[i]);
    free(res);
}

static const char outline_then_tonemap[] =
    "[stage outline]\ntype = image.outline\nwidth = 2\nthreshold = 0.08\ncolor = 0.9,0.2,0.1\n"
    "[stage tonemap]\ntype = image.tonemap\nexposure = 1.5\ncurve = aces\n";

/* ---- tests ------------------------------------------------------------------------------- */

/* A type that is not an image-space stage is refused at registration, named. */
static void test_register_errors(void)
{
    static const cp_port port = {"in", GR_BIND_INPUT, "raster.batch", NULL};
    static const cp_image_stage_type bad[] = {
        {{.name = "t.notile"}, 0, NULL, NULL},
        {{.name = "t.negative"}, -1, NULL, copy_tile},
        {{.name = "t.ports", .ports = &port, .nports = 1}, 0, NULL, copy_tile},
        {{.name = "image.tonemap"}, 0, NULL, copy_tile},
    };
    static const char *const want[] = {"no tile function", "halo -1 < 0", "has ports",
                                       "registered twice"};
    char err[CP_ERR_MAX];
    cp_registry *r = pl_registry_new(err);
    CHECK(r != NULL);
    for (int i = 0; r && i < 4; i++) {
        err[0] = 0;
        CHECK_MSG(cp_register_image_stage(r, &bad[i], err) == -1 && strstr(err, want[i]),
                  "case %d: %s", i, err);
        CHECK(!cp_image_stage_of(r, &bad[i].stage));
    }
    const cp_stage_type *t = r ? cp_find_stage(r, "image.fxaa") : NULL;
    CHECK(t && cp_image_stage_of(r, t) && cp_image_stage_of(r, t)->tile);
    CHECK(r && !cp_image_stage_of(r, cp_find_stage(r, "raster.ps")));
    cp_registry_free(r);
}

/* encode(decode(b)) == b for every byte, and decode is the sRGB curve. */
static void test_decode_round_trip(void)
{
    for (int b = 0; b < 256; b++) {
        float v = pli_decode_srgb8((uint8_t)b), s = (float)b / 255.0f;
        float want = s <= 0.04045f ? s / 12.92f : powf((s + 0.055f) / 1.055f, 2.4f);
        CHECK_MSG(sh_to_srgb8(v) == b, "byte %d decodes to %g, which encodes to %d", b, v, sh_to_srgb8(v));
        CHECK_MSG(fabsf(v - want) <= 1e-3f * want + 1e-7f, "byte %d: %g, the curve says %g", b, v, want);
    }
}

/* Stages that change nothing leave the image as the graph made it. */
static void test_identity(void)
{
    loaded l;
    if (!load("teapot", &l)) { CHECK(0); return; }
    const char *sets[] = {"graph.tile=16"};
    uint8_t *plain = image_of(&l, "raster", NULL, sets, 1);
    uint8_t *same = image_of(&l, "raster", "[stage a]\ntype = test.nothing\n[stage b]\ntype = test.copy\n"
                             "[stage c]\ntype = test.nothing\n[stage d]\ntype = test.copy\n", sets, 1);
    CHECK(plain && same);
    if (plain && same) CHECK_MSG(differing(plain, same) == 0, "%zu pixels changed", differing(plain, same));
    free(plain);
    free(same);
    unload(&l);
}

/* outline -> tonemap equals the serial reference, for every worker count and scheduler. */
static void reference_everywhere(const char *scene, const char *pipeline, const char *tile)
{
    loaded l;
    if (!load(scene, &l)) { CHECK(0); return; }
    const char *sets[] = {tile};
    float *lin = keep_hdr = malloc((size_t)W * H * 16);
    uint8_t *plain = lin ? image_of(&l, pipeline, NULL, sets, 1) : NULL,
            *want = calloc((size_t)W * H, 4), *img = calloc((size_t)W * H, 4);
    keep_hdr = NULL;
    setup s;
    if (!plain || !setup_init(&s, pipeline, outline_then_tonemap, sets, 1)) {
        CHECK(0);
        free(plain); free(want); free(img); free(lin); unload(&l);
        return;
    }
    reference(lin, want, 2, 0.08f, (const float[3]){0.9f, 0.2f, 0.1f}, 1.5f);
    CHECK_MSG(differing(plain, want) > W * H / 4, "%s: the stages changed only %zu pixels", pipeline,
              differing(plain, want));
    char err[CP_ERR_MAX];
    gr_profile *prof = NULL;
    CHECK(render(&s, &l, &(gr_launch_opts){.workers = 2}, SH_AOV_COLOR, NULL, 0, img, err, &prof));
    for (int k = 0; k < 4; k++)
        for (int w = 0; w < 4; w++) {
            memset(img, 0xcd, (size_t)W * H * 4);
            gr_launch_opts lo = {.workers = worker_counts[w], .scheduler = scheds[k], .profile = prof};
            bool ok = render(&s, &l, &lo, SH_AOV_COLOR, NULL, 0, img, err, NULL);
            CHECK_MSG(ok, "%s", err);
            size_t n = ok ? differing(img, want) : 0;
            CHECK_MSG(n == 0, "%s on %s (%s): %zu pixels differ from the reference at %u workers, %s",
                      pipeline, scene, tile, n, worker_counts[w], scheds[k]);
        }
    gr_profile_free(prof);
    rg_setup_free(&s.g);
    free(plain); free(want); free(img); free(lin);
    unload(&l);
}

static void test_reference_raster(void) { reference_everywhere("teapot", "raster", "graph.tile=16"); }
static void test_reference_raytrace(void) { reference_everywhere("cornell", "raytrace", "graph.tile=32"); }

/* FXAA: the same bits at every worker count, scheduler and tile size; it changes edges
 * only. */
static void test_fxaa_deterministic(void)
{
    loaded l;
    if (!load("teapot", &l)) { CHECK(0); return; }
    const char *t64[] = {"graph.tile=64"}, *t16[] = {"graph.tile=16"};
    uint8_t *plain = image_of(&l, "raster", NULL, NULL, 0);
    uint8_t *ref = image_of(&l, "raster-fxaa", NULL, t64, 1), *img = calloc((size_t)W * H, 4);
    CHECK(plain && ref);
    if (!plain || !ref) { free(plain); free(ref); free(img); unload(&l); return; }
    size_t changed = differing(plain, ref);
    CHECK_MSG(changed > 50 && changed < W * H / 4, "FXAA changed %zu pixels", changed);
    for (int t = 0; t < 2; t++) {
        setup s;
        if (!setup_init(&s, "raster-fxaa", NULL, t ? t16 : t64, 1)) { CHECK(0); continue; }
        char err[CP_ERR_MAX];
        gr_profile *prof = NULL;
        CHECK(render(&s, &l, &(gr_launch_opts){.workers = 2}, SH_AOV_COLOR, NULL, 0, img, err, &prof));
        for (int k = 0; k < 4; k++)
            for (int w = 0; w < 4; w++) {
                gr_launch_opts lo = {.workers = worker_counts[w], .scheduler = scheds[k], .profile = prof};
                memset(img, 0, (size_t)W * H * 4);
                CHECK_MSG(render(&s, &l, &lo, SH_AOV_COLOR, NULL, 0, img, err, NULL), "%s", err);
                CHECK_MSG(differing(img, ref) == 0, "fxaa, tile %s: %zu pixels differ at %u workers, %s",
                          t ? "16" : "64", differing(img, ref), worker_counts[w], scheds[k]);
            }
        gr_profile_free(prof);
        rg_setup_free(&s.g);
    }
    free(plain); free(ref); free(img);
    unload(&l);
}

/* Regions as gramps-render-mpi's chunks: each alone, and all in turn into one frame. */
static void regions_of(const char *scene, const char *pipeline, const char *adds)
{
    static const pl_region bands[] = {{0, 0, W, 23}, {0, 23, W, 24}, {0, 24, W, 61}, {0, 61, W, H}};
    static const pl_region inner = {37, 11, 121, 77};
    loaded l;
    if (!load(scene, &l)) { CHECK(0); return; }
    setup s;
    uint8_t *whole = calloc((size_t)W * H, 4), *part = calloc((size_t)W * H, 4);
    char err[CP_ERR_MAX];
    gr_launch_opts lo = {.workers = 3};
    if (!setup_init(&s, pipeline, adds, NULL, 0)) { CHECK(0); free(whole); free(part); unload(&l); return; }
    CHECK(render(&s, &l, &lo, SH_AOV_COLOR, NULL, 0, whole, err, NULL));
    CHECK_MSG(render(&s, &l, &lo, SH_AOV_COLOR, bands, 4, part, err, NULL), "%s", err);
    CHECK_MSG(differing(whole, part) == 0, "%s on %s: bands in turn differ in %zu pixels",
              pipeline, scene, differing(whole, part));
    for (int i = 0; i < 5; i++) {
        const pl_region *r = i < 4 ? &bands[i] : &inner;
        CHECK(render(&s, &l, &lo, SH_AOV_COLOR, r, 1, part, err, NULL));
        size_t n = 0;
        for (int y = r->y0; y < r->y1; y++)
            n += memcmp(whole + 4 * ((size_t)y * W + (size_t)r->x0), part + 4 * ((size_t)y * W + (size_t)r->x0),
                        4 * (size_t)(r->x1 - r->x0)) != 0;
        CHECK_MSG(n == 0, "%s on %s: %zu rows of region %d differ from the whole image", pipeline,
                  scene, n, i);
    }
    rg_setup_free(&s.g);
    free(whole); free(part);
    unload(&l);
}

static void test_regions(void)
{
    regions_of("teapot", "raster-fxaa", NULL);
    regions_of("teapot", "raster", outline_then_tonemap);
    regions_of("cornell", "raytrace", "[stage fxaa]\ntype = image.fxaa\nspan = 16\n"
                                      "[stage copy]\ntype = test.copy\n");
}

/* A halo wider than the tile: refused before anything runs, naming the stage. */
static void test_halo_exceeds_tile(void)
{
    loaded l;
    if (!load("teapot", &l)) { CHECK(0); return; }
    static const struct { const char *pipeline, *adds, *set, *stage; } cases[] = {
        {"raster", "[stage huge]\ntype = test.wide\n", "graph.tile=64", "'huge'"},
        {"raster-fxaa", NULL, "fxaa.span=32", "'fxaa'"},          /* halo 17 > 16 */
        {"raytrace", "[stage edges]\ntype = image.outline\nwidth = 16\n[stage more]\ntype = image.outline\nwidth = 9\n",
         "graph.tile=8", "'edges'"},
    };
    for (int c = 0; c < 3; c++) {
        const char *sets[] = {"graph.tile=16", cases[c].set};
        setup s;
        if (!setup_init(&s, cases[c].pipeline, cases[c].adds, sets, 2)) { CHECK(0); continue; }
        uint8_t *img = calloc((size_t)W * H, 4);
        char err[CP_ERR_MAX] = "";
        bool ok = render(&s, &l, &(gr_launch_opts){.workers = 2}, SH_AOV_COLOR, NULL, 0, img, err, NULL);
        CHECK_MSG(!ok && strstr(err, cases[c].stage) && strstr(err, "halo") && strstr(err, "tile"),
                  "case %d: %s", c, err);
        free(img);
        rg_setup_free(&s.g);
    }
    unload(&l);
}

/* What a graph may not do with image-space stages, each refused with a message. */
static void test_graph_errors(void)
{
    loaded l;
    if (!load("teapot", &l)) { CHECK(0); return; }
    static const struct { const char *adds, *want; } cases[] = {
        {"[stage t]\ntype = image.tonemap\nreplicate = 2\n", "takes no replicate"},
        {"[stage t]\ntype = image.tonemap\ncurve = sepia\n", "curve 'sepia'"},
        {"[stage t]\ntype = image.outline\ncolor = 2,0,0\n", "color '2,0,0'"},
    };
    for (int c = 0; c < 3; c++) {
        setup s;
        if (!setup_init(&s, "raster", cases[c].adds, NULL, 0)) { CHECK(0); continue; }
        uint8_t *img = calloc((size_t)W * H, 4);
        char err[CP_ERR_MAX] = "";
        bool ok = render(&s, &l, &(gr_launch_opts){.workers = 1}, SH_AOV_COLOR, NULL, 0, img, err, NULL);
        CHECK_MSG(!ok && strstr(err, cases[c].want), "case %d: %s", c, err);
        free(img);
        rg_setup_free(&s.g);
    }
    /* only image-space stages */
    cp_registry *r = pl_registry_new((char[CP_ERR_MAX]){0});
    cp_graph *g = r ? cp_graph_new(r) : NULL;
    char err[CP_ERR_MAX] = "";
    CHECK(g && !cp_graph_load_text(g, "[stage t]\ntype = image.tonemap\n", "only", err));
    pl_scene_data d;
    pl_scene_data_init(&d, l.s, &l.g);
    pl_frame f;
    CHECK(pl_frame_init(&f, &d, W, H, SH_AOV_COLOR, err));
    gr_graph *run = g ? pl_render_frame(g, &f, &(gr_launch_opts){.workers = 1}, err) : NULL;
    CHECK_MSG(!run && strstr(err, "only image-space stages"), "%s", err);
    pl_frame_free(&f);
    pl_scene_data_free(&d);
    /* bases: unknown, and a base with a base (loaded under it in turn) */
    cp_graph_free(g);
    g = r ? cp_graph_new(r) : NULL;
    FILE *fp = fopen("/tmp/gramps-image-space-base.graph", "w");
    if (fp) { fputs("[graph]\nbase = rastr\n", fp); fclose(fp); }
    CHECK_MSG(g && pl_graph_load(g, NULL, NULL, "/tmp/gramps-image-space-base.graph", err) &&
              strstr(err, "gramps-image-space-base.graph:2: base = rastr: no built-in graph"), "%s", err);
    cp_graph_free(g);
    g = r ? cp_graph_new(r) : NULL;
    fp = fopen("/tmp/gramps-image-space-base.graph", "w");
    if (fp) { fputs("[graph]\nbase = raster-tonemap\n", fp); fclose(fp); }
    CHECK_MSG(g && !pl_graph_load(g, NULL, NULL, "/tmp/gramps-image-space-base.graph", err) &&
              cp_graph_value(g, "exposure") && cp_graph_value(g, "tile"), "%s", err);
    remove("/tmp/gramps-image-space-base.graph");
    cp_graph_free(g);
    cp_registry_free(r);
    unload(&l);
}

/* Primitive ids, depths and normals are data, not colour: the stages leave them. */
static void test_other_outputs_untouched(void)
{
    loaded l;
    if (!load("teapot", &l)) { CHECK(0); return; }
    setup a, b;
    uint8_t *x = calloc((size_t)W * H, 4), *y = calloc((size_t)W * H, 4);
    char err[CP_ERR_MAX];
    if (setup_init(&a, "raster", NULL, NULL, 0) && setup_init(&b, "raster", outline_then_tonemap, NULL, 0)) {
        sh_aov aovs[] = {SH_AOV_PRIMID, SH_AOV_DEPTH, SH_AOV_NORMAL};
        for (int k = 0; k < 3; k++) {
            gr_launch_opts lo = {.workers = 2};
            CHECK(render(&a, &l, &lo, aovs[k], NULL, 0, x, err, NULL));
            CHECK(render(&b, &l, &lo, aovs[k], NULL, 0, y, err, NULL));
            CHECK_MSG(differing(x, y) == 0, "aov %d changed", (int)aovs[k]);
        }
        rg_setup_free(&a.g);
        rg_setup_free(&b.g);
    } else CHECK(0);
    free(x); free(y);
    unload(&l);
}

/* As a user meets it: gramps-render -p raster-tonemap (exposure through --set), the
 * plugin, and a halo too wide for the tile (exit 1, the stage named). */
static void test_cli(void)
{
    char dir[] = "/tmp/gramps-image-space-XXXXXX", args[1024], a[256], b[256], c[256];
    if (!mkdtemp(dir)) { CHECK(0); return; }
    snprintf(a, sizeof a, "%s/a.png", dir);
    snprintf(b, sizeof b, "%s/b.png", dir);
    snprintf(c, sizeof c, "%s/c.png", dir);
    snprintf(args, sizeof args, "-q --size 96x64 -t 1 -p raster-tonemap -o %s teapot", a);
    CHECK_MSG(run(args) == 0, "%s", out);
    snprintf(args, sizeof args, "-q --size 96x64 -t 3 -p raster-tonemap --set graph.exposure=2 -o %s teapot", b);
    CHECK_MSG(run(args) == 0, "%s", out);
    CHECK_MSG(!same_files(a, b), "exposure 2 made no difference");
    snprintf(args, sizeof args, "-q --size 96x64 -t 2 -p raster-tonemap --set tonemap.exposure=2 -o %s teapot", c);
    CHECK_MSG(run(args) == 0 && same_files(b, c), "--set tonemap.exposure: %s", out);
    /* the plugin, at two worker counts and two tile sizes */
    snprintf(args, sizeof args, "-q --size 96x64 -t 1 --graph examples/graphs/raster-sharpen.graph "
             "--set sharpen.radius=3 -o %s teapot", a);
    CHECK_MSG(run(args) == 0, "%s", out);
    snprintf(args, sizeof args, "-q --size 96x64 -t 3 --graph examples/graphs/raster-sharpen.graph "
             "--set sharpen.radius=3 --set graph.tile=16 -o %s teapot", b);
    CHECK_MSG(run(args) == 0 && same_files(a, b), "sharpen: %s", out);
    snprintf(args, sizeof args, "-q --size 96x64 -t 1 -p raster -o %s teapot", c);
    CHECK_MSG(run(args) == 0 && !same_files(a, c), "sharpen changed nothing: %s", out);
    snprintf(args, sizeof args, "-q --size 96x64 --graph examples/graphs/raster-sharpen.graph "
             "--set sharpen.radius=9 --set graph.tile=8 -o %s/d.png teapot", dir);
    CHECK_MSG(run(args) == 1 && strstr(out, "'sharpen'") && strstr(out, "halo of 9"), "%s", out);
    snprintf(args, sizeof args, "--list-stages");
    CHECK_MSG(run(args) == 0 && strstr(out, "image.fxaa (image-space, halo 5"), "%.300s", out);
    CHECK(scratch_dir_remove(dir));
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    RUN(test_register_errors);
    RUN(test_decode_round_trip);
    RUN(test_identity);
    RUN(test_reference_raster);
    RUN(test_reference_raytrace);
    RUN(test_fxaa_deterministic);
    RUN(test_regions);
    RUN(test_halo_exceeds_tile);
    RUN(test_graph_errors);
    RUN(test_other_outputs_untouched);
    RUN(test_cli);
    return check_finish();
}
