/* The installed copy as an out-of-tree user gets it: `make install-files` (the copying
 * half of `make install`, so no rebuild starts) into a temporary PREFIX from this test's
 * own build dir; every installed header compiles on its own with only pkg-config's flags;
 * examples/out-of-tree builds against the installed copy with its Makefile and
 * pkg-config, renders, and its PNG is gramps-render's plain raster image of the same size
 * with the colour of every covered pixel inverted (the example's stage ran, between the
 * PS and the OM). Sanitizer builds build the example with the same -fsanitize flags,
 * since their librender.a needs the sanitizer's runtime. The example plugins build
 * against the installed headers alone and load into this build's programs. */
#include "tests/check.h"
#include "tests/scratch_dir.h"

#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stb/stb_image.h>               /* stbi_load: compiled into librender */
#include <stdbool.h>
#include <unistd.h>

#ifndef TEST_SANFLAGS
#define TEST_SANFLAGS ""
#endif
#ifndef TEST_CC
#define TEST_CC "cc"
#endif

static char build[PATH_MAX], dir[] = "/tmp/gramps-install-XXXXXX", prefix[PATH_MAX + 16];

/* Runs a shell command (output into dir/log, shown on failure); its exit status. A make
 * run by `make test` must not inherit the outer make's jobserver, which it cannot use. */
static int sh(const char *fmt, ...)
{
    char cmd[4096], full[4096 + PATH_MAX + 32], show[PATH_MAX + 32];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof cmd) return -1;
    snprintf(full, sizeof full, "(%s) >%s/log 2>&1", cmd, dir);
    int rc = system(full);
    if (rc != 0) {
        fprintf(stderr, "  command failed (%d): %s\n", rc, cmd);
        snprintf(show, sizeof show, "sed 's/^/    /' %s/log >&2", dir);
        if (system(show) != 0) fprintf(stderr, "    (no log)\n");
    }
    return rc;
}

