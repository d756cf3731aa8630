/* gramps-render -o FILE.exr: the Z and N channels come from the graph's own visibility
 * (the frame resource "surface", pipelines/surface.h), read back here with OpenEXR's C
 * API. A slanted floor has, in every graph (with --msaa too), each pixel centre's
 * analytic view depth within 1e-4 relative and its unit normal; with --spp (a jittered
 * first sample) a plane facing the camera at distance 5 has Z = 5 and N = +z; the raster and the
 * ray-traced depths of the teapot agree; the file is the same for any worker count and
 * scheduler. Through the library: the stages write the surfaces only when asked, and
 * asking changes no byte of the image; the memory estimate counts them when asked. */
#include "pipelines/stages.h"
#include "pipelines/surface.h"
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/loaded_scene.h"
#include "tests/scratch_dir.h"
#include "tools/common/memory_estimate.h"
#include "tools/common/render_graph.h"

#include <OpenEXR/openexr.h>
#include <math.h>
#include <unistd.h>

static char dir[] = "/tmp/gramps-exr-surface-XXXXXX";

enum { W = 48, H = 32, NCH = 8 };
/* The channels by name, in the order of `names`. */
static const char *const names[NCH] = {"R", "G", "B", "A", "Z", "N.X", "N.Y", "N.Z"};
enum { Z = 4, NX = 5 };

typedef struct exr_image { float ch[NCH][H][W]; bool ok; } exr_image;

/* Points the decoder's channels at row y of img. */
static void point_rows(exr_decode_pipeline_t *d, exr_image *img, int y)
{
    for (int k = 0; k < d->channel_count; k++) {
        exr_coding_channel_info_t *c = &d->channels[k];
        c->decode_to_ptr = NULL;
        for (int i = 0; i < NCH; i++)
            if (!strcmp(c->channel_name, names[i])) c->decode_to_ptr = (uint8_t *)img->ch[i][y];
        c->user_pixel_stride = sizeof(float);
        c->user_line_stride = W * sizeof(float);
        c->user_bytes_per_element = sizeof(float);
        c->user_data_type = EXR_PIXEL_FLOAT;
    }
}

/* Every scanline chunk of part 0 into img (a W x H image of 32-bit float channels). */
static exr_result_t read_lines(exr_context_t c, exr_image *img)
{
    exr_attr_box2i_t box;
    int32_t lines = 0;
    exr_result_t r = exr_get_data_window(c, 0, &box);
    if (!r) r = exr_get_scanlines_per_chunk(c, 0, &lines);
    if (!r && (box.max.x - box.min.x + 1 != W || box.max.y - box.min.y + 1 != H || lines != 1))
        return EXR_ERR_INVALID_ARGUMENT;
    exr_decode_pipeline_t d = EXR_DECODE_PIPELINE_INITIALIZER;
    bool started = false;
    for (int y = 0; !r && y < H; y++) {
        exr_chunk_info_t ci;
        r = exr_read_scanline_chunk_info(c, 0, box.min.y + y, &ci);
        if (!r) r = started ? exr_decoding_update(c, 0, &ci, &d) : exr_decoding_initialize(c, 0, &ci, &d);
        if (!r) point_rows(&d, img, y);
        if (!r && !started) r = exr_decoding_choose_default_routines(c, 0, &d);
        started = started || !r;
        if (!r) r = exr_decoding_run(c, 0, &d);
    }
    if (started) exr_decoding_destroy(c, &d);
    return r;
}

static bool read_exr(const char *path, exr_image *img)
{
    exr_context_t c = NULL;
    exr_context_initializer_t init = EXR_DEFAULT_CONTEXT_INITIALIZER;
    memset(img, 0, sizeof *img);
    exr_result_t r = exr_start_read(&c, path, &init);
    if (!r) r = read_lines(c, img);
    if (c) exr_finish(&c);
    img->ok = r == EXR_ERR_SUCCESS;
    return img->ok;
}

/* gramps-render at W x H into NAME.exr, read back. */
static bool render(const char *name, const char *args, exr_image *img)
{
    char cmd[800], path[160];
    snprintf(path, sizeof path, "%s/%s.exr", dir, name);
    snprintf(cmd, sizeof cmd, "-q --size %dx%d -o %s %s", W, H, path, args);
    if (run(cmd) != 0) return false;
    return read_exr(path, img);
}

