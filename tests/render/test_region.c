/* A frame narrowed to a region (pl_frame_set_region) gives every pixel inside it the
 * value the whole-image frame gives, bit for bit, for every graph: raster (the
 * sort-middle default; ordered, with and without the coarse depth test; the parallel
 * rasterizer), ray tracer and hybrid. gramps-render-mpi builds its images from such regions rendered on different
 * ranks. The regions are not aligned to any tile (the raster graph's 64, the ray
 * tracer's 32, the coarse test's 8x8 blocks), and the image size is not a multiple of
 * a tile either. Regions rendered one after another into the same frame (as
 * gramps-render-mpi does with its chunks of one frame) make the whole frame's image. */
#include "pipelines/stages.h"
#include "tests/check.h"
#include "tests/loaded_scene.h"
#include "tools/common/render_graph.h"

#include <stdlib.h>
#include <string.h>

#define W 200
#define H 136

/* Regions that together cover the image, plus one inside it. */
static const pl_region regions[] = {
    {0, 0, W, 37}, {0, 37, 117, 101}, {117, 37, W, 101}, {0, 101, W, H}, {45, 13, 170, 99},
    {199, 135, 200, 136}};

/* One frame of the graph into img (W x H RGBA): the whole image when nr is 0, else
 * the nr regions r, one run each, in order, into the same frame. */
static bool render(rg_setup *g, loaded *l, const pl_region *r, int nr, uint8_t *img)
{
    pl_scene_data d;
    pl_scene_data_init(&d, l->s, &l->g);
    pl_scene_data_set_bvh(&d, l->bvh);
    pl_frame f;
    char err[CP_ERR_MAX];
    bool ok = pl_frame_init(&f, &d, W, H, SH_AOV_COLOR, err);
    gr_launch_opts lo = {.workers = 2};
    for (int i = 0; ok && i < (nr ? nr : 1); i++) {
        gr_graph *run = !nr || pl_frame_set_region(&f, r[i], err) ? pl_render_frame(g->graph, &f, &lo, err)
                                                                 : NULL;
        ok = run != NULL;
        gr_graph_destroy(run);
    }
    if (ok) memcpy(img, pl_frame_image(&f), (size_t)W * H * 4);
    else fprintf(stderr, "  %s\n", err);
    pl_frame_free(&f);
    pl_scene_data_free(&d);
    return ok;
}

static size_t differing_pixels(const uint8_t *a, const uint8_t *b, const pl_region *r)
{
    size_t n = 0;
    for (int y = r->y0; y < r->y1; y++)
        n += memcmp(a + ((size_t)y * W + r->x0) * 4, b + ((size_t)y * W + r->x0) * 4,
                    (size_t)(r->x1 - r->x0) * 4) != 0;
    return n;
}

/* The graph chosen by o on scene: every region's pixels equal the whole frame's. */
static void compare_regions(const char *scene, rg_options o, const char *what)
{
    const char *sets[1];
    o.sets = sets;
    rg_setup g;
    char err[CP_ERR_MAX];
    loaded l;
    if (rg_setup_init(&g, &o, err)) { fprintf(stderr, "  %s\n", err); CHECK(0); return; }
    if (!load(scene, &l)) { rg_setup_free(&g); CHECK(0); return; }
    uint8_t *whole = calloc(W * H, 4), *part = calloc(W * H, 4);
    CHECK(render(&g, &l, NULL, 0, whole));
    CHECK(render(&g, &l, regions, 4, part));              /* the first four cover the image */
    CHECK_MSG(memcmp(whole, part, (size_t)W * H * 4) == 0, "%s on %s: regions rendered in turn "
              "into one frame differ from the whole frame", what, scene);
    for (size_t i = 0; i < sizeof regions / sizeof *regions; i++) {
        CHECK(render(&g, &l, &regions[i], 1, part));
        size_t n = differing_pixels(whole, part, &regions[i]);
        CHECK_MSG(n == 0, "%s on %s: %zu rows of region %zu differ", what, scene, n, i);
    }
    /* the last render's region is one pixel: the rest of the picture was not made */
    const pl_region top = {0, 0, W, H - 1};
    CHECK_MSG(differing_pixels(whole, part, &top) > H / 4, "%s on %s: rendered outside "
              "the region", what, scene);
    free(whole);
    free(part);
    unload(&l);
    rg_setup_free(&g);
}

static void test_raster(void)
{
    compare_regions("teapot", (rg_options){.pipeline = "raster"}, "raster");
    compare_regions("courtyard", (rg_options){.pipeline = "raster"}, "raster");
}

static void test_raster_ordered(void)
{
    compare_regions("teapot", (rg_options){.pipeline = "raster-ordered"}, "raster-ordered");
    compare_regions("courtyard", (rg_options){.pipeline = "raster-ordered", .no_coarse_z = true},
                    "raster-ordered without coarse-Z");
}

static void test_raster_parallel(void)
{
    compare_regions("teapot", (rg_options){.pipeline = "raster", .parallel_rast = true},
                    "parallel raster");
}

static void test_raytrace(void)
{
    compare_regions("cornell", (rg_options){.pipeline = "raytrace", .bounces = 2, .have_bounces = true},
                    "raytrace");
    compare_regions("teapot", (rg_options){.pipeline = "raytrace", .spp = 4}, "raytrace 4 spp");
}

static void test_hybrid(void)
{
    compare_regions("courtyard", (rg_options){.pipeline = "hybrid"}, "hybrid");
    compare_regions("courtyard", (rg_options){.pipeline = "hybrid", .msaa = 4}, "hybrid msaa 4");
}

/* An empty region or one outside the image is refused, naming it. */
static void test_bad_region(void)
{
    loaded l;
    if (!load("teapot", &l)) { CHECK(0); return; }
    pl_scene_data d;
    pl_scene_data_init(&d, l.s, &l.g);
    pl_frame f;
    char err[CP_ERR_MAX];
    CHECK(pl_frame_init(&f, &d, W, H, SH_AOV_COLOR, err));
    CHECK(!pl_frame_set_region(&f, (pl_region){0, 0, W + 1, H}, err) && strstr(err, "region"));
    CHECK(!pl_frame_set_region(&f, (pl_region){5, 5, 5, 9}, err));
    CHECK(!pl_frame_set_region(&f, (pl_region){-1, 0, 4, 4}, err));
    CHECK(pl_frame_set_region(&f, (pl_region){0, 0, W, H}, err));
    pl_frame_free(&f);
    pl_scene_data_free(&d);
    unload(&l);
}

int main(void)
{
    RUN(test_raster);
    RUN(test_raster_ordered);
    RUN(test_raster_parallel);
    RUN(test_raytrace);
    RUN(test_hybrid);
    RUN(test_bad_region);
    return check_finish();
}
