/* gramps-render's graph options as a user meets them: -p and --graph of the same graph
 * give the same bits, --set changes a capacity the statistics then report, --list-stages
 * shows every built-in stage with its ports, and a bad graph file, stage type,
 * parameter, format or plugin stops with exit 1 naming the file and line. Finds the
 * tool beside this test's build dir. */
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/scratch_dir.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/gramps-cli-graph-XXXXXX";

/* -p NAME and --graph pipelines/graphs/FILE render the same bits, at several workers;
 * so do raster.graph (sort-middle, any order) and raster-ordered.graph (the thesis'). */
static void test_builtin_equals_graph_file(void)
{
    static const char *const cases[][3] = {
        {"-p raster", "pipelines/graphs/raster.graph", "courtyard"},
        {"-p raster --parallel-rast", "pipelines/graphs/raster-parallel.graph", "teapot"},
        {"-p raytrace", "pipelines/graphs/raytrace.graph", "cornell"},
        /* triangles in any order, ties to the smaller primitive id: the draw-order image */
        {"-p raster-ordered", "pipelines/graphs/raster.graph", "fairy"},
        {"-p raster-ordered --aov primid", "pipelines/graphs/raster.graph --aov primid", "courtyard"},
        {"-p raster", "pipelines/graphs/raster-ordered.graph", "teapot"},
        /* the thesis' Sampler and Camera in place of Primary (an overlay) */
        {"-p raytrace", "examples/graphs/raytrace-sampler.graph", "cornell"},
    };
    for (int c = 0; c < 7; c++) {
        char a[300], b[300], args[1024];
        snprintf(a, sizeof a, "%s/builtin-%d.png", dir, c);
        snprintf(args, sizeof args, "-q --size 96x64 -t 1 %s -o %s %s", cases[c][0], a, cases[c][2]);
        CHECK_MSG(run(args) == 0, "%s: %s", args, out);
        for (int t = 1; t <= 3; t++) {
            snprintf(b, sizeof b, "%s/file-%d-%d.png", dir, c, t);
            snprintf(args, sizeof args, "-q --size 96x64 -t %d --graph %s -o %s %s", t,
                     cases[c][1], b, cases[c][2]);
            CHECK_MSG(run(args) == 0, "%s: %s", args, out);
            CHECK_MSG(same_files(a, b), "%s vs --graph %s at %d workers", cases[c][0], cases[c][1], t);
        }
    }
}

/* 200 copies of one triangle at exactly the same depth, dealt to different IA/VS/Bin
 * groups (the hybrid's: to different depth layers, folded per tile): whichever arrives
 * first, the visible one must be the first drawn (primitive 0), as the thesis' ordered
 * graph gives. */
static void test_equal_depths_in_draw_order(void)
{
    char obj[300], a[300], b[300], args[1024];
    snprintf(obj, sizeof obj, "%s/ties.obj", dir);
    FILE *f = fopen(obj, "w");
    if (!f) { CHECK(0); return; }
    fprintf(f, "v -1 -1 0\nv 1 -1 0\nv 0 1 0\n");
    for (int i = 0; i < 200; i++) fprintf(f, "f 1 2 3\n");
    fclose(f);
    snprintf(a, sizeof a, "%s/ties-ordered.png", dir);
    snprintf(args, sizeof args, "-q --size 64x64 --aov primid -t 1 --graph "
             "pipelines/graphs/raster-ordered.graph -o %s %s", a, obj);
    CHECK_MSG(run(args) == 0, "%s", out);
    for (int t = 1; t <= 3; t++) {
        snprintf(b, sizeof b, "%s/ties-%d.png", dir, t);
        snprintf(args, sizeof args, "-q --size 64x64 --aov primid -t %d --set graph.batch=8 "
                 "--graph pipelines/graphs/raster.graph -o %s %s", t, b, obj);
        CHECK_MSG(run(args) == 0, "%s", out);
        CHECK_MSG(same_files(a, b), "equal depths at %d workers: not the first drawn", t);
    }
    for (int t = 1; t <= 3; t++) {
        snprintf(b, sizeof b, "%s/ties-hybrid-%d.png", dir, t);
        snprintf(args, sizeof args, "-q --size 64x64 --aov primid -t %d --set graph.batch=8 "
                 "--set graph.groups=%d -p hybrid -o %s %s", t, 2 + t, b, obj);
        CHECK_MSG(run(args) == 0, "%s", out);
        CHECK_MSG(same_files(a, b), "hybrid, equal depths in %d layers at %d workers: not the "
                  "first drawn", 2 + t, t);
    }
}

