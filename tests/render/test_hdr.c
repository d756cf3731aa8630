/* The sinks' linear colour (frame resource "hdr-color", pipelines/frame.h): every sink
 * writes the colour it encodes, before the sRGB encode, when the frame asks for it.
 *
 * - A bright scene (the teapot's lights x 4) has values above 1 in every pipeline, and
 *   each channel encodes to the 8-bit image's byte (within 1 step: the ordered graphs'
 *   fragments carry 13-bit mantissas; exactly elsewhere); with msaa 4 too (the samples'
 *   linear colours resolved).
 * - Asking for it changes no byte of the 8-bit image (blending and multisampling
 *   included: showcase at msaa 4), and it is the same for 1, 2, 3 and 8 workers under
 *   every scheduler.
 * - The fragment packing (linear21.h) keeps each value's sRGB byte and 14 bits.
 * - A tone map reads it: -p raster-tonemap with the reinhard curve maps highlights
 *   above 1 to distinct bytes (clipping at 1 first, as the 8-bit input did, would give
 *   them all one byte).
 * - The memory estimate grows by exactly its size when a float output or an
 *   image-space stage asks; gramps-render's statistics report it (.exr's values:
 *   test_exr_output). */
#include "pipelines/raster/linear21.h"
#include "pipelines/stages.h"
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/loaded_scene.h"
#include "tests/scratch_dir.h"
#include "tools/common/memory_estimate.h"
#include "tools/common/render_graph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define W 64
#define H 48

static const char *const scheds[] = {"gramps", "task-stealing", "breadth-first", "static"};
static const unsigned worker_counts[] = {1, 2, 3, 8};
static const char *const pipelines[] = {"raster", "raster-ordered", "raster-parallel", "raytrace",
                                        "hybrid", "hybrid-visibility"};
#define NPIPES (int)(sizeof pipelines / sizeof *pipelines)

typedef struct frame_out {
    uint8_t rgba[W * H * 4];
    float hdr[W * H * 4];
    bool has_hdr;
} frame_out;

/* One frame of `pipeline` (with --set's) into o; hdr: ask for the linear colour. */
static bool render(loaded *l, const char *pipeline, const char **sets, int nsets, bool hdr,
                   const gr_launch_opts *lo, frame_out *o)
{
    char err[CP_ERR_MAX];
    rg_setup g;
    rg_options opt = {.pipeline = pipeline, .sets = sets, .nsets = nsets};
    if (rg_setup_init(&g, &opt, err)) { fprintf(stderr, "  %s\n", err); return false; }
    pl_scene_data d;
    pl_scene_data_init(&d, l->s, &l->g);
    pl_scene_data_set_bvh(&d, l->bvh);
    pl_frame f;
    bool ok = pl_frame_init(&f, &d, W, H, SH_AOV_COLOR, err);
    memset(o->hdr, 0xcd, sizeof o->hdr);
    if (ok && hdr) pl_frame_use_hdr(&f, o->hdr);
    gr_graph *run_ = ok ? pl_render_frame(g.graph, &f, lo, err) : NULL;
    if (!run_) fprintf(stderr, "  %s: %s\n", pipeline, err);
    if (run_) memcpy(o->rgba, pl_frame_image(&f), sizeof o->rgba);
    o->has_hdr = run_ && pl_frame_hdr(&f) != NULL;
    gr_graph_destroy(run_);
    pl_frame_free(&f);
    pl_scene_data_free(&d);
    rg_setup_free(&g);
    return run_ != NULL;
}

static bool load_bright(loaded *l)
{
    if (!load("teapot", l)) return false;
    for (size_t i = 0; i < l->s->nlights; i++)
        for (int c = 0; c < 3; c++) l->s->lights[i].color[c] *= 4.0f;
    return true;
}

