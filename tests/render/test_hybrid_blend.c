/* Blended surfaces in -p hybrid (pipelines/graphs/hybrid.graph; issue 31): its Output
 * Merger blends them in draw order as the raster graphs do (pipelines/hybrid/om.c), on
 * a scene the test writes: a textured box on a textured floor behind two overlapping
 * blended panes, the nearer one listed first, so that draw order (primitive order) and
 * depth order disagree where they overlap.
 *
 * - with --bounces 0 and --set graph.shadows=false, at least 99% of pixels within 2/255
 *   of -p raster, in colour and in the albedo AOV, with the panes in either order (blending
 *   along the ray in linear light, as before, gave 77% and 88%);
 * - the two orders give different images (the panes' order is the primitive order);
 * - with --msaa 4, at least 99% within 2/255 of -p raster --msaa 4 (100% now): what
 *   each sample sees behind a pane is its own (98.7% at 128x128 when one ray through
 *   the pixel centre found what lay behind for all the samples);
 * - the same bytes at 1, 2, 3 and 8 workers and under every scheduler, with shadows
 *   through the panes and mirror bounces, and with --msaa 4;
 * - with --spp 2, blended surfaces composited along each sample's ray: at least 99.9% of
 *   pixels within 2/255 of -p raytrace --spp 2 (100% since a sample of a pixel whose
 *   neighbours saw other primitives is traced: test_hybrid_spp.c). */
#include "tests/box_scene.h"
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/png_compare.h"
#include "tests/scratch_dir.h"

#include <stb/stb_image.h>
#include <unistd.h>

static char dir[] = "/tmp/gramps-hblend-XXXXXX";

/* panes.scene (the nearer pane first), ordered.scene (the farther first) and
 * plain.scene (panes.scene with the box and floor untextured). */
static void write_scenes(void)
{
    static const char view[] = "[camera]\neye = 0,2.5,8\ntarget = 0,0,0\nfovy = 45\n[light.key]\nposition = 5,8,6\n";
    static const char panes[] =
        "[material.blue]\nalbedo = 0.3,0.5,0.9\nalpha = 0.5\nalpha_mode = blend\n"
        "[material.red]\nalbedo = 0.9,0.2,0.1\nalpha = 0.35\nalpha_mode = blend\n";
    static const char far[] = "[mesh.far]\nfile = quad.obj\nmaterial = blue\nscale = 2.5\ntranslate = -2,-0.8,1.5\n";
    static const char near[] = "[mesh.near]\nfile = quad.obj\nmaterial = red\nscale = 2\ntranslate = -1,-0.3,2.6\n";
    static const char box[] = "[mesh.box]\nfile = box.obj\n";
    static const char plain_box[] = "[material.plain]\nalbedo = 0.8,0.8,0.7\n[mesh.box]\nfile = box.obj\n"
                                    "material = plain\n";
    char scene[2048];
    snprintf(scene, sizeof scene, "%s%s%s%s%s", view, box, panes, near, far);
    box_scene_write(dir, "panes.scene", scene);
    snprintf(scene, sizeof scene, "%s%s%s%s%s", view, box, panes, far, near);
    box_scene_write(dir, "ordered.scene", scene);
    snprintf(scene, sizeof scene, "%s%s%s%s%s", view, plain_box, panes, near, far);
    box_scene_write(dir, "plain.scene", scene);
}

static void test_blends_as_the_raster_graph(void)
{
    static const char *const scenes[] = {"panes", "ordered"}, *const aovs[] = {"color", "albedo"};
    unsigned char *hybrid_of[2] = {NULL, NULL};
    for (int s = 0; s < 2; s++)
        for (int a = 0; a < 2; a++) {
            char args[1024], name[64];
            snprintf(args, sizeof args, "-t 2 --size 96x96 --aov %s -p raster %s/%s.scene", aovs[a], dir, scenes[s]);
            snprintf(name, sizeof name, "raster-%s-%s", scenes[s], aovs[a]);
            unsigned char *raster = render_into(dir, name, args);
            snprintf(args, sizeof args, "-t 2 --size 96x96 --aov %s -p hybrid --bounces 0 --set graph.shadows=false "
                     "%s/%s.scene", aovs[a], dir, scenes[s]);
            snprintf(name, sizeof name, "hybrid-%s-%s", scenes[s], aovs[a]);
            unsigned char *hybrid = render_into(dir, name, args);
            double agree = agreement(raster, hybrid, 96 * 96);
            printf("    %s, %s: %.4f of pixels within 2/255 of -p raster\n", scenes[s], aovs[a], agree);
            CHECK_MSG(agree >= 0.99, "%s %s: %.4f of pixels within 2/255 of -p raster", scenes[s], aovs[a], agree);
            stbi_image_free(raster);
            if (a == 0) hybrid_of[s] = hybrid;
            else stbi_image_free(hybrid);
        }
    double same = agreement(hybrid_of[0], hybrid_of[1], 96 * 96);
    CHECK_MSG(same >= 0 && same < 0.97, "the panes' order changed %.4f of pixels: not blended in draw order?",
              1 - same);
    stbi_image_free(hybrid_of[0]);
    stbi_image_free(hybrid_of[1]);
}