/* --set reaches the queue: the statistics report the new capacity. */
/* The ray tracer's Tiler copies (one per group) split the tiles by pixel band: each
 * tile is rendered exactly once whatever the copies, bands or workers, and in an image
 * whose width is no multiple of the tile (tiles straddle bands) or that has fewer bands
 * than copies; and camera rays traced by Intersect instead of Primary give it too. A
 * tile emitted twice sums twice; one emitted by no copy stays empty. */
static void test_tiler_copies_cover_once(void)
{
    static const char *const cases[] = {
        "-t 2 --set graph.groups=2", "-t 3 --set graph.groups=3", "-t 2 --set graph.groups=5",
        "-t 2 --set graph.groups=16", "-t 1 --set graph.groups=4 --set graph.blenders=2",
        "-t 2 --set graph.groups=3 --set graph.blenders=1",
        "-t 2 --set primary.trace=false --set primary.out=rays",
    };
    char a[300], b[300], args[1024];
    snprintf(a, sizeof a, "%s/tiler-1.png", dir);
    snprintf(args, sizeof args, "-q --size 200x136 -t 1 --set graph.groups=1 -p raytrace "
             "-o %s teapot", a);
    CHECK_MSG(run(args) == 0, "%s: %s", args, out);
    for (int c = 0; c < 7; c++) {
        snprintf(b, sizeof b, "%s/tiler-%d.png", dir, c + 2);
        snprintf(args, sizeof args, "-q --size 200x136 %s -p raytrace -o %s teapot", cases[c], b);
        CHECK_MSG(run(args) == 0, "%s: %s", args, out);
        CHECK_MSG(same_files(a, b), "%s: not the one-copy image", cases[c]);
    }
}

/* The thesis' Fig. 4.7 initial back end: the ordered graph's fragments as a queue set
 * with a subqueue per tile, so its Pixel Shader runs one packet per tile at a time
 * (gramps/gate.c). The same image as the plain queue gives, at 1 to 3 workers. */
static void test_fragments_per_tile_set(void)
{
    char a[300], b[300], args[1024];
    snprintf(a, sizeof a, "%s/fragments-plain.png", dir);
    snprintf(args, sizeof args, "-q --size 160x120 -t 1 -p raster-ordered -o %s teapot", a);
    CHECK_MSG(run(args) == 0, "%s: %s", args, out);
    for (int t = 1; t <= 3; t++) {
        snprintf(b, sizeof b, "%s/fragments-set-%d.png", dir, t);
        snprintf(args, sizeof args, "-q --size 160x120 -t %d -p raster-ordered --set "
                 "'fragments.subqueues=$tiles' -o %s teapot", t, b);
        CHECK_MSG(run(args) == 0, "%s: %s", args, out);
        CHECK_MSG(same_files(a, b), "fragments per tile at %d workers: another image", t);
    }
}

/* The tasks gramps-render's --stats file gives stage `name`, or -1. */
static long stage_tasks(const char *stats, const char *name)
{
    char key[128];
    snprintf(key, sizeof key, "{\"name\": \"%s\"", name);
    const char *p = strstr(stats, key);
    p = p ? strstr(p, "\"tasks\": ") : NULL;
    return p ? strtol(p + strlen("\"tasks\": "), NULL, 10) : -1;
}

/* Tasks over every copy of stage `stage` (its copies stage-0, stage-1, ...) in a --stats
 * file. */
static long copies_tasks(const char *stats_path, const char *stage)
{
    char *text = slurp(stats_path, NULL);
    long sum = 0;
    for (int k = 0; text && k < 16; k++) {
        char name[32];
        snprintf(name, sizeof name, "%s-%d", stage, k);
        long t = stage_tasks(text, name);
        if (t > 0) sum += t;
    }
    free(text);
    return sum;
}

static long shade_tasks(const char *stats_path) { return copies_tasks(stats_path, "shade"); }

/* rt.primary's and hybrid.visible's `background` (on in the built-in graphs) sum each
 * camera ray that missed themselves: the image is the one Shade and Blend make of the
 * misses, bit for bit, in colour and in an AOV (a miss adds nothing there), with bands
 * of background only (whose Blend instance never runs: it must encode the sums, not
 * clear them), with one worker or three, and with fewer Shade tasks; at 2 samples per
 * pixel it is off. */