static bool exists(const char *rel)
{
    char path[2 * PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", prefix, rel);
    return access(path, R_OK) == 0;
}

static void test_install_tree(void)
{
    CHECK(sh("env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s --no-print-directory "
             "install-files BUILD=%s PREFIX=%s", build, prefix) == 0);
    static const char *const files[] = {
        "lib/libgramps.a", "lib/librender.a", "lib/pkgconfig/gramps.pc",
        "lib/pkgconfig/gramps-render.pc", "share/gramps/graphs/raster.graph",
        "share/gramps/graphs/raytrace.graph", "include/gramps/gramps.h",
        "include/gramps/compose/compose.h", "include/gramps/pipelines/stages.h",
        "include/gramps/pipelines/frame.h", "include/gramps/shaders/color.h", "include/gramps/scenes/camera.h",
        "include/gramps/api.h", "include/gramps/pipelines/raster/raster.h",
        "include/gramps/pipelines/raytrace/raytrace.h", "include/gramps/pipelines/raster/packets.h",
        "include/gramps/pipelines/raytrace/packets.h", "include/gramps/scenes/scene.h",
        "include/gramps/raytracer/trace.h", "include/gramps/output/image_out.h",
        "include/gramps/output/png_encode.h", "bin/gramps-render", "bin/gramps-run",
        "bin/gramps-footprint", "lib/gramps/plugins/fog.so", "lib/gramps/plugins/ao.so",
        "share/gramps/examples/graphs/raster-fog.graph"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        CHECK_MSG(exists(files[i]), "%s not installed", files[i]);
    /* internals: the BVH's layout and SIMD kernels, the stages' shared helpers, the
     * programs' own code */
    static const char *const internal[] = {
        "include/gramps/raytracer/bvh.h", "include/gramps/raytracer/simd.h",
        "include/gramps/pipelines/raster/hiz.h", "include/gramps/pipelines/raytrace/sums.h",
        "include/gramps/output/safe_file.h", "include/gramps/tools", "lib/libtools.a"};
    for (size_t i = 0; i < sizeof internal / sizeof *internal; i++)
        CHECK_MSG(!exists(internal[i]), "%s installed", internal[i]);
}

/* nftw callback: compiles a file that includes one installed header and nothing else. */
static int headers_seen;
static int compile_alone(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st, (void)ftw;
    size_t len = strlen(path);
    if (type != FTW_F || len < 2 || strcmp(path + len - 2, ".h")) return 0;
    const char *rel = path + strlen(prefix) + strlen("/include/gramps/");
    headers_seen++;
    CHECK_MSG(sh("echo '#include \"%s\"' > %s/one.c && %s -std=c11 -Wall -Wextra -Werror "
                 "-fsyntax-only $(pkg-config --cflags gramps-render) %s/one.c",
                 rel, dir, TEST_CC, dir) == 0, "%s does not compile alone", rel);
    return 0;
}

static void test_headers_standalone(void)
{
    char root[PATH_MAX + 32];
    snprintf(root, sizeof root, "%s/include/gramps", prefix);
    headers_seen = 0;
    CHECK(nftw(root, compile_alone, 16, FTW_PHYS) == 0);
    CHECK(headers_seen >= 18);                     /* the API headers and what they include */
}

/* Every pixel of the example's image is the plain one, or (where the teapot is) the
 * plain one with R, G and B inverted; both kinds occur. */
static void compare_images(const char *plain_png, const char *inverted_png)
{
    int w0, h0, w1, h1, n;
    unsigned char *a = stbi_load(plain_png, &w0, &h0, &n, 4);
    unsigned char *b = stbi_load(inverted_png, &w1, &h1, &n, 4);
    CHECK(a && b && w0 == 64 && h0 == 64 && w1 == 64 && h1 == 64);
    int same = 0, inverted = 0, other = 0;
    for (int i = 0; a && b && i < 64 * 64 * 4; i += 4) {
        bool eq = !memcmp(a + i, b + i, 4);
        bool inv = a[i] == 255 - b[i] && a[i + 1] == 255 - b[i + 1] &&
                   a[i + 2] == 255 - b[i + 2] && a[i + 3] == b[i + 3];
        same += eq, inverted += inv && !eq, other += !eq && !inv;
    }
    CHECK_MSG(other == 0 && inverted > 100 && same > 100,
              "%d pixels unchanged, %d inverted, %d neither", same, inverted, other);
    stbi_image_free(a);
    stbi_image_free(b);
}

static void test_example_against_installed_copy(void)
{
    CHECK(sh("mkdir -p %s/src && cp examples/out-of-tree/Makefile "
             "examples/out-of-tree/render_with_stage.c %s/src/", dir, dir) == 0);
    CHECK(sh("make -s -C %s/src CC='%s' CFLAGS='-O2 -Wall -Wextra -Werror %s'",
             dir, TEST_CC, TEST_SANFLAGS) == 0);
    CHECK(sh("%s/src/render_with_stage %s/inverted.png 64", dir, dir) == 0);
    CHECK(sh("%s/bin/gramps-render -q -p raster --size 64x64 -o %s/plain.png teapot",
             build, dir) == 0);
    char plain[PATH_MAX], inverted[PATH_MAX];
    snprintf(plain, sizeof plain, "%s/plain.png", dir);
    snprintf(inverted, sizeof inverted, "%s/inverted.png", dir);
    compare_images(plain, inverted);
}

/* The example plugins build against the installed headers alone (no library: the program
 * that loads them provides the symbols), load into this build's programs from
 * GRAMPS_PLUGIN_PATH (searched before the programs' own plugin folder) and give the
 * images of the plugins built in the tree. */
static void test_plugins_against_installed_copy(void)
{
    static const char *const plugins[] = {"fog", "ao", "set_reduce_keyed"};
    CHECK(sh("mkdir -p %s/plugins", dir) == 0);
    for (int i = 0; i < 3; i++)
        CHECK_MSG(sh("%s -std=c11 -O2 -Wall -Wextra -Werror %s -shared -fPIC "
                     "$(pkg-config --cflags gramps-render) examples/plugins/%s.c -o %s/plugins/%s.so",
                     TEST_CC, TEST_SANFLAGS, plugins[i], dir, plugins[i]) == 0,
                  "%s.c does not build against the installed headers", plugins[i]);
    static const char *const graphs[] = {"raster-fog", "raytrace-ao"};
    for (int i = 0; i < 2; i++) {
        const char *g = graphs[i];
        CHECK(sh("%s/bin/gramps-render -q --size 48x48 --graph examples/graphs/%s.graph "
                 "-o %s/%s-tree.png teapot", build, g, dir, g) == 0);
        CHECK(sh("GRAMPS_PLUGIN_PATH=%s/plugins %s/bin/gramps-render -q --size 48x48 --graph "
                 "examples/graphs/%s.graph -o %s/%s-installed.png teapot", dir, build, g, dir, g) == 0);
        CHECK_MSG(sh("cmp %s/%s-tree.png %s/%s-installed.png", dir, g, dir, g) == 0,
                  "%s: the plugin built against the installed copy gives another image", g);
    }
    CHECK(sh("GRAMPS_PLUGIN_PATH=%s/plugins %s/bin/gramps-run "
             "examples/graphs/set-reduce-keyed.graph -t 2", dir, build) == 0);
}

/* The installed programs alone: the installed gramps-render runs an installed example
 * graph, finding its plugin in the installed lib/gramps/plugins, and a plugin built out
 * of the tree against the installed copy (pkg-config) loads into it; both give the
 * images of the build tree. */
static void test_installed_programs(void)
{
    CHECK(sh("cd %s && %s/bin/gramps-render -q --size 48x48 --graph "
             "%s/share/gramps/examples/graphs/raster-fog.graph -o %s/fog-prefix.png teapot",
             dir, prefix, prefix, dir) == 0);
    CHECK_MSG(sh("cmp %s/raster-fog-tree.png %s/fog-prefix.png", dir, dir) == 0,
              "the installed program and plugin give another image");
    CHECK(sh("mkdir -p %s/oot && cp examples/plugins/ao.c %s/oot/stage.c && cd %s/oot && "
             "%s -std=c11 -O2 %s -shared -fPIC $(pkg-config --cflags gramps-render) stage.c "
             "-o ao.so", dir, dir, dir, TEST_CC, TEST_SANFLAGS) == 0);
    /* GRAMPS_PLUGIN_PATH is searched before the installed plugins: the graph's ao.so is
     * the one just built */
    CHECK(sh("cd %s && GRAMPS_PLUGIN_PATH=%s/oot %s/bin/gramps-render -q --size 48x48 --graph "
             "%s/share/gramps/examples/graphs/raytrace-ao.graph -o %s/ao-prefix.png teapot",
             dir, dir, prefix, prefix, dir) == 0);
    CHECK_MSG(sh("cmp %s/raytrace-ao-tree.png %s/ao-prefix.png", dir, dir) == 0,
              "the out-of-tree plugin in the installed program gives another image");
}

int main(int argc, char **argv)
{
    (void)argc;
    char self[PATH_MAX];
    snprintf(self, sizeof self, "%s/../..", dirname(argv[0]));   /* BUILD/tests/render */
    if (!realpath(self, build) || !mkdtemp(dir)) {
        perror("test_install");
        return 1;
    }
    snprintf(prefix, sizeof prefix, "%s/prefix", dir);
    /* pkg-config finds only the copy just installed (LIBDIR replaces its default path) */
    char pc[PATH_MAX + 32];
    snprintf(pc, sizeof pc, "%s/lib/pkgconfig", prefix);
    setenv("PKG_CONFIG_PATH", pc, 1);
    setenv("PKG_CONFIG_LIBDIR", pc, 1);
    RUN(test_install_tree);
    RUN(test_headers_standalone);
    RUN(test_example_against_installed_copy);
    RUN(test_plugins_against_installed_copy);
    RUN(test_installed_programs);
    CHECK(scratch_dir_remove(dir));
    return check_finish();
}
