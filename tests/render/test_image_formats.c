/* gramps-render's image outputs by name: with no output named it writes SCENE-GRAPH.png
 * in the working directory, says where, and never replaces a file already there; -o
 * writes what the extension asks (a .jpg is a JPEG whose pixels are the PNG's within
 * JPEG's loss) and refuses an extension it cannot write, naming -o. */
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/scratch_dir.h"

#include <stb/stb_image.h>                /* stbi_load: compiled into librender */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

static char dir[64];

/* Runs the tool in the test's directory. */
static int run_in_dir(const char *args)
{
    char line[1024];
    snprintf(line, sizeof line, "%s", args);
    char saved[512];
    if (!getcwd(saved, sizeof saved) || chdir(dir) != 0) return -1;
    int rc = run(line);
    if (chdir(saved) != 0) return -1;
    return rc;
}

static bool exists_in_dir(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

static void test_default_output(void)
{
    CHECK(run_in_dir("-q --size 16x16") == 0 && strstr(out, "teapot-raster.png") &&
          strstr(out, dir) && exists_in_dir("teapot-raster.png"));
    /* a second run does not replace it, and says how to */
    CHECK(run_in_dir("-q --size 16x16") == 1 && strstr(out, "-o teapot-raster.png"));
    /* named after a scene file and the graph */
    CHECK(run_in_dir("-q --size 16x16 -p raytrace cornell") == 0 &&
          exists_in_dir("cornell-raytrace.png"));
    /* another output named: no default image */
    CHECK(run_in_dir("-q --size 16x16 --stats s.json -p hybrid") == 0 &&
          !exists_in_dir("teapot-hybrid.png"));
}

/* The mean absolute difference of two same-sized RGB images' channels, or 255. */
static double mean_difference(const char *a, const char *b)
{
    int w[2], h[2], c;
    uint8_t *p = stbi_load(a, &w[0], &h[0], &c, 3), *q = stbi_load(b, &w[1], &h[1], &c, 3);
    double sum = 255.0 * 3 * w[0] * h[0];
    if (p && q && w[0] == w[1] && h[0] == h[1]) {
        sum = 0;
        for (int i = 0; i < w[0] * h[0] * 3; i++) sum += abs(p[i] - q[i]);
    }
    stbi_image_free(p);
    stbi_image_free(q);
    return sum / (3.0 * w[0] * h[0]);
}

static void test_jpeg(void)
{
    CHECK(run_in_dir("-q --size 64x48 -o a.png cornell") == 0);
    CHECK(run_in_dir("-q --size 64x48 -o a.jpg cornell") == 0);
    CHECK(run_in_dir("-q --size 64x48 -o b.JPEG cornell") == 0);
    char png[128], jpg[128], jpeg[128];
    snprintf(png, sizeof png, "%s/a.png", dir);
    snprintf(jpg, sizeof jpg, "%s/a.jpg", dir);
    snprintf(jpeg, sizeof jpeg, "%s/b.JPEG", dir);
    char *head = slurp(jpg, NULL);
    CHECK(head && (uint8_t)head[0] == 0xff && (uint8_t)head[1] == 0xd8);   /* SOI */
    free(head);
    double d = mean_difference(png, jpg);
    CHECK_MSG(d < 3.0, "JPEG differs from the PNG by %.2f per channel", d);
    CHECK(same_files(jpg, jpeg));
}

static void test_unknown_extension(void)
{
    CHECK(run_in_dir("-q --size 16x16 -o a.bmp") == 2 && strstr(out, "-o") &&
          strstr(out, "a.bmp") && strstr(out, ".jpg"));
    CHECK(!exists_in_dir("a.bmp"));
    /* no extension: a PNG, as before (devices, FIFOs, scripts' names) */
    CHECK(run_in_dir("-q --size 16x16 -o noext") == 0 && exists_in_dir("noext"));
}

int main(int argc, char **argv)
{
    (void)argc;
    char self[512];
    if (argv[0][0] != '/' && getcwd(self, sizeof self)) {
        char rel[1024];
        snprintf(rel, sizeof rel, "%s/%s", self, argv[0]);
        find_tool(rel, "gramps-render");
    } else {
        find_tool(argv[0], "gramps-render");
    }
    snprintf(dir, sizeof dir, "/tmp/gramps-formats-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    RUN(test_default_output);
    RUN(test_jpeg);
    RUN(test_unknown_extension);
    if (!scratch_dir_remove(dir)) return 1;
    return check_finish();
}