static void test_misses_summed_where_found(void)
{
    static const char *const cases[] = {
        "-t 1", "-t 3 --set graph.groups=3 --set graph.blenders=8", "-t 2 --aov depth",
        "-t 2 --aov normal --size 77x61", "-t 2 --spp 2",
    };
    /* (hybrid-visibility's Z-Tile sums the background blocks itself: off too) */
    static const char *const graphs[][3] = {{"raytrace", "primary", ""},
                                            {"hybrid-visibility", "visible", "--set ztile.background=false"}};
    char a[300], b[300], sa[300], sb[300], args[1024];
    for (int g = 0; g < 2; g++)
        for (int c = 0; c < 5; c++) {
            snprintf(a, sizeof a, "%s/misses-off-%d.png", dir, c);
            snprintf(b, sizeof b, "%s/misses-on-%d.png", dir, c);
            snprintf(sa, sizeof sa, "%s/misses-off-%d.json", dir, c);
            snprintf(sb, sizeof sb, "%s/misses-on-%d.json", dir, c);
            snprintf(args, sizeof args, "-q --size 200x136 %s -p %s --set %s.background=false %s "
                     "--stats %s -o %s teapot", cases[c], graphs[g][0], graphs[g][1], graphs[g][2], sa, a);
            CHECK_MSG(run(args) == 0, "%s: %s", args, out);
            snprintf(args, sizeof args, "-q --size 200x136 %s -p %s --stats %s -o %s teapot",
                     cases[c], graphs[g][0], sb, b);
            CHECK_MSG(run(args) == 0, "%s: %s", args, out);
            CHECK_MSG(same_files(a, b), "-p %s %s: the misses summed in %s give another image",
                      graphs[g][0], cases[c], graphs[g][1]);
            long off = shade_tasks(sa), on = shade_tasks(sb);
            bool spp2 = strstr(cases[c], "--spp 2") != NULL;
            /* (pushed reflections coalesce into packets as the workers meet, so the task
             * counts of two runs differ by a few) */
            CHECK_MSG(off > 0 && (spp2 ? on > off * 9 / 10 : on < off / 2), "-p %s %s: %ld "
                      "Shade tasks with the misses summed in %s, %ld without", graphs[g][0],
                      cases[c], on, graphs[g][1], off);
        }
}

/* The hybrids' Z-Tile with `background` (on in the built-in graphs) adds the background
 * of the 8x8 blocks where nothing is visible to their sums itself and sends them to no
 * pixel stage: the image is the one the pixel stages make of those blocks' misses, at any
 * worker count, for AOVs, with smaller tiles and with several samples per pixel (where it
 * is off), and the pixel stages get fewer tasks (regions: test_region). */
static void test_background_blocks_summed_in_ztile(void)
{
    static const char *const cases[] = {
        "-t 1", "-t 3", "-t 2 --aov depth", "-t 2 --aov albedo --size 77x61", "-t 2 --spp 2",
        "-t 2 --bounces 2 --set graph.tile=32",
    };
    static const char *const graphs[][2] = {{"hybrid", "ps"}, {"hybrid-visibility", "visible"}};
    char a[300], b[300], sa[300], sb[300], args[1024];
    for (int g = 0; g < 2; g++)
        for (int c = 0; c < 6; c++) {
            if (g == 1 && strstr(cases[c], "albedo")) continue;
            snprintf(a, sizeof a, "%s/blocks-off-%d.png", dir, c);
            snprintf(b, sizeof b, "%s/blocks-on-%d.png", dir, c);
            snprintf(sa, sizeof sa, "%s/blocks-off-%d.json", dir, c);
            snprintf(sb, sizeof sb, "%s/blocks-on-%d.json", dir, c);
            snprintf(args, sizeof args, "-q --size 200x136 %s -p %s --set ztile.background=false --stats %s "
                     "-o %s teapot", cases[c], graphs[g][0], sa, a);
            CHECK_MSG(run(args) == 0, "%s: %s", args, out);
            snprintf(args, sizeof args, "-q --size 200x136 %s -p %s --stats %s -o %s teapot", cases[c],
                     graphs[g][0], sb, b);
            CHECK_MSG(run(args) == 0, "%s: %s", args, out);
            CHECK_MSG(same_files(a, b), "-p %s %s: the background blocks summed in Z-Tile give another "
                      "image", graphs[g][0], cases[c]);
            long off = copies_tasks(sa, graphs[g][1]), on = copies_tasks(sb, graphs[g][1]);
            bool spp2 = strstr(cases[c], "--spp 2") != NULL;
            CHECK_MSG(off > 0 && (spp2 ? on == off : on < off * 9 / 10), "-p %s %s: %ld %s tasks with the "
                      "background blocks summed in Z-Tile, %ld without", graphs[g][0], cases[c], on,
                      graphs[g][1], off);
        }
}