/* With --msaa 4 what each sample sees behind a pane is its own (the raster graphs blend
 * per sample): the box's edges behind the panes are antialiased as -p raster's. */
static void test_blends_per_sample(void)
{
    char args[1024];
    snprintf(args, sizeof args, "-t 2 --size 128x128 --msaa 4 -p raster %s/panes.scene", dir);
    unsigned char *raster = render_into(dir, "raster-msaa", args);
    snprintf(args, sizeof args, "-t 2 --size 128x128 --msaa 4 -p hybrid --bounces 0 --set graph.shadows=false "
             "--stats %s/msaa.json %s/panes.scene", dir, dir);
    unsigned char *hybrid = render_into(dir, "hybrid-msaa", args);
    double agree = agreement(raster, hybrid, 128 * 128);
    printf("    --msaa 4: %.4f of pixels within 2/255 of -p raster\n", agree);
    CHECK_MSG(agree >= 0.99, "--msaa 4: %.4f of pixels within 2/255 of -p raster", agree);
    char path[300];
    snprintf(path, sizeof path, "%s/msaa.json", dir);
    char *stats = slurp(path, NULL);
    const char *behind = stats ? strstr(stats, "\"hybrid.ps_rays_behind\": ") : NULL;
    CHECK_MSG(behind && atoll(behind + strlen("\"hybrid.ps_rays_behind\": ")) > 0, "no behind rays pushed");
    free(stats);
    stbi_image_free(raster);
    stbi_image_free(hybrid);
}

static void test_same_bytes_any_workers_and_scheduler(void)
{
    static const char *const runs[] = {"-t 1", "-t 2", "-t 3", "-t 8", "-t 3 --scheduler task-stealing",
                                       "-t 3 --scheduler breadth-first", "-t 3 --scheduler static",
                                       "-t 1 --msaa 4", "-t 3 --msaa 4", "-t 8 --msaa 4 --scheduler static"};
    char ref[256], ref4[256], png[256], args[1024];
    snprintf(ref, sizeof ref, "%s/det-ref.png", dir);
    snprintf(ref4, sizeof ref4, "%s/det-ref4.png", dir);
    for (int r = 0; r < 10; r++) {
        const bool msaa = r >= 7, first = r == 0 || r == 7;
        snprintf(png, sizeof png, "%s/det-%d.png", dir, r);
        snprintf(args, sizeof args, "-q --size 64x56 --bounces 2 -p hybrid %s -o %s %s/panes.scene", runs[r],
                 first ? (msaa ? ref4 : ref) : png, dir);
        CHECK_MSG(run(args) == 0, "%s: %s", args, out);
        if (!first) CHECK_MSG(same_files(msaa ? ref4 : ref, png), "%s: not -t 1's image", runs[r]);
    }
}

/* With --spp 2 the layers cannot be summed per pixel, so blended surfaces are
 * composited along each sample's ray as the ray tracer composites them: the image is
 * -p raytrace --spp 2's (the same samples; shading functions shared) on untextured
 * surfaces (textures are filtered at the pixel quad's footprint here, along ray cones
 * there). */
static void test_more_samples_composite_along_the_ray(void)
{
    char args[1024];
    const int pixels = 64 * 64;
    snprintf(args, sizeof args, "-t 2 --size 64x64 --spp 2 -p hybrid %s/plain.scene", dir);
    unsigned char *hybrid = render_into(dir, "spp2-hybrid", args);
    snprintf(args, sizeof args, "-t 2 --size 64x64 --spp 2 -p raytrace %s/plain.scene", dir);
    unsigned char *raytrace = render_into(dir, "spp2-raytrace", args);
    const double close = agreement(hybrid, raytrace, pixels);
    fprintf(stderr, "  --spp 2: %.2f%% of pixels within 2/255 of -p raytrace --spp 2\n", 100 * close);
    CHECK_MSG(close >= 0.999, "--spp 2: %.2f%% of pixels within 2/255 of -p raytrace", 100 * close);
    free(hybrid);
    free(raytrace);
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    if (!mkdtemp(dir)) return 1;
    box_scene_files(dir);
    write_scenes();
    RUN(test_blends_as_the_raster_graph);
    RUN(test_blends_per_sample);
    RUN(test_same_bytes_any_workers_and_scheduler);
    RUN(test_more_samples_composite_along_the_ray);
    scratch_dir_remove(dir);
    return check_finish();
}
