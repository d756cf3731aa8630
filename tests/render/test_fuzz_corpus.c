/* Replays the fuzzing seed corpora (tests/fuzz/corpus/<kind>/, each as its kind) and
 * every saved crash (tests/fuzz/regress/, as each kind) through what the fuzz targets do:
 * load, flatten and render with both pipelines (tests/fuzz/fuzz_render.h); for graph
 * files, parse, instantiate and run them (tests/fuzz/fuzz_graph.h); for hostile plugin
 * stages, corrupt packets between two built-in stages (tests/fuzz/fuzz_plugin.h). Each
 * input must render or be refused with a message; seeds must render. */
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/fuzz/fuzz_graph.h"
#include "tests/fuzz/fuzz_plugin.h"
#include "tests/fuzz/fuzz_render.h"

#include <dirent.h>
#include <unistd.h>

static const char *kinds[] = {"scene", "obj", "ply", "gltf"};

/* Copies src to a temporary named with suffix, loads and renders it: 0 rendered, -1
 * refused with a message, -2 refused silently (a bug). */
static int replay(const char *src, const char *suffix)
{
    FILE *in = fopen(src, "rb");
    if (!in) return -2;
    char path[64];
    snprintf(path, sizeof path, "/tmp/gramps-replay-%d.%s", (int)getpid(), suffix);
    FILE *copy = fopen(path, "wb");
    char buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, in)) > 0) fwrite(buf, 1, got, copy);
    fclose(copy);
    fclose(in);
    char err[SC_ERR_MAX] = "";
    int rc = fuzz_load_and_render(path, err);
    unlink(path);
    return rc == 0 ? 0 : err[0] ? -1 : -2;
}

/* Every file of dir as each of the kinds [k0, k1); must_render: the seeds. */
static int replay_dir(const char *dir, int k0, int k1, bool must_render)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char src[512];
        snprintf(src, sizeof src, "%s/%s", dir, e->d_name);
        for (int k = k0; k < k1; k++) {
            int rc = replay(src, kinds[k]);
            CHECK_MSG(rc != -2, "%s as .%s: refused without a message", src, kinds[k]);
            CHECK_MSG(!must_render || rc == 0, "%s: the seed does not render", src);
        }
        n++;
    }
    if (d) closedir(d);
    return n;
}

static void test_seeds_render(void)
{
    int n = 0;
    for (int k = 0; k < 4; k++) {
        char dir[128];
        snprintf(dir, sizeof dir, "tests/fuzz/corpus/%s", kinds[k]);
        n += replay_dir(dir, k, k + 1, true);
    }
    CHECK(n >= 7);
}

/* What a fuzz target does with one input's bytes: 0 ran, -1 refused or failed with a
 * message in err. */
typedef int (*fuzz_run_fn)(const char *bytes, size_t size, char err[CP_ERR_MAX]);

static int run_graph(const char *bytes, size_t size, char err[CP_ERR_MAX])
{
    return fuzz_graph_run(bytes, size, err);
}

static int run_plugin(const char *bytes, size_t size, char err[CP_ERR_MAX])
{
    return fuzz_plugin_run((const uint8_t *)bytes, size, err);
}

/* Every file of dir through target, as `what`: each must run or be refused with a message
 * (a crash ends the test program); must_run: the seeds, which must run. */
static int replay_with(const char *dir, fuzz_run_fn target, const char *what, bool must_run)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char src[512], err[CP_ERR_MAX] = "";
        long size = 0;
        snprintf(src, sizeof src, "%s/%s", dir, e->d_name);
        char *bytes = slurp(src, &size);
        int rc = bytes ? target(bytes, (size_t)size, err) : -1;
        CHECK_MSG(rc == 0 || err[0], "%s as %s: refused without a message", src, what);
        CHECK_MSG(!must_run || rc == 0, "%s: the seed does not run as %s: %s", src, what, err);
        free(bytes);
        n++;
    }
    if (d) closedir(d);
    return n;
}

static void test_graph_seeds_run(void)
{
    CHECK(replay_with("tests/fuzz/corpus/graph", run_graph, "a graph", true) >= 4);
}

/* The plugin seeds pass every packet unchanged: one per edge of each rendering graph. */
static void test_plugin_seeds_run(void)
{
    CHECK(replay_with("tests/fuzz/corpus/plugin", run_plugin, "plugin mutations", true) >= 30);
}

static void test_regressions_refused_or_render(void)
{
    replay_dir("tests/fuzz/regress", 0, 4, false);
    replay_with("tests/fuzz/regress", run_graph, "a graph", false);
    replay_with("tests/fuzz/regress", run_plugin, "plugin mutations", false);
}

int main(void)
{
    RUN(test_seeds_render);
    RUN(test_graph_seeds_run);
    RUN(test_plugin_seeds_run);
    RUN(test_regressions_refused_or_render);
    return check_finish();
}
