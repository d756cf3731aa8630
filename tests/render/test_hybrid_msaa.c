/* Multisampling in the Extended Direct3D graph (-p hybrid --msaa 4|8, issue 31): the
 * depth pass keeps a primitive per sample, the PS shades each pixel once per triangle
 * its samples see and pushes that fragment's rays once, the Output Merger sums each
 * fragment apart and resolves the pixel from its samples' bytes as the raster graphs do.
 * Through gramps-render, on the scene test_extended_d3d uses (a textured box on a
 * textured floor, an alpha-tested cut-out; a blended pane and a blended mirror):
 *
 * - without rays (--bounces 0, no shadows) it is -p raster at the same --msaa: at least
 *   99% of all pixels, and of the edge pixels (those multisampling changes in -p
 *   raster), within 2/255; and its edges are smoothed (it differs from --msaa 1 there);
 * - the same bytes at 1, 2, 3 and 8 workers and under every scheduler, with shadows,
 *   mirrors, blending and 3 bounces;
 * - rays are pushed per shaded fragment, not per sample: --msaa 4 pushes less than 1.5x
 *   the shadow rays of --msaa 1;
 * - bad input: --msaa with --spp > 1 and with the primid AOV are refused with a message
 *   naming them; --msaa 4 itself is no longer refused. */
#include "tests/box_scene.h"
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/png_compare.h"
#include "tests/scratch_dir.h"

#include <unistd.h>

static char dir[] = "/tmp/gramps-hmsaa-XXXXXX";

/* Whether pixel i's channels all lie within 2 of each other's. */
static bool close_at(const unsigned char *a, const unsigned char *b, int i)
{
    for (int ch = 0; ch < 3; ch++)
        if (abs(a[i * 4 + ch] - b[i * 4 + ch]) > 2) return false;
    return true;
}

#define SIDE 128
#define PIXELS (SIDE * SIDE)

/* With msaa m: -p hybrid without rays against -p raster, over all pixels and over the
 * edges (where raster's msaa m differs from its msaa 1). */
static void check_surfaces(int m)
{
    char args[1024], name[64];
    snprintf(args, sizeof args, "-t 2 --size %dx%d -p raster %s/opaque.scene", SIDE, SIDE, dir);
    unsigned char *single = render_into(dir, "raster1", args);
    snprintf(args, sizeof args, "-t 2 --size %dx%d -p raster --msaa %d %s/opaque.scene", SIDE, SIDE, m, dir);
    snprintf(name, sizeof name, "raster%d", m);
    unsigned char *raster = render_into(dir, name, args);
    snprintf(args, sizeof args, "-t 2 --size %dx%d -p hybrid --msaa %d --bounces 0 "
             "--set graph.shadows=false %s/opaque.scene", SIDE, SIDE, m, dir);
    snprintf(name, sizeof name, "hybrid%d", m);
    unsigned char *hybrid = render_into(dir, name, args);
    snprintf(args, sizeof args, "-t 2 --size %dx%d -p hybrid --bounces 0 --set graph.shadows=false "
             "%s/opaque.scene", SIDE, SIDE, dir);
    unsigned char *hybrid1 = render_into(dir, "hybrid1", args);
    int close = 0, edges = 0, close_edges = 0, smoothed = 0;
    for (int i = 0; single && raster && hybrid && hybrid1 && i < PIXELS; i++) {
        const bool edge = !close_at(single, raster, i), same = close_at(raster, hybrid, i);
        close += same;
        edges += edge;
        close_edges += edge && same;
        smoothed += edge && !close_at(hybrid1, hybrid, i);
    }
    const double all = (double)close / PIXELS, at_edges = edges ? (double)close_edges / edges : 0;
    printf("    msaa %d: %.4f of pixels within 2/255 of -p raster, %.4f of its %d edge pixels; "
           "%d of them differ from hybrid's msaa 1\n", m, all, at_edges, edges, smoothed);
    CHECK_MSG(edges > 100, "msaa %d: only %d pixels changed by raster's multisampling", m, edges);
    CHECK_MSG(all >= 0.99, "msaa %d: %.4f of pixels within 2/255 of -p raster", m, all);
    CHECK_MSG(at_edges >= 0.99, "msaa %d: %.4f of edge pixels within 2/255 of -p raster", m, at_edges);
    CHECK_MSG(smoothed * 2 > edges, "msaa %d: %d of %d edge pixels smoothed", m, smoothed, edges);
    stbi_image_free(single);
    stbi_image_free(raster);
    stbi_image_free(hybrid);
    stbi_image_free(hybrid1);
}

static void test_surfaces_are_the_raster_graphs(void)
{
    check_surfaces(4);
    check_surfaces(8);
}

static void test_same_bytes_any_workers_and_scheduler(void)
{
    static const char *const runs[] = {"-t 1", "-t 2", "-t 3", "-t 8", "-t 3 --scheduler task-stealing",
                                       "-t 3 --scheduler breadth-first", "-t 3 --scheduler static"};
    char ref[256], png[256], args[1024];
    snprintf(ref, sizeof ref, "%s/det-ref.png", dir);
    for (int r = 0; r < 7; r++) {
        snprintf(png, sizeof png, "%s/det-%d.png", dir, r);
        snprintf(args, sizeof args, "-q --size 96x80 --msaa 4 --bounces 3 -p hybrid %s -o %s %s/all.scene",
                 runs[r], r ? png : ref, dir);
        CHECK_MSG(run(args) == 0, "%s: %s", args, out);
        if (r) CHECK_MSG(same_files(ref, png), "msaa 4 %s: not -t 1's image", runs[r]);
    }
}

static long long shadow_rays(int m)
{
    char args[1024], path[256];
    snprintf(path, sizeof path, "%s/stats%d.json", dir, m);
    snprintf(args, sizeof args, "-q -t 2 --size 96x96 -p hybrid --msaa %d --stats %s -o %s/s%d.png %s/opaque.scene",
             m, path, dir, m, dir);
    CHECK_MSG(run(args) == 0, "%s: %s", args, out);
    char *stats = slurp(path, NULL);
    long long n = stat_of(stats, "hybrid.ps_rays_shadow");
    free(stats);
    return n;
}

static void test_rays_per_fragment(void)
{
    long long one = shadow_rays(1), four = shadow_rays(4);
    printf("    shadow rays pushed by PS: %lld at msaa 1, %lld at msaa 4\n", one, four);
    CHECK_MSG(one > 0 && four >= one && four * 2 < one * 3, "msaa 4 pushed %lld shadow rays, msaa 1 %lld",
              four, one);
}

static void test_bad_input(void)
{
    CHECK_MSG(run("-q --size 32x32 -p hybrid --msaa 4 --spp 4 teapot") != 0 && strstr(out, "msaa") &&
              strstr(out, "spp"), "--msaa 4 --spp 4: %s", out);
    CHECK_MSG(run("-q --size 32x32 -p hybrid --msaa 4 --aov primid teapot") != 0 && strstr(out, "primid"),
              "--msaa 4 --aov primid: %s", out);
    char args[512];
    snprintf(args, sizeof args, "-q --size 32x32 -p hybrid --msaa 8 -o %s/ok.png teapot", dir);
    CHECK_MSG(run(args) == 0, "--msaa 8 refused: %s", out);
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    if (!mkdtemp(dir)) return 1;
    box_scene_files(dir);
    RUN(test_surfaces_are_the_raster_graphs);
    RUN(test_same_bytes_any_workers_and_scheduler);
    RUN(test_rays_per_fragment);
    RUN(test_bad_input);
    scratch_dir_remove(dir);
    return check_finish();
}