/* Blend bands thinner than a row of tiles (64 bands of 2 rows at 128x128) are merged
 * before the Tiler copies share them: by the bands alone every tile would start in an
 * even band, and copy 1 would get no work. */
static void test_thin_bands_still_shared(void)
{
    char stats[300], args[1024];
    snprintf(stats, sizeof stats, "%s/thin.json", dir);
    snprintf(args, sizeof args, "-q --size 128x128 -t 2 -p raytrace --set graph.groups=2 "
             "--set graph.blenders=64 --stats %s cornell", stats);
    CHECK_MSG(run(args) == 0, "%s: %s", args, out);
    char *text = slurp(stats, NULL);
    CHECK_MSG(text && stage_tasks(text, "primary-0") > 0 && stage_tasks(text, "primary-1") > 0,
              "a copy got no runs: %ld and %ld tasks", text ? stage_tasks(text, "primary-0") : -1,
              text ? stage_tasks(text, "primary-1") : -1);
    free(text);
}

static void test_set_changes_capacity(void)
{
    char json[300], args[1024];
    snprintf(json, sizeof json, "%s/set.json", dir);
    snprintf(args, sizeof args, "-q --size 64x64 -p raster-ordered --set fragments.capacity=17 "
             "--set graph.tile=32 --stats %s teapot", json);
    CHECK_MSG(run(args) == 0, "%s", out);
    long n = 0;
    char *text = slurp(json, &n);
    CHECK(text && strstr(text, "\"name\": \"fragments\", \"capacity\": 17"));
    CHECK(text && strstr(text, "\"name\": \"tiles\", \"capacity\": 8, \"subqueues\": 4"));
    free(text);
    CHECK(run("-q -p raster-ordered --set fragments.capacity=0 teapot") == 1 &&
          strstr(out, "command line") && strstr(out, "capacity"));
    CHECK(run("-q --set bins.capacity=0 teapot") == 1 && strstr(out, "capacity"));
    CHECK(run("-q --set nosuch.capacity=3 teapot") == 2 && strstr(out, "nosuch"));
    CHECK(run("-q --set capacity teapot") == 2 && strstr(out, "--set"));
}

static void test_list_stages(void)
{
    static const char *const stages[] = {"raster.ia", "raster.vs", "raster.reorder", "raster.rast",
                                         "raster.setup-bin", "raster.tile-rast", "raster.ps",
                                         "raster.om", "rt.tiler", "rt.sampler", "rt.camera",
                                         "rt.primary", "rt.intersect", "rt.shade", "rt.shadow",
                                         "rt.blend", "hybrid.visible", "hybrid.ps", "hybrid.trace",
                                         "hybrid.ps2"};
    CHECK(run("--list-stages") == 0);
    for (size_t i = 0; i < sizeof stages / sizeof *stages; i++) {
        char want[64];
        snprintf(want, sizeof want, "\n%s (", stages[i]);
        CHECK_MSG(strstr(out, want), "--list-stages lacks %s", stages[i]);
    }
    CHECK(strstr(out, "port  reflections    push     rt.rays"));
    CHECK(strstr(out, "rt.contributions: collection"));
}

/* A graph file with `line` appended to raytrace.graph must fail naming file:line. */
static void expect_graph_error(const char *line, const char *const *want)
{
    char path[300], args[600], src_text[8192];
    long n = 0;
    char *src = slurp("pipelines/graphs/raytrace.graph", &n);
    if (!src) { CHECK(0); return; }
    int lines = 0;
    for (long i = 0; i < n; i++) lines += src[i] == '\n';
    snprintf(src_text, sizeof src_text, "%s%s\n", src, line);
    free(src);
    snprintf(path, sizeof path, "%s/bad.graph", dir);
    FILE *f = fopen(path, "w");
    if (!f) { CHECK(0); return; }
    fputs(src_text, f);
    fclose(f);
    snprintf(args, sizeof args, "-q --size 32x32 --graph %s cornell", path);
    char where[400];
    int count = 0;
    for (const char *p = line; *p; p++) count += *p == '\n';
    snprintf(where, sizeof where, "bad.graph:%d", lines + 1 + count);
    CHECK_MSG(run(args) == 1, "%s: exit not 1: %s", line, out);
    CHECK_MSG(strstr(out, where), "%s: no '%s' in: %s", line, where, out);
    for (; *want; want++) CHECK_MSG(strstr(out, *want), "%s: no '%s' in: %s", line, *want, out);
}

