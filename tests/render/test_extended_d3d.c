/* The Extended Direct3D graph (pipelines/graphs/hybrid.graph, issue 31), through
 * gramps-render as a user runs it, on scenes the test writes (textured box and floor, an
 * alpha-tested cut-out, a blended pane, a material both blended and reflective):
 *
 * - its surfaces are the raster graph's: with --bounces 0 and --set graph.shadows=false
 *   (no rays at all) at least 99% of pixels within 2/255 of -p raster, textures filtered
 *   from the same quad derivatives, the cut-out by the same alpha test; with shadows on,
 *   the box's shadow on the floor makes them differ. (Agreement with -p raytrace on
 *   opaque untextured scenes: test_hybrid.)
 * - the same bytes at 1, 2, 3 and 8 workers and under every scheduler, with mirrors,
 *   blending and several bounces;
 * - the statistics show the graph: fragments shaded, rays pushed by PS and by PS2 per
 *   kind, which add up to Trace's rays, Trace's packets, PS2's hits, the Output Merger's
 *   contributions; the DOT has ps -> trace -> ps2 -> om, trace -> om (the shadow rays'
 *   terms, which Trace resolves itself) and the backward ps2 -> trace;
 * - om runs an instance per framebuffer tile (the contributions set's subqueues), the
 *   image the same for any tile size;
 * - PS summing its base layer's terms (background, a surface's own) itself gives the
 *   image of sending them to om, and om gets that many fewer contributions;
 * - bad input: --bounces 1000 refused naming the flag, the most bounces and a material
 *   both blended and reflective render. */
#include "tests/box_scene.h"
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/png_compare.h"
#include "tests/scratch_dir.h"

#include <stb/stb_image.h>
#include <unistd.h>

static char dir[] = "/tmp/gramps-ed3d-XXXXXX";

static void test_surfaces_are_the_raster_graphs(void)
{
    char args[1024];
    snprintf(args, sizeof args, "-t 2 --size 128x128 -p raster %s/opaque.scene", dir);
    unsigned char *raster = render_into(dir, "raster", args);
    snprintf(args, sizeof args, "-t 2 --size 128x128 -p hybrid --bounces 0 --set graph.shadows=false "
             "%s/opaque.scene", dir);
    unsigned char *unshadowed = render_into(dir, "unshadowed", args);
    snprintf(args, sizeof args, "-t 2 --size 128x128 -p hybrid --bounces 0 %s/opaque.scene", dir);
    unsigned char *shadowed = render_into(dir, "shadowed", args);
    double a = agreement(raster, unshadowed, 128 * 128), b = agreement(raster, shadowed, 128 * 128);
    printf("    textured, cut-out, no shadows: %.4f of pixels within 2/255 of -p raster; with shadows "
           "%.4f\n", a, b);
    CHECK_MSG(a >= 0.99, "hybrid without shadows vs raster: %.4f of pixels within 2/255", a);
    CHECK_MSG(b < 0.98, "shadows on: %.4f of pixels as raster's (no shadow cast?)", b);
    stbi_image_free(raster);
    stbi_image_free(unshadowed);
    stbi_image_free(shadowed);
}

static void test_same_bytes_any_workers_and_scheduler(void)
{
    static const char *const runs[] = {"-t 1", "-t 2", "-t 3", "-t 8", "-t 3 --scheduler task-stealing",
                                       "-t 3 --scheduler breadth-first", "-t 3 --scheduler static"};
    static const char *const scenes[] = {"all.scene", "cornell"};
    for (int k = 0; k < 2; k++) {
        char ref[256], png[256], args[1024];
        snprintf(ref, sizeof ref, "%s/det-ref.png", dir);
        for (int r = 0; r < 7; r++) {
            snprintf(png, sizeof png, "%s/det-%d.png", dir, r);
            snprintf(args, sizeof args, "-q --size 96x80 --bounces 3 -p hybrid %s -o %s %s%s%s", runs[r],
                     r ? png : ref, k ? "" : dir, k ? "" : "/", scenes[k]);
            CHECK_MSG(run(args) == 0, "%s: %s", args, out);
            if (r) CHECK_MSG(same_files(ref, png), "%s %s: not -t 1's image", scenes[k], runs[r]);
        }
    }
}

/* The node id of the DOT node labelled `label` (e.g. "ps-0"), or "" */
static void node_of(const char *dot, const char *label, char id[16])
{
    char key[64];
    snprintf(key, sizeof key, "[label=\"%s\\n", label);
    const char *p = strstr(dot, key);
    id[0] = 0;
    if (!p) return;
    const char *line = p;
    while (line > dot && line[-1] != '\n') line--;
    sscanf(line, " %15s", id);
}

