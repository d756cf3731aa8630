/* Plugin stages as a user runs them (issue 12 items 3 and 4): the fog and ambient
 * occlusion examples render through their graph files alone, change the image the way
 * they claim (fog moves colours toward the fog colour, AO only darkens) and give the same
 * bits at 1, 2 and 3 workers; gramps-run runs the thesis' set-reduce-keyed at 1, 2 and 4
 * workers and prints the right sums; a plugin of another API version, a missing plugin
 * and an unknown stage type exit 1 with a message naming the file (and line). Finds the
 * tools and plugins beside this test's build directory, so sanitizer builds use theirs. */
#include "compose/compose.h"
#include "tests/check.h"
#include "tests/json_check.h"
#include "tests/scratch_dir.h"

#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <stb/stb_image.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>

#define SIZE "96x96"

static char bin[512], test_plugins[512], dir[] = "/tmp/gramps-plugins-XXXXXX";
static char out[16384];

/* Runs `env BIN/prog args`, output in `out`; the exit status. */
static int run(const char *env, const char *prog, const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s/%s %s 2>&1", env, bin, prog, args);
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = 0;
    int st = p ? pclose(p) : -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Renders into dir/NAME.png with gramps-render ARGS; the RGBA pixels (96x96) or NULL. */
static unsigned char *render(const char *name, const char *args)
{
    char png[600], all[2048];
    snprintf(png, sizeof png, "%s/%s.png", dir, name);
    snprintf(all, sizeof all, "-q --size " SIZE " -o %s %s", png, args);
    int rc = run("", "gramps-render", all);
    CHECK_MSG(rc == 0, "%s: exit %d: %s", all, rc, out);
    int w, h, n;
    unsigned char *px = rc == 0 ? stbi_load(png, &w, &h, &n, 4) : NULL;
    CHECK(!px || (w == 96 && h == 96));
    return px;
}

static bool same(const unsigned char *a, const unsigned char *b)
{
    return a && b && !memcmp(a, b, 96 * 96 * 4);
}

/* The same image at 2 and 3 workers as at 1; returns the 1-worker image. */
static unsigned char *render_123(const char *name, const char *args)
{
    char n[64], a[1024];
    unsigned char *img[3];
    for (int t = 0; t < 3; t++) {
        snprintf(n, sizeof n, "%s-%d", name, t + 1);
        snprintf(a, sizeof a, "-t %d %s", t + 1, args);
        img[t] = render(n, a);
    }
    CHECK_MSG(same(img[0], img[1]) && same(img[0], img[2]), "%s differs between 1, 2 and 3 "
              "workers", name);
    stbi_image_free(img[1]);
    stbi_image_free(img[2]);
    return img[0];
}

/* Fog in pure red: every channel of every pixel lies between the plain image's value
 * and the fog colour's (the blend is a convex combination), and fog changed pixels. */
static void test_fog(void)
{
    unsigned char *fog = render_123("fog", "--graph examples/graphs/raster-fog.graph "
                                    "--set fog.color=1,0,0 teapot");
    unsigned char *plain = render("raster", "teapot");
    static const int red[3] = {255, 0, 0};
    int changed = 0, outside = 0;
    for (int i = 0; fog && plain && i < 96 * 96; i++) {
        changed += memcmp(&fog[i * 4], &plain[i * 4], 3) != 0;
        for (int ch = 0; ch < 3; ch++) {
            int lo = plain[i * 4 + ch] < red[ch] ? plain[i * 4 + ch] : red[ch];
            int hi = plain[i * 4 + ch] < red[ch] ? red[ch] : plain[i * 4 + ch];
            outside += fog[i * 4 + ch] < lo || fog[i * 4 + ch] > hi;
        }
    }
    CHECK_MSG(changed > 100, "fog changed %d pixels", changed);
    CHECK_MSG(outside == 0, "%d channels moved away from the fog colour", outside);
    stbi_image_free(fog);
    stbi_image_free(plain);
}

/* The "ao" count in the statistics' rays object, or -1. */
static long long ao_rays(const char *json)
{
    FILE *f = fopen(json, "r");
    char text[65536] = {0};
    if (f) { CHECK(fread(text, 1, sizeof text - 1, f) > 0); fclose(f); }
    CHECK_MSG(json_valid(text), "statistics do not parse");
    const char *rays = strstr(text, "\"rays\": {"), *ao = rays ? strstr(rays, "\"ao\": ") : NULL;
    long long n = -1;
    return ao && sscanf(ao, "\"ao\": %lld", &n) == 1 ? n : -1;
}

/* AO takes away ambient light and adds none: no channel of any pixel is brighter than
 * in raytrace.graph's image (Shade's ambient term, which AO replaces, is the same float
 * times a fraction <= 1, and every other contribution is the same), some are darker,
 * and the frame counted samples-per-hit occlusion rays. */
static void test_ao(void)
{
    unsigned char *ao = render_123("ao", "--graph examples/graphs/raytrace-ao.graph cornell");
    unsigned char *plain = render("raytrace", "-p raytrace cornell");
    int darker = 0, brighter = 0;
    for (int i = 0; ao && plain && i < 96 * 96 * 4; i++) {
        darker += ao[i] < plain[i];
        brighter += ao[i] > plain[i];
    }
    CHECK_MSG(darker > 100 && brighter == 0, "AO: %d channels darker, %d brighter", darker, brighter);
    char json[600], args[1024];
    snprintf(json, sizeof json, "%s/ao.json", dir);
    snprintf(args, sizeof args, "--graph examples/graphs/raytrace-ao.graph --set ao.samples=5 "
             "--stats %s cornell", json);
    stbi_image_free(render("ao-stats", args));
    long long n = ao_rays(json);
    CHECK_MSG(n > 0 && n % 5 == 0 && n <= 5 * 96 * 96, "rays.ao = %lld", n);
    stbi_image_free(ao);
    stbi_image_free(plain);
}

/* The sums gramps-run printed equal the closed form for every lane. */
static bool srk_sums_right(unsigned count, unsigned keys)
{
    int lanes = 0;
    for (const char *l = strstr(out, "\nlane "); l; l = strstr(l + 1, "\nlane ")) {
        unsigned lane;
        unsigned long long key, n, sum, want_n = 0, want_sum = 0;
        if (sscanf(l, "\nlane %u key %llu: %llu values, sum %llu", &lane, &key, &n, &sum) != 4)
            return false;
        for (unsigned long long v = lane; v < count; v += keys) { want_n++; want_sum += v; }
        CHECK_MSG(n == want_n && sum == want_sum, "lane %u: %llu values sum %llu, expected "
                  "%llu sum %llu", lane, n, sum, want_n, want_sum);
        lanes += lane == (unsigned)lanes;
    }
    unsigned long long total = (unsigned long long)count * (count - 1) / 2, printed = 0;
    const char *t = strstr(out, "\ntotal: ");
    return lanes == (int)keys && t && sscanf(t, "\ntotal: %*u values, sum %llu", &printed) == 1 &&
           printed == total;
}

static void test_set_reduce_keyed(void)
{
    const int workers[] = {1, 2, 4};
    char args[1024];
    for (int i = 0; i < 3; i++) {
        snprintf(args, sizeof args, "examples/graphs/set-reduce-keyed.graph -t %d", workers[i]);
        CHECK_MSG(run("", "gramps-run", args) == 0 && srk_sums_right(25000, 6), "-t %d: %s",
                  workers[i], out);
    }
    snprintf(args, sizeof args, "examples/graphs/set-reduce-keyed.graph -t 2 --set graph.keys=37 "
             "--set graph.count=5000 --stats %s/srk.json", dir);
    CHECK_MSG(run("", "gramps-run", args) == 0 && srk_sums_right(5000, 37), "%s", out);
    CHECK(strstr(out, "queue values") && strstr(out, "stage reduce"));
    snprintf(args, sizeof args, "%s/srk.json", dir);
    FILE *f = fopen(args, "r");
    char text[65536] = {0};
    if (f) { CHECK(fread(text, 1, sizeof text - 1, f) > 0); fclose(f); }
    CHECK_MSG(json_valid(text) && strstr(text, "\"reduce\""), "--stats: %.300s", text);
}

/* A graph file in dir with `text`; its path in path. */
static void write_graph(const char *name, const char *text, char path[600])
{
    snprintf(path, 600, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f) { fputs(text, f); fclose(f); }
}

static void test_refused_plugins(void)
{
    char args[1024], want[128], graph[600];
    snprintf(args, sizeof args, "--plugin %s/old_api.so --list-stages", test_plugins);
    CHECK_MSG(run("", "gramps-render", args) == 1 && strstr(out, "old_api.so"), "%s", out);
    snprintf(want, sizeof want, "version %d; this program has version %d", CP_API_VERSION - 1,
             CP_API_VERSION);
    CHECK_MSG(strstr(out, want), "%s", out);
    /* a bare name is looked up in GRAMPS_PLUGIN_PATH */
    snprintf(args, sizeof args, "GRAMPS_PLUGIN_PATH=/nonexistent:%s", test_plugins);
    CHECK_MSG(run(args, "gramps-run", "--plugin old_api.so --list-stages") == 1 &&
              strstr(out, want), "%s", out);
    write_graph("missing.graph", "[graph]\nname = m\nplugins = no-such-plugin.so\n", graph);
    snprintf(args, sizeof args, "-q --graph %s teapot", graph);
    CHECK_MSG(run("", "gramps-render", args) == 1 && strstr(out, "missing.graph:3") &&
              strstr(out, "no-such-plugin.so"), "%s", out);
    CHECK_MSG(run("", "gramps-run", graph) == 1 && strstr(out, "missing.graph:3"), "%s", out);
    CHECK(run("", "gramps-render", "-q --plugin /nonexistent/fog.so teapot") == 1 &&
          strstr(out, "/nonexistent/fog.so"));
    /* a registration that fails without a message says so (it printed an uninitialised
     * buffer); a negative port count is refused naming the type (it was accepted, then
     * reported as "out of memory") */
    snprintf(args, sizeof args, "--plugin %s/silent_fail.so --list-stages", test_plugins);
    CHECK_MSG(run("", "gramps-render", args) == 1 && strstr(out, "silent_fail.so") &&
              strstr(out, "register_stages failed without a message"), "%s", out);
    snprintf(args, sizeof args, "--plugin %s/bad_counts.so --list-stages", test_plugins);
    CHECK_MSG(run("", "gramps-render", args) == 1 && strstr(out, "bad_counts.so") &&
              strstr(out, "'bad.counts': nports -1"), "%s", out);
}

/* The graph `text` (written as `name`) rendered at size: the run fails with a message
 * naming `stage` and holding `want`. */
static void check_refused(const char *name, const char *text, const char *size, const char *stage,
                          const char *want)
{
    char graph[600], args[1024];
    write_graph(name, text, graph);
    snprintf(args, sizeof args, "-q --size %s --graph %s -o %s/bad.png teapot", size, graph, dir);
    CHECK_MSG(run("", "gramps-render", args) == 1 && strstr(out, stage) && strstr(out, want), "%s: %s",
              name, out);
}

/* Plugin stages that send built-in stages packets no built-in stage makes: a Blend
 * contribution outside the image, a fragment outside the OM's tile, a binned triangle with
 * no area, a primitives record with a cut flag that means nothing. Each run fails naming
 * the reading stage and the element (instead of writing outside its memory). */
static void test_bad_packets_refused(void)
{
    char text[5200], plugins[PATH_MAX];
    if (!realpath(test_plugins, plugins)) snprintf(plugins, sizeof plugins, "%s", test_plugins);
    snprintf(text, sizeof text, "[graph]\nname = bad\nplugins = %s/bad_contrib.so\n"
             "[queue contributions]\nformat = rt.contributions\nelements = 128\ncapacity = 4\n"
             "subqueues = 1\n[stage bad]\ntype = test.bad-contrib\nout = contributions\n"
             "[stage blend]\ntype = rt.blend\nin = contributions\n", plugins);
    check_refused("bad_contrib.graph", text, "64x64", "stage 'blend'", "contribution to pixel 4294967280");
    snprintf(text, sizeof text, "[graph]\nname = bad\ntile = 64\nplugins = %s/bad_frags.so\n"
             "[queue frags]\nformat = raster.fragments\ncapacity = 4\nsubqueues = $tiles\n"
             "[stage bad]\ntype = test.bad-frags\nout = frags\n"
             "[stage om]\ntype = raster.om\ntile = 64\nin = frags\n", plugins);
    check_refused("bad_frags.graph", text, "128x128", "stage 'om", "fragment 0 at (60000, 3)");
    snprintf(text, sizeof text, "[graph]\nname = bad\ntile = 64\nplugins = %s/bad_prims.so\n"
             "[queue bins]\nformat = raster.binned\ncapacity = 4\nsubqueues = $tiles\n"
             "[stage bad]\ntype = test.bad-binned\nout = bins\n"
             "[stage ts]\ntype = raster.tile-shade\ntile = 64\nin = bins\n", plugins);
    check_refused("bad_binned.graph", text, "128x128", "stage 'ts", "binned triangle 2 ");
    snprintf(text, sizeof text, "[graph]\nname = bad\ntile = 64\nbatch = 64\nplugins = %s/bad_prims.so\n"
             "[queue prims]\nformat = raster.primitives\nelements = 64\ncapacity = 4\n"
             "[queue bins]\nformat = raster.binned\ncapacity = 4\nsubqueues = $tiles\n"
             "[stage bad]\ntype = test.bad-prims\nout = prims\n"
             "[stage bin]\ntype = raster.bin\ntile = 64\nin = prims\nout = bins\n"
             "[stage ts]\ntype = raster.tile-shade\ntile = 64\nin = bins\n", plugins);
    check_refused("bad_prims.graph", text, "128x128", "stage 'bin", "record 1: cut flag 2");
}

static void test_unknown_stage_type(void)
{
    char graph[600], args[1024];
    write_graph("unknown.graph", "[graph]\nplugins = set_reduce_keyed.so\n\n[queue q]\n"
                "format = srk.sums\n\n[stage s]\ntype = srk.nope\nin = q\n", graph);
    CHECK_MSG(run("", "gramps-run", graph) == 1 && strstr(out, "unknown.graph:8") &&
              strstr(out, "srk.nope"), "%s", out);
    snprintf(args, sizeof args, "-q --graph %s teapot", graph);
    CHECK_MSG(run("", "gramps-render", args) == 1 && strstr(out, "unknown.graph:8"), "%s", out);
}

static void test_gramps_run_flags(void)
{
    CHECK(run("", "gramps-run", "") == 2);
    CHECK(run("", "gramps-run", "--frobnicate x.graph") == 2 && strstr(out, "--frobnicate"));
    CHECK(run("", "gramps-run", "-t 0 examples/graphs/set-reduce-keyed.graph") == 2 && strstr(out, "-t"));
    CHECK(run("", "gramps-run", "examples/graphs/set-reduce-keyed.graph --set nope.k=1") == 2 &&
          strstr(out, "nope"));
    CHECK(run("", "gramps-run", "--help") == 0 && strstr(out, "usage"));
}

int main(int argc, char **argv)
{
    (void)argc;
    char self[512];
    snprintf(self, sizeof self, "%s", argv[0]);
    const char *here = dirname(self);             /* $(BUILD)/tests/render */
    snprintf(bin, sizeof bin, "%s/../../bin", here);
    snprintf(test_plugins, sizeof test_plugins, "%s/../plugins", here);
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    RUN(test_fog);
    RUN(test_ao);
    RUN(test_set_reduce_keyed);
    RUN(test_refused_plugins);
    RUN(test_unknown_stage_type);
    RUN(test_bad_packets_refused);
    RUN(test_gramps_run_flags);
    CHECK(scratch_dir_remove(dir));
    return check_finish();
}