static void test_graph_errors(void)
{
    expect_graph_error("[stage extra]\ntype = rt.nothing",
                       (const char *[]){"unknown stage type 'rt.nothing'", NULL});
    expect_graph_error("[stage shade]\nglossiness = 3",
                       (const char *[]){"no port or parameter 'glossiness'", NULL});
    expect_graph_error("[stage shadow-intersect]\nin = hits",
                       (const char *[]){"port 'in'", "rt.shadow-rays", "rt.rays", NULL});
    expect_graph_error("[stage blend]\nin = hits",
                       (const char *[]){"port 'in'", "queue 'hits'", "not replicated", NULL});
    /* QUEUE[*], every copy of a replicated queue: an unreplicated stage's last output only */
    expect_graph_error("[stage blend]\nin = hits[*]",
                       (const char *[]){"port 'in'", "every copy of queue 'hits'", "an input", NULL});
    expect_graph_error("[stage shade]\nout = hits[*]",
                       (const char *[]){"port 'out'", "the stage is replicated", NULL});
    expect_graph_error("[queue extra]\nformat = rt.sample-runs\n"
                       "[stage extra-tiler]\ntype = rt.tiler\nout = extra[*]",
                       (const char *[]){"every copy of queue 'extra'", "not replicated", NULL});
    expect_graph_error("[queue extra-hits]\nformat = rt.rays\n"
                       "[stage extra-shade]\ntype = rt.shade\nin = extra-hits\nreflections = rays[*]",
                       (const char *[]){"port 'reflections'", "last port", NULL});
    expect_graph_error("[graph]\nplugins = /nonexistent/ao.so",
                       (const char *[]){"/nonexistent/ao.so", NULL});
    CHECK(run("-q --graph /nonexistent.graph teapot") == 1 && strstr(out, "/nonexistent.graph"));
    /* the hybrid's depth layers: at most PL_MAX_COPIES_PER_RESOURCE Z-Raster copies, named */
    CHECK_MSG(run("-q --size 32x32 -p hybrid --set graph.groups=65 cornell") == 1 &&
              strstr(out, "zraster-64") && strstr(out, "no frame resource 'depth-layer'") &&
              strstr(out, "more than 64 copies"), "65 groups: %s", out);
    CHECK_MSG(run("-q --size 32x32 -p hybrid --set graph.groups=64 -o /dev/null cornell") == 0,
              "64 groups: %s", out);
    /* plrt_blend_key deals pixels to Blend instances in a power of two of bands */
    CHECK_MSG(run("-q --size 32x32 -p raytrace --set graph.blenders=12 cornell") == 1 &&
              strstr(out, "power of two"), "blenders = 12: %s", out);
    /* the tile cutters deal tiles by such bands too, and name themselves */
    CHECK_MSG(run("-q --size 32x32 -p raytrace --set tiler.bands=6 cornell") == 1 &&
              strstr(out, "tiler-0") && strstr(out, "bands = 6: not a power of two"),
              "tiler.bands = 6: %s", out);
    CHECK_MSG(run("-q --size 32x32 -p hybrid --set ztile.bands=6 cornell") == 1 &&
              strstr(out, "'ztile'") && strstr(out, "bands = 6: not a power of two"),
              "ztile.bands = 6: %s", out);
    /* rays that skip Intersect (Primary without `trace` wired to Shade) reach Shade with
     * no hit: a named error, not a crash; wired through Intersect, the same image */
    CHECK_MSG(run("-q --size 32x32 -p raytrace --set primary.trace=false cornell") == 1 &&
              strstr(out, "stage 'shade-0'") && strstr(out, "no hit"), "untraced: %s", out);
    CHECK_MSG(run("-q --size 32x32 -p raytrace --set primary.trace=false --set primary.out=rays -o /dev/null "
                  "cornell") == 0, "trace = false through Intersect: %s", out);
    /* a Tiler cutting runs for more samples per pixel than Primary samples (which once
     * ran past its tile's end): stopped before the run, naming both (pl_stage_agree) */
    CHECK_MSG(run("-q --size 32x32 -p raytrace --set tiler.spp=4 cornell") == 1 &&
              strstr(out, "stage 'primary-0'") && strstr(out, "'tiler-0' has 4"), "tiler.spp = 4: %s", out);
    /* the same for the hybrids' Visible and PS, which sample Z-Tile's runs; and runs
     * longer than the packets they are sampled into (both once wrote past their buffers):
     * the sampling stage stops at its packet's end */
    CHECK_MSG(run("-q --size 32x32 -p hybrid-visibility --set ztile.spp=4 cornell") == 1 &&
              strstr(out, "stage 'visible-0'") && strstr(out, "'ztile' has 4"), "ztile.spp = 4: %s", out);
    CHECK_MSG(run("-q --size 32x32 -p hybrid-visibility --set ztile.samples=64 --set graph.rays=32 cornell") == 1 &&
              strstr(out, "stage 'visible-0': assertion failed"), "hybrid runs > rays: %s", out);
    CHECK_MSG(run("-q --size 32x32 -p hybrid --set ztile.spp=4 cornell") == 1 &&
              strstr(out, "stage 'ps-0'") && strstr(out, "'ztile' has 4"), "ztile.spp = 4: %s", out);
    CHECK_MSG(run("-q --size 32x32 -p hybrid --set ztile.samples=64 --set graph.rays=32 cornell") == 1 &&
              strstr(out, "stage 'ps-0': assertion failed"), "hybrid runs > rays: %s", out);
    CHECK_MSG(run("-q --size 32x32 -p raytrace --set tiler.samples=64 --set graph.rays=32 cornell") == 1 &&
              strstr(out, "stage 'primary-0': assertion failed"), "runs > rays: %s", out);
    /* and rt.sampler's, in the ray tracer with Sampler and Camera for Primary */
    CHECK_MSG(run("-q --size 32x32 --graph examples/graphs/raytrace-sampler.graph --set "
                  "tiler.samples=64 --set graph.rays=32 cornell") == 1 &&
              strstr(out, "stage 'sampler-0': assertion failed"), "sampler runs > rays: %s", out);
}