static bool has_edge(const char *dot, const char *from, const char *to, bool dashed)
{
    char a[16], b[16], key[64];
    node_of(dot, from, a);
    node_of(dot, to, b);
    snprintf(key, sizeof key, "  %s -> %s [", a, b);
    const char *p = a[0] && b[0] ? strstr(dot, key) : NULL;
    const char *end = p ? strchr(p, '\n') : NULL;
    bool is_dashed = p && end && memmem(p, (size_t)(end - p), "dashed", 6);
    return p && is_dashed == dashed;
}

static void test_statistics_and_graph_show_the_structure(void)
{
    char stats[256], dot[256], args[1024];
    snprintf(stats, sizeof stats, "%s/s.json", dir);
    snprintf(dot, sizeof dot, "%s/g.dot", dir);
    snprintf(args, sizeof args, "-q -t 2 --size 96x96 --bounces 2 -p hybrid --stats %s --dot %s teapot",
             stats, dot);
    CHECK_MSG(run(args) == 0, "%s", out);
    char *s = slurp(stats, NULL), *d = slurp(dot, NULL);
    static const char *const positive[] = {
        "fragments_shaded", "hybrid.ps_rays_shadow", "hybrid.ps_rays_reflection", "hybrid.trace_packets",
        "hybrid.trace_rays", "hybrid.shadow_packets", "hybrid.ps2_hits", "hybrid.ps2_rays_shadow",
        "hybrid.ps2_rays_reflection", "hybrid.om_contributions"};
    for (size_t k = 0; k < sizeof positive / sizeof *positive; k++)
        CHECK_MSG(stat_of(s, positive[k]) > 0, "%s: %lld", positive[k], stat_of(s, positive[k]));
    long long pushed = 0, shadows = 0;
    static const char *const who[] = {"ps", "ps2"},
                             *const kinds[] = {"shadow", "reflection", "through", "behind"};
    for (int w = 0; w < 2; w++)
        for (int k = 0; k < 4; k++) {
            char name[64];
            snprintf(name, sizeof name, "hybrid.%s_rays_%s", who[w], kinds[k]);
            CHECK_MSG(stat_of(s, name) >= 0, "%s missing", name);
            *(k ? &pushed : &shadows) += stat_of(s, name);
        }
    /* shadow rays to hybrid.shadow, the others to Trace */
    long long traced = stat_of(s, "hybrid.trace_rays"), packets = stat_of(s, "hybrid.trace_packets");
    CHECK_MSG(pushed == traced, "rays pushed %lld, traced %lld", pushed, traced);
    CHECK_MSG(packets > 0 && traced <= packets * 64, "%lld rays in %lld packets", traced, packets);
    long long tested = stat_of(s, "shadow"), spackets = stat_of(s, "hybrid.shadow_packets");
    CHECK_MSG(shadows == tested, "shadow rays pushed %lld, tested %lld", shadows, tested);
    CHECK_MSG(spackets > 0 && tested <= spackets * 64, "%lld shadow rays in %lld packets", tested, spackets);
    CHECK_MSG(stat_of(s, "fragments_shaded") <= 96 * 96, "%lld fragments", stat_of(s, "fragments_shaded"));
    CHECK_MSG(d && has_edge(d, "ps-0", "trace-0", false) && has_edge(d, "trace-0", "ps2-0", false) &&
              has_edge(d, "ps2-0", "om", false) && has_edge(d, "ps-0", "om", false) &&
              has_edge(d, "ps-0", "shadow-0", false) && has_edge(d, "ps2-0", "shadow-0", false) &&
              has_edge(d, "shadow-0", "om", false) &&   /* lit shadow rays' terms */
              has_edge(d, "ps2-0", "trace-0", true), "the DOT lacks an edge:\n%s", d ? d : "(none)");
    free(s);
    free(d);
    /* rays on through blended surfaces, from PS and from PS2 */
    snprintf(args, sizeof args, "-q -t 2 --size 96x96 -p hybrid --stats %s %s/all.scene", stats, dir);
    CHECK_MSG(run(args) == 0, "%s", out);
    s = slurp(stats, NULL);
    CHECK_MSG(stat_of(s, "hybrid.ps_rays_through") > 0 && stat_of(s, "hybrid.ps2_rays_through") > 0,
              "through rays: %lld from PS, %lld from PS2", stat_of(s, "hybrid.ps_rays_through"),
              stat_of(s, "hybrid.ps2_rays_through"));
    free(s);
}

/* The Output Merger is keyed per framebuffer tile: `contributions` has a subqueue (an om
 * instance) per tile, 4 x 3 at 200x136 with 64-pixel tiles, 7 x 5 with 32, the image the
 * same; an om whose tile disagrees with the other stages' is refused, naming both. */