/* A square of side 40 in the plane z = 0, normal +z, and a camera 5 units in front of
 * it looking straight at it: every pixel sees the plane at view depth 5. */
static void write_plane_scene(char scene[160])
{
    char obj[160];
    snprintf(obj, sizeof obj, "%s/plane.obj", dir);
    FILE *f = fopen(obj, "w");
    if (f) {
        fputs("v -20 -20 0\nv 20 -20 0\nv 20 20 0\nv -20 20 0\nvn 0 0 1\n"
              "f 1//1 2//1 3//1\nf 1//1 3//1 4//1\n", f);
        fclose(f);
    }
    snprintf(scene, 160, "%s/plane.scene", dir);
    f = fopen(scene, "w");
    if (f) {
        fputs("[camera]\neye = 0.3,-0.2,5\ntarget = 0.3,-0.2,0\nfovy = 50\n[light.key]\n"
              "position = 2,3,6\n[mesh.plane]\nfile = plane.obj\n", f);
        fclose(f);
    }
}

static void test_plane(void)
{
    char scene[160], args[400];
    write_plane_scene(scene);
    /* jittered first samples (the floor below checks the pixel centres' graphs): the
     * ray tracer's own primary stage, its sampler and camera stages, the hybrid's */
    static const char *const pipes[] = {
        "-p raytrace --spp 4", "--graph examples/graphs/raytrace-sampler.graph --spp 3", "-p hybrid --spp 2"};
    for (size_t p = 0; p < sizeof pipes / sizeof *pipes; p++) {
        static exr_image img;
        snprintf(args, sizeof args, "-t 2 %s %s", pipes[p], scene);
        if (!render("plane", args, &img)) { CHECK_MSG(0, "%s: %s", pipes[p], out); continue; }
        int off = 0;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                const float z = img.ch[Z][y][x], *n[3] = {&img.ch[NX][y][x], &img.ch[NX + 1][y][x],
                                                         &img.ch[NX + 2][y][x]};
                off += !(fabsf(z - 5.0f) <= 5e-4f) || fabsf(*n[0]) > 1e-6f || fabsf(*n[1]) > 1e-6f ||
                       fabsf(*n[2] - 1.0f) > 1e-6f;
            }
        CHECK_MSG(off == 0, "%s: %d pixels not at depth 5 with normal +z (e.g. %g)", pipes[p], off,
                  (double)img.ch[Z][0][0]);
    }
}

/* A floor (y = 0, 100 x 100, normal +y) seen from above at a slant, filling the view:
 * every pixel's depth differs, and each is the camera ray's (sc_camera_ray through the
 * pixel centre) distance to the plane along the view axis. */
static void test_slanted_floor(void)
{
    char obj[160], scene[160], args[400];
    snprintf(obj, sizeof obj, "%s/floor.obj", dir);
    FILE *f = fopen(obj, "w");
    if (f) {
        fputs("v -50 0 -50\nv 50 0 -50\nv 50 0 50\nv -50 0 50\nvn 0 1 0\n"
              "f 1//1 3//1 2//1\nf 1//1 4//1 3//1\n", f);
        fclose(f);
    }
    snprintf(scene, sizeof scene, "%s/floor.scene", dir);
    f = fopen(scene, "w");
    if (f) {
        fputs("[camera]\neye = 0.5,3,4\ntarget = 0,0,-2\nfovy = 40\n[light.key]\nposition = 2,6,3\n"
              "[mesh.floor]\nfile = floor.obj\n", f);
        fclose(f);
    }
    loaded l;
    if (!load(scene, &l)) { CHECK(0); return; }
    sc_camera_frame cam;
    sc_camera_frame_init(&cam, &l.s->camera, W, H);
    static const char *const pipes[] = {
        "-p raster", "-p raster-ordered", "-p raster-parallel", "-p raytrace", "-p hybrid",
        "-p hybrid-visibility", "-p raster --msaa 8", "-p raster-ordered --msaa 4", "-p hybrid --msaa 4",
        "-p raster --aov primid", "-p raster-tonemap"};
    for (size_t p = 0; p < sizeof pipes / sizeof *pipes; p++) {
        static exr_image img;
        snprintf(args, sizeof args, "-t 2 %s %s", pipes[p], scene);
        if (!render("floor", args, &img)) { CHECK_MSG(0, "%s: %s", pipes[p], out); continue; }
        int off = 0;
        double worst = 0;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                float d[3];
                sc_camera_ray(&cam, W, H, x + 0.5f, y + 0.5f, d);
                const double t = -(double)cam.eye[1] / d[1];
                const double want = t * ((double)d[0] * cam.forward[0] + (double)d[1] * cam.forward[1] +
                                         (double)d[2] * cam.forward[2]);
                const double err = fabs(img.ch[Z][y][x] - want) / want;
                worst = err > worst ? err : worst;
                off += !(err <= 1e-4) || img.ch[NX + 1][y][x] != 1.0f;
            }
        CHECK_MSG(off == 0, "%s: %d pixels off the floor's depth or normal (worst %.2g relative)",
                  pipes[p], off, worst);
    }
    unload(&l);
}