/* Values above 1 in every pipeline, each encoding to the image's byte. */
static void test_bright_scene(void)
{
    loaded l;
    if (!load_bright(&l)) { CHECK(0); return; }
    static frame_out o;
    for (int p = 0; p < NPIPES; p++) {
        if (!render(&l, pipelines[p], NULL, 0, true, &(gr_launch_opts){.workers = 2}, &o)) {
            CHECK(0);
            continue;
        }
        CHECK_MSG(o.has_hdr, "%s: no sink wrote the linear colour", pipelines[p]);
        int above = 0, off = 0, exact_off = 0;
        for (int i = 0; i < W * H; i++) {
            for (int c = 0; c < 3; c++) {
                float v = o.hdr[4 * i + c];
                int byte = o.rgba[4 * i + c], enc = sh_to_srgb8(v);
                above += v > 1.0f;
                off += abs(enc - byte) > 1;
                exact_off += enc != byte;
            }
            CHECK(o.hdr[4 * i + 3] == 1.0f);
        }
        CHECK_MSG(above > W * H / 20, "%s: %d channels above 1", pipelines[p], above);
        CHECK_MSG(off == 0, "%s: %d channels encode more than a step from the image", pipelines[p], off);
        bool packed = !strcmp(pipelines[p], "raster-ordered") || !strcmp(pipelines[p], "raster-parallel");
        CHECK_MSG(packed || exact_off == 0, "%s: %d channels encode to another byte", pipelines[p],
                  exact_off);
    }
    /* multisampled: the samples' linear colours resolved, highlights kept (the raster
     * graphs and the hybrid) */
    const char *msaa4[] = {"graph.msaa=4"};
    for (int p = 0; p < 5; p++) {
        if (p == 3) continue;                 /* the ray tracer has spp, not msaa */
        int above = 0;
        CHECK(render(&l, pipelines[p], msaa4, 1, true, &(gr_launch_opts){.workers = 2}, &o));
        for (int i = 0; i < W * H; i++) above += o.hdr[4 * i] > 1.0f;
        CHECK_MSG(above > W * H / 20, "%s, msaa 4: %d pixels above 1", pipelines[p], above);
    }
    unload(&l);
}

/* Asking for the linear colour changes no byte of the image, with blending, cut-outs and
 * multisampling; the linear colour is the same for any worker count and scheduler. */
static void check_everywhere(loaded *l, const char *pipeline, const char **sets, int nsets)
{
    static frame_out plain, ref, o;
    if (!render(l, pipeline, sets, nsets, false, &(gr_launch_opts){.workers = 2}, &plain) ||
        !render(l, pipeline, sets, nsets, true, &(gr_launch_opts){.workers = 1}, &ref)) {
        CHECK(0);
        return;
    }
    CHECK_MSG(!memcmp(plain.rgba, ref.rgba, sizeof plain.rgba), "%s: the image changed", pipeline);
    CHECK(ref.has_hdr && !plain.has_hdr);
    for (int k = 0; k < 4; k++)
        for (int w = 0; w < 4; w++) {
            gr_launch_opts lo = {.workers = worker_counts[w], .scheduler = scheds[k]};
            bool ok = render(l, pipeline, sets, nsets, true, &lo, &o);
            CHECK(ok);
            CHECK_MSG(!ok || (!memcmp(o.hdr, ref.hdr, sizeof o.hdr) && !memcmp(o.rgba, ref.rgba, sizeof o.rgba)),
                      "%s (%s): another result at %u workers, %s", pipeline, nsets ? sets[0] : "",
                      worker_counts[w], scheds[k]);
        }
}

static void test_same_image_any_workers(void)
{
    loaded l;
    if (!load("showcase", &l)) { CHECK(0); return; }
    const char *msaa4[] = {"graph.msaa=4"};
    for (int p = 0; p < NPIPES; p++) check_everywhere(&l, pipelines[p], NULL, 0);
    check_everywhere(&l, "raster", msaa4, 1);
    check_everywhere(&l, "raster-ordered", msaa4, 1);
    check_everywhere(&l, "hybrid", msaa4, 1);
    unload(&l);
}

/* Every sRGB threshold's neighbourhood and a spread of magnitudes: the packed value
 * encodes to the float's byte and is within 2^-14 of it. */
static void test_packing(void)
{
    sh_srgb_init();
    int bad = 0;
    for (int k = 1; k < 256; k++) {
        float t = sh_srgb_threshold[k];
        for (int d = -40; d <= 40; d++) {
            float x = nextafterf(t, d < 0 ? 0.0f : 2.0f);
            for (int s = 0; s < abs(d); s++) x = nextafterf(x, d < 0 ? 0.0f : 2.0f);
            float rgb[3] = {x, x * 3.7f, x * 1000.0f}, back[3];
            uint32_t rgba = 0xff000000u;
            for (int c = 0; c < 3; c++) rgba |= (uint32_t)sh_to_srgb8(rgb[c]) << (8 * c);
            bool ok = plr_linear_unpack(plr_linear_pack(rgb, rgba), rgba, back);
            for (int c = 0; ok && c < 3; c++) ok = fabsf(back[c] - rgb[c]) <= rgb[c] * 0x1p-13f;
            bad += !ok;
        }
    }
    CHECK_MSG(bad == 0, "%d values lost their byte or precision", bad);
    float rgb[3], z[3] = {0.5f, 0.5f, 0.5f};
    CHECK(!plr_linear_unpack(0, 0xffbcbcbcu, rgb));                 /* not written */
    CHECK(!plr_linear_unpack(plr_linear_pack(z, 0xffbcbcbcu), 0xff102030u, rgb));   /* changed */
}