static void test_om_per_framebuffer_tile(void)
{
    static const char *const tiles[] = {"", "--set graph.tile=32"};
    static const long long subqueues[] = {12, 35};
    char stats[256], png[2][256], args[1024];
    snprintf(stats, sizeof stats, "%s/tiles.json", dir);
    for (int t = 0; t < 2; t++) {
        snprintf(png[t], sizeof png[t], "%s/tiles-%d.png", dir, t);
        snprintf(args, sizeof args, "-q -t 2 --size 200x136 -p hybrid %s --stats %s -o %s %s/all.scene", tiles[t],
                 stats, png[t], dir);
        CHECK_MSG(run(args) == 0, "%s: %s", args, out);
        char *s = slurp(stats, NULL);
        const char *q = s ? strstr(s, "\"name\": \"contributions\"") : NULL;
        CHECK_MSG(q && stat_of(q, "subqueues") == subqueues[t], "%s: contributions has %lld subqueues, want %lld",
                  tiles[t], q ? stat_of(q, "subqueues") : -1, subqueues[t]);
        free(s);
    }
    CHECK_MSG(same_files(png[0], png[1]), "32-pixel tiles: another image");
    CHECK_MSG(run("-q --size 200x136 -p hybrid --set om.tile=32 teapot") == 1 &&
              strstr(out, "stage 'om'") && strstr(out, "`tile` is 32, where stage 'zraster-0' has 64"),
              "om's tile against the graph's: %s", out);
}

/* PS adding what goes to a pixel's base layer (the background, a surface's own terms) to
 * the sums itself (`sums`) gives the image of sending it to om, blended layers, msaa,
 * AOVs and several bounces included; on an opaque scene every shaded fragment's direct
 * term is a contribution om no longer gets. */
static void test_base_layer_summed_in_ps(void)
{
    static const char *const cases[] = {"teapot", "--bounces 2 %s/all.scene", "--msaa 4 %s/all.scene",
                                        "--aov albedo %s/all.scene", "--aov depth teapot",
                                        "--set graph.shadows=false teapot"};
    char a[256], b[256], sa[256], sb[256], scene[300], args[1500];
    snprintf(sa, sizeof sa, "%s/sums-on.json", dir);
    snprintf(sb, sizeof sb, "%s/sums-off.json", dir);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        snprintf(scene, sizeof scene, cases[k], dir);
        snprintf(a, sizeof a, "%s/sums-on-%zu.png", dir, k);
        snprintf(b, sizeof b, "%s/sums-off-%zu.png", dir, k);
        snprintf(args, sizeof args, "-q -t 2 --size 100x70 -p hybrid --stats %s -o %s %s", sa, a, scene);
        CHECK_MSG(run(args) == 0, "%s", out);
        snprintf(args, sizeof args, "-q -t 2 --size 100x70 -p hybrid --set ps.sums=false --stats %s -o %s %s",
                 sb, b, scene);
        CHECK_MSG(run(args) == 0, "%s", out);
        CHECK_MSG(same_files(a, b), "%s: base layer summed in PS: another image", scene);
        if (k) continue;
        char *on = slurp(sa, NULL), *off = slurp(sb, NULL);
        const long long fragments = stat_of(on, "fragments_shaded");
        CHECK_MSG(fragments > 0 && stat_of(on, "hybrid.om_contributions") + fragments <=
                  stat_of(off, "hybrid.om_contributions"), "%s: om got %lld contributions with sums, %lld "
                  "without, %lld fragments shaded", scene, stat_of(on, "hybrid.om_contributions"),
                  stat_of(off, "hybrid.om_contributions"), fragments);
        free(on);
        free(off);
    }
}

static void test_bad_input(void)
{
    CHECK_MSG(run("-q --size 32x32 -p hybrid --bounces 1000 cornell") == 2 && strstr(out, "--bounces"),
              "--bounces 1000: %s", out);
    char args[1024];
    snprintf(args, sizeof args, "-q -t 2 --size 48x48 -p hybrid --bounces 64 -o %s/deep.png cornell", dir);
    CHECK_MSG(run(args) == 0, "--bounces 64: %s", out);
    /* a light and the camera inside the box, a material both blended and reflective */
    snprintf(args, sizeof args, "-q -t 2 --size 48x48 -p hybrid --bounces 4 --light 0,0,0 "
             "--camera 0.2,0.1,0,3,0,0,0,1,0,60 -o %s/inside.png %s/all.scene", dir, dir);
    CHECK_MSG(run(args) == 0, "inside: %s", out);
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    if (!mkdtemp(dir)) return 1;
    box_scene_files(dir);
    RUN(test_surfaces_are_the_raster_graphs);
    RUN(test_same_bytes_any_workers_and_scheduler);
    RUN(test_statistics_and_graph_show_the_structure);
    RUN(test_om_per_framebuffer_tile);
    RUN(test_base_layer_summed_in_ps);
    RUN(test_bad_input);
    scratch_dir_remove(dir);
    return check_finish();
}
