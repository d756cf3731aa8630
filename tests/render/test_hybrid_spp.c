/* Jittered samples in the hybrids (`--spp` > 1; pipelines/hybrid/primary_hits.c): a
 * sample takes its primary hit from the primitive its pixel's centre saw only where the
 * pixel and its eight neighbours saw the same one; elsewhere its camera ray is traced as
 * the ray tracer traces it. A sample tested against its centre's primitive wherever the
 * centre saw one gets the farther surface where a nearer edge passes between the sample
 * and the centre (99.50% and 99.22% of the panes' pixels at --spp 2 and 4): this fails.
 *
 * - -p hybrid-visibility and -p hybrid at --spp 2 and 4 agree with -p raytrace at the
 *   same spp on at least 99.9% of pixels within 2/255 (untextured box behind two panes;
 *   bunny.obj);
 * - the same bytes at 1, 2 and 3 workers and under other schedulers. */
#include "tests/box_scene.h"
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/png_compare.h"
#include "tests/scratch_dir.h"

#include <stb/stb_image.h>
#include <unistd.h>

static char dir[] = "/tmp/gramps-hspp-XXXXXX";

/* plain.scene: an untextured box on the floor behind two overlapping blended panes. */
static void write_scene(void)
{
    box_scene_write(dir, "plain.scene",
                    "[camera]\neye = 0,2.5,8\ntarget = 0,0,0\nfovy = 45\n[light.key]\nposition = 5,8,6\n"
                    "[material.plain]\nalbedo = 0.8,0.8,0.7\n[mesh.box]\nfile = box.obj\nmaterial = plain\n"
                    "[material.blue]\nalbedo = 0.3,0.5,0.9\nalpha = 0.5\nalpha_mode = blend\n"
                    "[material.red]\nalbedo = 0.9,0.2,0.1\nalpha = 0.35\nalpha_mode = blend\n"
                    "[mesh.near]\nfile = quad.obj\nmaterial = red\nscale = 2\ntranslate = -1,-0.3,2.6\n"
                    "[mesh.far]\nfile = quad.obj\nmaterial = blue\nscale = 2.5\ntranslate = -2,-0.8,1.5\n");
}

static void test_agrees_with_the_ray_tracer(void)
{
    char plain[300];
    snprintf(plain, sizeof plain, "%s/plain.scene", dir);
    const char *const scenes[] = {plain, "../shared/scenes/bunny.obj"}, *const names[] = {"panes", "bunny"};
    const char *const hybrids[] = {"hybrid-visibility", "hybrid"};
    const int spps[] = {2, 4}, size = 80, pixels = size * size;
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < 2; k++) {
            char args[1024], name[64];
            snprintf(args, sizeof args, "-t 2 --size %dx%d --spp %d -p raytrace %s", size, size, spps[k], scenes[s]);
            snprintf(name, sizeof name, "raytrace-%s-%d", names[s], spps[k]);
            unsigned char *rt = render_into(dir, name, args);
            for (int h = 0; h < 2; h++) {
                snprintf(args, sizeof args, "-t 2 --size %dx%d --spp %d -p %s %s", size, size, spps[k],
                         hybrids[h], scenes[s]);
                snprintf(name, sizeof name, "%s-%s-%d", hybrids[h], names[s], spps[k]);
                unsigned char *hy = render_into(dir, name, args);
                const double close = agreement(hy, rt, pixels);
                printf("    %s, %s --spp %d: %.4f of pixels within 2/255 of -p raytrace\n", names[s], hybrids[h],
                       spps[k], close);
                CHECK_MSG(close >= 0.999, "%s, %s --spp %d: %.4f of pixels within 2/255 of -p raytrace", names[s],
                          hybrids[h], spps[k], close);
                free(hy);
            }
            free(rt);
        }
}

static void test_same_bytes_any_workers_and_scheduler(void)
{
    const char *const hybrids[] = {"hybrid-visibility", "hybrid"};
    const char *const runs[] = {"-t 1", "-t 3", "-t 3 --scheduler breadth-first", "-t 2 --scheduler static"};
    for (int h = 0; h < 2; h++) {
        char ref[256], png[256], args[1024];
        snprintf(ref, sizeof ref, "%s/det-%d-0.png", dir, h);
        for (int r = 0; r < 4; r++) {
            snprintf(png, sizeof png, "%s/det-%d-%d.png", dir, h, r);
            snprintf(args, sizeof args, "-q --size 72x64 --spp 4 --bounces 2 %s -p %s -o %s %s/plain.scene", runs[r],
                     hybrids[h], png, dir);
            CHECK_MSG(run(args) == 0, "%s: %s", args, out);
            if (r > 0) CHECK_MSG(same_files(ref, png), "%s --spp 4 %s: not -t 1's image", hybrids[h], runs[r]);
        }
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    if (!mkdtemp(dir)) return 1;
    box_scene_files(dir);
    write_scene();
    RUN(test_agrees_with_the_ray_tracer);
    RUN(test_same_bytes_any_workers_and_scheduler);
    scratch_dir_remove(dir);
    return check_finish();
}