/* A tone map of values above 1: distinct bytes where clipping would give one. */
static void test_tonemap_reads_highlights(void)
{
    loaded l;
    if (!load_bright(&l)) { CHECK(0); return; }
    static frame_out lin, mapped;
    const char *sets[] = {"tonemap.curve=reinhard"};
    if (!render(&l, "raster", NULL, 0, true, &(gr_launch_opts){.workers = 2}, &lin) ||
        !render(&l, "raster-tonemap", sets, 1, false, &(gr_launch_opts){.workers = 2}, &mapped)) {
        CHECK(0);
        unload(&l);
        return;
    }
    bool seen[256] = {false};
    int highlights = 0, distinct = 0, off = 0;
    for (int i = 0; i < W * H; i++) {
        float v = lin.hdr[4 * i];
        if (!(v > 1.0f)) continue;
        highlights++;
        int byte = mapped.rgba[4 * i];
        distinct += !seen[byte];
        seen[byte] = true;
        off += abs(byte - sh_to_srgb8(v / (1.0f + v))) > 1;
    }
    int clipped = sh_to_srgb8(0.5f);      /* reinhard of a value clipped at 1 */
    CHECK_MSG(highlights > 50, "%d highlights", highlights);
    CHECK_MSG(distinct > 5, "%d distinct bytes over %d highlights (clipping gives only %d)",
              distinct, highlights, clipped);
    CHECK_MSG(off == 0, "%d highlights are not reinhard of the linear colour", off);
    unload(&l);
}

/* The estimate counts hdr-color only when something reads it, at W x H x 16 bytes. */
static void test_memory_estimate(void)
{
    char err[CP_ERR_MAX];
    rg_setup g;
    rg_options opt = {.pipeline = "raster"};
    if (rg_setup_init(&g, &opt, err)) { CHECK_MSG(0, "%s", err); return; }
    loaded l;
    if (!load("teapot", &l)) { CHECK(0); rg_setup_free(&g); return; }
    cp_resource_need needs[CP_MAX_RESOURCES];
    int n = cp_graph_resources(g.graph, NULL, needs, err);
    CHECK(n > 0 && cp_resource_needed(needs, n, "hdr-color"));
    io_render_size r = {1000, 700, 0, 1, 2, needs, n, false, false};
    io_memory_estimate without = io_estimate_memory(l.s, l.g.nvertices, l.g.ntriangles, &r);
    r.hdr = true;
    io_memory_estimate with = io_estimate_memory(l.s, l.g.nvertices, l.g.ntriangles, &r);
    CHECK_MSG(with.total - without.total == 1000.0 * 700 * 16, "%.0f bytes more",
              with.total - without.total);
    CHECK(!pl_graph_reads_hdr(g.graph, NULL));
    rg_setup_free(&g);
    opt.pipeline = "raster-tonemap";
    CHECK(rg_setup_init(&g, &opt, err) == 0 && pl_graph_reads_hdr(g.graph, NULL));
    rg_setup_free(&g);
    unload(&l);
}

static char dir[] = "/tmp/gramps-hdr-XXXXXX";

/* gramps-render reports the linear colour's bytes when -o asks for .exr (its values:
 * test_exr_output). */
static void test_exr_cli(void)
{
    char scene[128], exr[128], stats[128], cmd[600];
    snprintf(scene, sizeof scene, "%s/bright.scene", dir);
    FILE *f = fopen(scene, "w");
    if (!f) { CHECK(0); return; }
    fputs("[camera]\neye = 0,3,9\ntarget = 0,1,0\nfovy = 40\n[light.key]\nposition = 4,8,6\n"
          "color = 4,4,4\n[mesh.pot]\nbuiltin = teapot\n", f);
    fclose(f);
    snprintf(exr, sizeof exr, "%s/b.exr", dir);
    snprintf(stats, sizeof stats, "%s/b.json", dir);
    snprintf(cmd, sizeof cmd, "-q -t 2 --size %dx%d -o %s --stats %s %s", W, H, exr, stats, scene);
    CHECK_MSG(run(cmd) == 0, "%s", out);
    long n = 0;
    char *json = slurp(stats, &n);
    CHECK(json != NULL);
    char want[64];
    snprintf(want, sizeof want, "\"hdr_color_bytes\": %d", W * H * 16);
    CHECK_MSG(json && strstr(json, want), "no %s in the statistics", want);
    free(json);
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    if (!mkdtemp(dir)) return 1;
    RUN(test_packing);
    RUN(test_bright_scene);
    RUN(test_same_image_any_workers);
    RUN(test_tonemap_reads_highlights);
    RUN(test_memory_estimate);
    RUN(test_exr_cli);
    if (!scratch_dir_remove(dir)) return 1;
    return check_finish();
}