/* The fraction of pixels where a and b both see nothing, or both see a surface at
 * depths within 1e-3 relative; also checks that every normal is unit or zero. */
static double depth_agreement(const exr_image *a, const exr_image *b)
{
    int same = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            const float za = a->ch[Z][y][x], zb = b->ch[Z][y][x];
            same += (isinf(za) && isinf(zb)) || fabsf(za - zb) <= 1e-3f * fabsf(za);
            for (const exr_image *i = a; i; i = i == a ? b : NULL) {
                const float nx = i->ch[NX][y][x], ny = i->ch[NX + 1][y][x], nz = i->ch[NX + 2][y][x];
                const float len = nx * nx + ny * ny + nz * nz;
                CHECK(isinf(i->ch[Z][y][x]) ? len == 0 : fabsf(len - 1.0f) < 1e-5f);
            }
        }
    return (double)same / (W * H);
}

static void test_raster_against_raytrace(void)
{
    static exr_image raster, ordered, rt, hybrid;
    CHECK_MSG(render("r", "-t 2 -p raster teapot", &raster), "%s", out);
    CHECK_MSG(render("o", "-t 2 -p raster-ordered teapot", &ordered), "%s", out);
    CHECK_MSG(render("t", "-t 2 -p raytrace teapot", &rt), "%s", out);
    CHECK_MSG(render("h", "-t 2 -p hybrid teapot", &hybrid), "%s", out);
    if (!raster.ok || !ordered.ok || !rt.ok || !hybrid.ok) return;
    int seen = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) seen += isfinite(raster.ch[Z][y][x]);
    CHECK_MSG(seen > W * H / 20 && seen < W * H, "%d of %d pixels see the teapot", seen, W * H);
    /* the two raster graphs find the same fragments, with the same weights */
    CHECK(!memcmp(raster.ch[Z], ordered.ch[Z], sizeof raster.ch[Z] * 4));
    const double rt_agree = depth_agreement(&raster, &rt), hy_agree = depth_agreement(&hybrid, &rt);
    CHECK_MSG(rt_agree >= 0.99, "raster and raytrace depths agree on %.2f%% of pixels", 100 * rt_agree);
    CHECK_MSG(hy_agree >= 0.99, "hybrid and raytrace depths agree on %.2f%% of pixels", 100 * hy_agree);
}

/* One frame of `pipeline` at W x H into rgba, asking for the surfaces into surface
 * (NULL: not asked); whether the stages wrote them into *written. */
static bool render_lib(loaded *l, const char *pipeline, uint8_t *rgba, pl_surface *surface, bool *written)
{
    char err[CP_ERR_MAX];
    rg_setup g;
    rg_options opt = {.pipeline = pipeline};
    if (rg_setup_init(&g, &opt, err)) { fprintf(stderr, "  %s\n", err); return false; }
    pl_scene_data d;
    pl_scene_data_init(&d, l->s, &l->g);
    pl_scene_data_set_bvh(&d, l->bvh);
    pl_frame f;
    bool ok = pl_frame_init(&f, &d, W, H, SH_AOV_COLOR, err);
    if (ok && surface) pl_frame_use_surface(&f, surface);
    gr_launch_opts lo = {.workers = 2};
    gr_graph *ran = ok ? pl_render_frame(g.graph, &f, &lo, err) : NULL;
    if (!ran) fprintf(stderr, "  %s: %s\n", pipeline, err);
    if (ran) memcpy(rgba, pl_frame_image(&f), (size_t)W * H * 4);
    *written = pl_frame_surface(&f) != NULL;
    for (int i = 0; i < f.nresources; i++) *written |= f.resources[i].type == &pl_surface_resource;
    gr_graph_destroy(ran);
    pl_frame_free(&f);
    pl_scene_data_free(&d);
    rg_setup_free(&g);
    return ran != NULL;
}

