/* The sort-middle graph writes the image's background itself (pipelines/raster/
 * tile_background.c): the frame clears no colour buffer before its run, Tile-Shade
 * writes every pixel of its tiles, each Bin the background of its share of the tiles it
 * sent nothing to, and Tile-Shade's finish hook any tile left. Checked from the
 * application's side: the image buffer the caller lends holds garbage before every frame
 * of a kept graph (three frames, the camera moved between them, small tiles so that
 * many tiles are empty), and the image must be, byte for byte, the ordered graph's
 * (whose Output Merger draws over a cleared buffer), at 1 to 3 workers, at 1 and 4
 * samples, under both schedulers, and with the Bins replaced by the parallel graph's
 * Setup/Bin, which writes no background (the finish hook's case: the frame counter
 * tiles_filled_after_run says how many tiles it wrote, none in the built-in graph). */
#include "pipelines/kept_graph.h"
#include "tests/check.h"
#include "tests/loaded_scene.h"
#include "tests/scratch_dir.h"
#include "tools/common/render_graph.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define W 150
#define H 110
#define FRAMES 3
#define GARBAGE 0xab

static char dir[] = "/tmp/gramps-tile-background-XXXXXX";

/* The raster graph's front end with the parallel graph's Setup/Bin (one, in draw order)
 * feeding the sort-middle Tile-Shade. */
static const char setup_bin_graph[] =
    "[graph]\nname = setup-bin-tile-shade\ntile = 64\nbatch = 64\ngroups = $default_groups\nmsaa = 1\n"
    "[queue ia]\nformat = raster.batch\ncapacity = 8\nreplicate = $groups\n"
    "[queue primitives]\nformat = raster.primitives\nelements = $batch\ncapacity = 8\n"
    "[queue ordered]\nformat = raster.primitives\nelements = $batch\ncapacity = 8\n"
    "[queue binned]\nformat = raster.binned\ncapacity = 16\nsubqueues = $tiles\n"
    "[stage ia]\ntype = raster.ia\nreplicate = $groups\nbatch = $batch\nout = ia\n"
    "[stage vs]\ntype = raster.vs\nmsaa = $msaa\nreplicate = $groups\nin = ia\nout = primitives\n"
    "[stage reorder]\ntype = raster.reorder\nbatch = $batch\nin = primitives\nout = ordered\n"
    "[stage setup-bin]\ntype = raster.setup-bin\nmsaa = $msaa\ntile = $tile\nin = ordered\nout = binned\n"
    "[stage tile-shade]\ntype = raster.tile-shade\nmsaa = $msaa\ntile = $tile\nin = binned\n";

/* Frame k's camera: nearer, farther (the model leaves most tiles empty), from the side. */
static void move_camera(sc_scene *s, const sc_camera *base, int k)
{
    static const float scale[FRAMES] = {0.8f, 2.5f, 1.2f};
    s->camera = *base;
    for (int c = 0; c < 3; c++)
        s->camera.eye[c] = base->target[c] + (base->eye[c] - base->target[c]) * scale[k];
    if (k == 2) s->camera.eye[0] += 2.0f;
}

/* The graph of o with 16-pixel tiles and msaa samples; false with a CHECK. */
static bool setup(rg_setup *g, rg_options o, int msaa)
{
    static const char *sets[] = {"graph.tile=16"};
    char err[CP_ERR_MAX];
    o.sets = sets;
    o.nsets = 1;
    o.msaa = msaa;
    if (!rg_setup_init(g, &o, err)) return true;
    CHECK_MSG(0, "%s", err);
    return false;
}

/* Frame k of `g` into rgba (garbage before it) through the kept graph k. */
static bool render(pl_kept_graph *k, rg_setup *g, pl_scene_data *d, const char *scheduler, unsigned workers,
                   uint8_t *rgba)
{
    char err[CP_ERR_MAX];
    memset(rgba, GARBAGE, (size_t)W * H * 4);
    const pl_frame_spec spec = {d, W, H, SH_AOV_COLOR, (uint32_t *)rgba, NULL, NULL};
    const gr_launch_opts launch = {.workers = workers, .scheduler = scheduler};
    const bool ok = pl_kept_graph_render(k, g->graph, &spec, &launch, err) != NULL;
    CHECK_MSG(ok, "%s", err);
    return ok;
}

/* Each frame of `graph` (its pipeline, or a graph file) equal to the ordered graph's. */
static void frames_equal_ordered(const char *pipeline, const char *file, int msaa, const char *scheduler,
                                 unsigned workers)
{
    loaded l;
    if (!load("teapot", &l)) { CHECK(0); return; }
    pl_scene_data d;
    pl_scene_data_init(&d, l.s, &l.g);
    rg_setup tested, ordered;
    const char *files[] = {file};
    const bool made = setup(&tested, (rg_options){.pipeline = pipeline, .graphs = files, .ngraphs = file != NULL},
                            msaa);
    if (made && setup(&ordered, (rg_options){.pipeline = "raster-ordered"}, msaa)) {
        pl_kept_graph *kt = pl_kept_graph_new(), *ko = pl_kept_graph_new();
        uint8_t *image = malloc((size_t)W * H * 4), *expected = malloc((size_t)W * H * 4);
        const sc_camera base = l.s->camera;
        for (int f = 0; kt && ko && image && expected && f < FRAMES; f++) {
            move_camera(l.s, &base, f);
            if (!render(ko, &ordered, &d, scheduler, workers, expected) ||
                !render(kt, &tested, &d, scheduler, workers, image))
                break;
            size_t wrong = 0;
            for (size_t i = 0; i < (size_t)W * H * 4; i++) wrong += image[i] != expected[i];
            CHECK_MSG(wrong == 0, "%s, msaa %d, %s, %u workers, frame %d: %zu bytes differ from the "
                      "ordered graph's", file ? file : pipeline, msaa, scheduler, workers, f, wrong);
            /* raster.bin leaves the finish hook nothing; Setup/Bin leaves it every empty tile */
            const uint64_t late = pl_frame_count(pl_kept_graph_frame(kt), "tiles_filled_after_run");
            CHECK_MSG(file ? late > 0 : late == 0, "%s, %u workers, frame %d: %llu tiles filled after the run",
                      file ? file : pipeline, workers, f, (unsigned long long)late);
        }
        free(image);
        free(expected);
        pl_kept_graph_free(kt);
        pl_kept_graph_free(ko);
        rg_setup_free(&ordered);
    }
    if (made) rg_setup_free(&tested);
    pl_scene_data_free(&d);
    unload(&l);
}

static void test_sort_middle_writes_every_pixel(void)
{
    static const char *const schedulers[] = {"gramps", "task-stealing"};
    for (int msaa = 1; msaa <= 4; msaa += 3)
        for (int s = 0; s < 2; s++)
            for (unsigned w = 1; w <= 3; w++) frames_equal_ordered("raster", NULL, msaa, schedulers[s], w);
}

static void test_finish_hook_writes_tiles_no_bin_cleared(void)
{
    const char *file = scratch_file(dir, "setup-bin.graph", setup_bin_graph);
    char path[512];
    snprintf(path, sizeof path, "%s", file);
    for (int msaa = 1; msaa <= 4; msaa += 3)
        for (unsigned w = 1; w <= 2; w++) frames_equal_ordered(NULL, path, msaa, "gramps", w);
}

int main(void)
{
    if (!mkdtemp(dir)) return 1;
    RUN(test_sort_middle_writes_every_pixel);
    RUN(test_finish_hook_writes_tiles_no_bin_cleared);
    scratch_dir_remove(dir);
    return check_finish();
}
