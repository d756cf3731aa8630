/* gramps-render as a user runs it: bad flags exit 2 naming the flag, a bad scene exits 1
 * naming the file, a render writes a PNG and a statistics file, and a failed render
 * leaves an existing output file untouched, and both pipelines give the same image at 1,
 * 24 and 256 workers. Finds the tool beside this test's build dir. */
#include "tests/check.h"

#include <libgen.h>
#include <stdbool.h>
#include <sys/wait.h>

static char tool[512];
static char out[4096];

static int run(const char *args)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", tool, args);
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = 0;
    int st = p ? pclose(p) : -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_bad_flags(void)
{
    CHECK(run("--size 0x5") == 2 && strstr(out, "--size"));
    CHECK(run("-t abc") == 2 && strstr(out, "-t"));
    CHECK(run("--aov shiny") == 2 && strstr(out, "--aov"));
    CHECK(run("-p nope") == 2 && strstr(out, "-p"));
    CHECK(run("--frames") == 2 && strstr(out, "--frames"));
    CHECK(run("--camera 1,2") == 2 && strstr(out, "--camera"));
    CHECK(run("teapot cornell") == 2);
    CHECK(run("--help") == 0 && strstr(out, "usage"));
}

static void test_bad_scene(void)
{
    CHECK(run("-q /nonexistent.obj") == 1 && strstr(out, "/nonexistent.obj"));
    CHECK(run("-q no-such-builtin") == 1 && strstr(out, "no-such-builtin"));
}

static long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

static void test_render_and_keep_output(void)
{
    char dir[] = "/tmp/gramps-cli-XXXXXX", args[1024], png[300], json[300];
    if (!mkdtemp(dir)) { CHECK(0); return; }
    snprintf(png, sizeof png, "%s/out.png", dir);
    snprintf(json, sizeof json, "%s/stats.json", dir);
    snprintf(args, sizeof args, "-q --size 64x48 -o %s --stats %s teapot", png, json);
    CHECK(run(args) == 0);
    FILE *f = fopen(png, "rb");
    unsigned char magic[4] = {0};
    if (f) { CHECK(fread(magic, 1, 4, f) == 4); fclose(f); }
    CHECK(magic[1] == 'P' && magic[2] == 'N' && magic[3] == 'G');
    long before = file_size(png);
    f = fopen(json, "r");
    char buf[8192] = {0};
    if (f) { CHECK(fread(buf, 1, sizeof buf - 1, f) > 0); fclose(f); }
    CHECK(strstr(buf, "\"frame_ms\"") && strstr(buf, "\"peak_footprint_bytes\"") && strstr(buf, "\"queues\""));
    snprintf(args, sizeof args, "-q --size 64x48 -o %s /nonexistent.obj", png);
    CHECK(run(args) == 1);
    CHECK(file_size(png) == before);              /* the earlier image is still there */
    snprintf(args, sizeof args, "-q --size 32x32 -p raytrace -o %s cornell", png);
    CHECK(run(args) == 0 && file_size(png) != before);
    char rm[300];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    CHECK(system(rm) == 0);
}

/* Whole file, or NULL; *n is its size. */
static unsigned char *slurp(const char *path, long *n)
{
    *n = file_size(path);
    FILE *f = fopen(path, "rb");
    unsigned char *b = f && *n > 0 ? malloc((size_t)*n) : NULL;
    if (b && fread(b, 1, (size_t)*n, f) != (size_t)*n) { free(b); b = NULL; }
    if (f) fclose(f);
    return b;
}

/* Renders at `threads` workers into dir/<pipeline>-<threads>.png; true when the image
 * (PNG bytes) equals `ref`'s. */
static bool same_image(const char *dir, const char *pipeline, int threads, const char *ref)
{
    char png[300], args[1024];
    snprintf(png, sizeof png, "%s/%s-%d.png", dir, pipeline, threads);
    snprintf(args, sizeof args, "-q -p %s --size 64x64 -t %d -o %s teapot", pipeline, threads, png);
    int rc = run(args);
    CHECK_MSG(rc == 0, "%s at -t %d: exit %d: %s", pipeline, threads, rc, out);
    if (!ref) return rc == 0;
    long na, nb;
    unsigned char *a = slurp(ref, &na), *b = slurp(png, &nb);
    bool same = a && b && na == nb && memcmp(a, b, (size_t)na) == 0;
    free(a);
    free(b);
    return same;
}

/* The default worker count is all hardware threads, so a 24- or 256-thread machine must
 * work out of the box; the images are bit-identical by design (see raster.h). */
static void test_any_worker_count(void)
{
    char dir[] = "/tmp/gramps-cli-XXXXXX", ref[300], rm[300];
    if (!mkdtemp(dir)) { CHECK(0); return; }
    const char *pipelines[] = {"raster", "raytrace"};
    for (int p = 0; p < 2; p++) {
        snprintf(ref, sizeof ref, "%s/%s-1.png", dir, pipelines[p]);
        CHECK(same_image(dir, pipelines[p], 1, NULL));
        CHECK_MSG(same_image(dir, pipelines[p], 24, ref), "%s -t 24", pipelines[p]);
        CHECK_MSG(same_image(dir, pipelines[p], 256, ref), "%s -t 256", pipelines[p]);
    }
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    CHECK(system(rm) == 0);
}

int main(int argc, char **argv)
{
    (void)argc;
    char self[512];
    snprintf(self, sizeof self, "%s", argv[0]);
    snprintf(tool, sizeof tool, "%s/../../bin/gramps-render", dirname(self));
    RUN(test_bad_flags);
    RUN(test_bad_scene);
    RUN(test_render_and_keep_output);
    RUN(test_any_worker_count);
    return check_finish();
}