/* A bad `tile` in [graph] (from which $tiles and $default_bands are worked out before
 * any stage reads it) is refused by the stage that reads it, naming the value: a
 * negative or absurd one once overflowed that sum (UBSan), a non-positive one left
 * $default_bands unset and the error named that variable instead. */
static void test_bad_graph_tile_named(void)
{
    static const char *graphs[] = {"raster", "raster-ordered", "raster-parallel", "raytrace", "hybrid"};
    static const char *tiles[] = {"-5", "0", "abc", "99999999999999999999"};
    for (int g = 0; g < 5; g++)
        for (int t = 0; t < 4; t++) {
            char args[256];
            snprintf(args, sizeof args, "-q --size 32x32 -p %s --set graph.tile=%s cornell",
                     graphs[g], tiles[t]);
            CHECK_MSG(run(args) == 1 && strstr(out, "tile = ") && strstr(out, tiles[t]) &&
                      !strstr(out, "variable"), "%s: %s", args, out);
        }
}

/* The stages of a graph pass tiles (Bin and Tile-Shade, Rast and the OM, Setup/Bin and
 * the per-tile Rast, Z-Raster and Z-Tile), triangles set up for a sample pattern,
 * numbered batches and runs of samples to one another: one given another `tile`,
 * `msaa`, `batch` or `spp` stops the graph naming both stages and both values
 * (Setup/Bin and the per-tile Rast once drew an empty image with exit 0, a 4x Tile-Shade
 * behind a 1x VS lost its smallest triangles, an rt.tiler at 1 sample per pixel before
 * an rt.primary at 4 drew stripes, others failed an assertion). */