static void test_only_when_asked(void)
{
    loaded l;
    if (!load("teapot", &l)) { CHECK(0); return; }
    static const char *const pipes[] = {"raster", "raster-ordered", "raytrace", "hybrid"};
    static uint8_t plain[W * H * 4], asked[W * H * 4];
    static pl_surface surface[W * H];
    for (size_t p = 0; p < sizeof pipes / sizeof *pipes; p++) {
        bool made = true, written = false;
        CHECK(render_lib(&l, pipes[p], plain, NULL, &made) && !made);
        CHECK(render_lib(&l, pipes[p], asked, surface, &written) && written);
        CHECK_MSG(!memcmp(plain, asked, sizeof plain), "%s: asking for the surfaces changed the image", pipes[p]);
    }
    char err[CP_ERR_MAX];
    rg_setup g;
    rg_options opt = {.pipeline = "raytrace"};
    cp_resource_need needs[CP_MAX_RESOURCES];
    int n = rg_setup_init(&g, &opt, err) ? -1 : cp_graph_resources(g.graph, NULL, needs, err);
    CHECK(n > 0 && cp_resource_needed(needs, n, "surface"));
    io_render_size r = {1000, 700, 0, 1, 2, needs, n, false, false};
    io_memory_estimate without = io_estimate_memory(l.s, l.g.nvertices, l.g.ntriangles, &r);
    r.surface = true;
    io_memory_estimate with = io_estimate_memory(l.s, l.g.nvertices, l.g.ntriangles, &r);
    CHECK_MSG(with.total - without.total == 1000.0 * 700 * 16, "%.0f bytes more", with.total - without.total);
    if (n >= 0) rg_setup_free(&g);
    unload(&l);
}

/* --stats reports the surfaces' bytes with an .exr, and none without. */
static void test_stats(void)
{
    char cmd[600], stats[160];
    snprintf(stats, sizeof stats, "%s/s.json", dir);
    for (int exr = 0; exr < 2; exr++) {
        snprintf(cmd, sizeof cmd, "-q -t 2 --size %dx%d -o %s/s.%s --stats %s teapot", W, H, dir,
                 exr ? "exr" : "png", stats);
        CHECK_MSG(run(cmd) == 0, "%s", out);
        char *json = slurp(stats, NULL), want[64];
        snprintf(want, sizeof want, "\"surface_bytes\": %d,", exr ? W * H * 16 : 0);
        CHECK_MSG(json && strstr(json, want), "no %s in the statistics", want);
        free(json);
    }
}

/* The same file for any worker count and scheduler. */
static void test_deterministic(void)
{
    static const char *const pipes[] = {"raster", "raster-ordered --msaa 4", "raytrace --spp 2", "hybrid"};
    static const char *const others[] = {"-t 3 --scheduler breadth-first", "-t 4 --scheduler static",
                                         "-t 3 --scheduler task-stealing", "-t 4 --scheduler qes"};
    for (size_t p = 0; p < sizeof pipes / sizeof *pipes; p++) {
        char first[160], path[160], args[300];
        snprintf(first, sizeof first, "%s/d0.exr", dir);
        snprintf(path, sizeof path, "%s/d1.exr", dir);
        for (int r = 0; r < 2; r++) {
            snprintf(args, sizeof args, "-q --size %dx%d -o %s %s -p %s teapot", W, H, r ? path : first,
                     r ? others[p] : "-t 1", pipes[p]);
            CHECK_MSG(run(args) == 0, "%s", out);
        }
        CHECK_MSG(same_files(first, path), "-p %s %s: another file than -t 1's", pipes[p], others[p]);
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    if (!mkdtemp(dir)) return 1;
    RUN(test_plane);
    RUN(test_slanted_floor);
    RUN(test_raster_against_raytrace);
    RUN(test_deterministic);
    RUN(test_only_when_asked);
    RUN(test_stats);
    if (!scratch_dir_remove(dir)) return 1;
    return check_finish();
}