static void test_layouts_must_agree(void)
{
    static const char *const cases[][4] = {
        {"raster", "tile-shade.tile=32", "bin-0", "`tile` is 32"},
        {"raster", "bin.tile=32", "bin-0", "has 32"},
        {"raster-ordered", "om.tile=32", "rast", "`tile` is 32"},
        {"raster-parallel", "rast.tile=32", "setup-bin", "`tile` is 32"},
        {"raster-parallel", "setup-bin.tile=32", "setup-bin", "has 32"},
        {"hybrid", "ztile.tile=32", "zraster-0", "`tile` is 32"},
        {"raster", "tile-shade.msaa=4", "vs-0", "`msaa` is 4"},
        {"raster-ordered", "ps.msaa=4", "rast", "`msaa` is 4"},
        {"hybrid", "ztile.msaa=4", "zraster-0", "`msaa` is 4"},
        {"raster-ordered", "ia.batch=32", "reorder", "`batch` is 32"},
        {"raytrace --spp 4", "tiler.spp=1", "tiler-0", "has 1"},
        {"raytrace --spp 4", "primary.spp=2", "tiler-0", "`spp` is 2"},
        {"hybrid --spp 2", "ps.spp=1", "ztile", "`spp` is 1"},
        {"hybrid-visibility --spp 2", "visible.spp=1", "ztile", "`spp` is 1"},
        {"hybrid --msaa 4", "ps.msaa=1", "zraster-0", "`msaa` is 1"},
        {"hybrid", "om.tile=32", "zraster-0", "`tile` is 32"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char args[256];
        snprintf(args, sizeof args, "-q --size 96x64 -p %s --set %s teapot -o /dev/null", cases[k][0], cases[k][1]);
        CHECK_MSG(run(args) == 1 && strstr(out, "stage '") && strstr(out, cases[k][2]) && strstr(out, cases[k][3]) &&
                      strstr(out, "same `"),
                  "%s: %s", args, out);
    }
}

/* Reorder passes its input's batches on whole: an output queue whose packets hold fewer
 * triangles is refused before the run (it was written past, and the graph's teardown
 * crashed), in both graphs that have a Reorder. */
static void test_reorder_output_room(void)
{
    static const char *const graphs[] = {"raster-ordered", "raster-parallel"};
    for (int g = 0; g < 2; g++) {
        char args[256];
        snprintf(args, sizeof args, "-q --size 64x48 -p %s --set ordered-primitives.elements=1 teapot -o /dev/null",
                 graphs[g]);
        CHECK_MSG(run(args) == 1 && strstr(out, "stage 'reorder'") && strstr(out, "hold 1 triangles, its input's 64") &&
                      !strstr(out, "crashed"),
                  "%s: %s", args, out);
    }
}

/* The hybrid's depth-only VS makes no attributes, so its output has a format of its own:
 * wiring a plain VS into Z-Raster, or the depth VS into the shading graph's Bin, is an
 * error naming the formats, never an image shaded from missing attributes. */
static void test_depth_primitives_not_shaded(void)
{
    static const char *const swaps[][2] = {
        {"type = raster.vs-depth", "type = raster.vs"},
        {"format = raster.depth-primitives", "format = raster.primitives"}};
    for (int k = 0; k < 2; k++) {
        long n = 0;
        char *src = slurp("pipelines/graphs/hybrid.graph", &n);
        char *at = src ? strstr(src, swaps[k][0]) : NULL;
        if (!at) { CHECK(0); free(src); return; }
        char path[300], args[600];
        snprintf(path, sizeof path, "%s/depth.graph", dir);
        FILE *f = fopen(path, "w");
        if (!f) { CHECK(0); free(src); return; }
        fprintf(f, "%.*s%s%s", (int)(at - src), src, swaps[k][1], at + strlen(swaps[k][0]));
        fclose(f);
        free(src);
        snprintf(args, sizeof args, "-q --size 32x32 --graph %s cornell", path);
        CHECK_MSG(run(args) == 1 && strstr(out, "raster.depth-primitives") && strstr(out, "raster.primitives"),
                  "%s: %s", swaps[k][1], out);
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    if (!mkdtemp(dir)) return 1;
    RUN(test_builtin_equals_graph_file);
    RUN(test_equal_depths_in_draw_order);
    RUN(test_tiler_copies_cover_once);
    RUN(test_misses_summed_where_found);
    RUN(test_background_blocks_summed_in_ztile);
    RUN(test_thin_bands_still_shared);
    RUN(test_set_changes_capacity);
    RUN(test_fragments_per_tile_set);
    RUN(test_list_stages);
    RUN(test_graph_errors);
    RUN(test_bad_graph_tile_named);
    RUN(test_layouts_must_agree);
    RUN(test_reorder_output_room);
    RUN(test_depth_primitives_not_shaded);
    scratch_dir_remove(dir);
    return check_finish();
}
