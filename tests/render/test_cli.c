/* gramps-render as a user runs it: bad flags exit 2 naming the flag, a bad scene exits 1
 * naming the file, a render writes a PNG and a statistics file, and a failed render
 * leaves an existing output file untouched, an output that cannot be written is named
 * before the render; both pipelines give the same image at 1, 24
 * and 256 workers; the statistics file parses whatever the scene file is called and
 * reports every frame. Finds the tool beside this test's build dir. */
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/json_check.h"
#include "tests/scratch_dir.h"

#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <unistd.h>


static void test_bad_flags(void)
{
    CHECK(run("--size 0x5") == 2 && strstr(out, "--size"));
    CHECK(run("-t abc") == 2 && strstr(out, "-t"));
    CHECK(run("--aov shiny") == 2 && strstr(out, "--aov"));
    CHECK(run("-p nope") == 2 && strstr(out, "-p"));
    CHECK(run("--frames") == 2 && strstr(out, "--frames"));
    CHECK(run("--camera 1,2") == 2 && strstr(out, "--camera"));
    CHECK(run("--size 4294967297x1") == 2 && strstr(out, "--size"));      /* no wrap to 1 */
    CHECK(run("--size 5x5x") == 2 && strstr(out, "--size"));
    CHECK(run("--camera 0,0,1,0,0,1,0,1,0,40") == 2 && strstr(out, "--camera") &&
          strstr(out, "same point"));
    CHECK(run("--camera 0,0,5,0,0,0,0,0,1,40") == 2 && strstr(out, "parallel"));
    CHECK(run("--light 1e30,0,0") == 2 && strstr(out, "--light"));
    CHECK(run("--max-memory 5x") == 2 && strstr(out, "--max-memory"));
    CHECK(run("teapot cornell") == 2);
    CHECK(run("--help") == 0 && strstr(out, "usage"));
}

static void test_bad_scene(void)
{
    /* the memory estimate is checked before rendering */
    CHECK(run("-q --size 4096x4096 -p raytrace --max-memory 64M teapot") == 1 &&
          strstr(out, "needs about") && strstr(out, "--max-memory 64 MiB"));
    /* the hybrid's depth layers (8 bytes a pixel per group) count: 80 MiB more here */
    CHECK(run("-q --size 2048x2048 -t 2 -p raytrace --max-memory 190M -o /dev/null cornell") == 0);
    CHECK(run("-q --size 2048x2048 -t 2 -p hybrid --max-memory 190M cornell") == 1 &&
          strstr(out, "frame buffers 176"));
    CHECK(run("-q /nonexistent.obj") == 1 && strstr(out, "/nonexistent.obj"));
    CHECK(run("-q no-such-builtin") == 1 && strstr(out, "no-such-builtin"));
    /* a name that is neither a built-in nor a file says both */
    CHECK(run("-q bunny") == 1 && strstr(out, "'bunny'") && strstr(out, "no built-in scene") &&
          strstr(out, "cornell") && strstr(out, "no such file"));
}

/* Limits are said, not applied silently: more than 8 lights, textures in the ray tracer. */
static void test_limit_warnings(void)
{
    char path[] = "/tmp/gramps-cli-lights-XXXXXX.scene", args[256];
    int fd = mkstemps(path, 6);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "[mesh.a]\nbuiltin = teapot\n");
    for (int i = 0; i < 9; i++) fprintf(f, "[light.l%d]\nposition = %d,5,5\n", i, i);
    fclose(f);
    snprintf(args, sizeof args, "-q --size 8x8 -o /dev/null %s", path);
    CHECK(run(args) == 0 && strstr(out, "warning") && strstr(out, "9 lights") && strstr(out, "first 8"));
    unlink(path);
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
    CHECK(scratch_dir_remove(dir));
}

/* An output that cannot be written is named before anything is rendered: before the
 * memory check, which a huge render would fail next, and for every kind of output;
 * nothing is left behind in the directory (the probe's temporary is removed). */
static void test_unwritable_output_before_render(void)
{
    char dir[] = "/tmp/gramps-unwritable-XXXXXX", args[600], missing[200];
    if (!mkdtemp(dir)) { CHECK(0); return; }
    snprintf(missing, sizeof missing, "%s/no-such-dir/x", dir);
    const char *const flags[] = {"-o", "--stats", "--trace", "--dot"};
    for (int i = 0; i < 4; i++) {
        snprintf(args, sizeof args, "-q --size 16384x16384 --max-memory 1M %s %s.png teapot",
                 flags[i], missing);
        CHECK_MSG(run(args) == 1 && strstr(out, "no-such-dir/x.png: cannot write") &&
                  !strstr(out, "max-memory"), "%s: %s", flags[i], out);
    }
    snprintf(args, sizeof args, "-q --size 16x16 -o %s teapot", dir);       /* a directory */
    CHECK_MSG(run(args) == 1 && strstr(out, "Is a directory"), "%s", out);
    snprintf(args, sizeof args, "-q --size 16x16 -o %s/x.png teapot", dir);
    CHECK(run(args) == 0);
    int entries = 0;                      /* x.png only: the probes left nothing */
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) entries += e->d_name[0] != '.' || strlen(e->d_name) > 2;
    if (d) closedir(d);
    CHECK_MSG(entries == 1, "%d entries in %s", entries, dir);
    CHECK(scratch_dir_remove(dir));
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
    return ref ? same_files(ref, png) : rc == 0;
}

/* The default worker count is all hardware threads, so a 24- or 256-thread machine must
 * work out of the box; the images are bit-identical by design (see raster.h). */
static void test_any_worker_count(void)
{
    char dir[] = "/tmp/gramps-cli-XXXXXX", ref[300];
    if (!mkdtemp(dir)) { CHECK(0); return; }
    const char *pipelines[] = {"raster", "raytrace"};
    for (int p = 0; p < 2; p++) {
        snprintf(ref, sizeof ref, "%s/%s-1.png", dir, pipelines[p]);
        CHECK(same_image(dir, pipelines[p], 1, NULL));
        CHECK_MSG(same_image(dir, pipelines[p], 24, ref), "%s -t 24", pipelines[p]);
        CHECK_MSG(same_image(dir, pipelines[p], 256, ref), "%s -t 256", pipelines[p]);
    }
    CHECK(scratch_dir_remove(dir));
}

/* A scene file whose name holds a double quote: the scene name in the statistics was
 * written unescaped, and the file did not parse. */
static void test_stats_quoted_scene_name(void)
{
    char dir[] = "/tmp/gramps-cli-XXXXXX", obj[300], json[300], args[1024];
    if (!mkdtemp(dir)) { CHECK(0); return; }
    snprintf(obj, sizeof obj, "%s/tea\"pot.obj", dir);
    snprintf(json, sizeof json, "%s/stats.json", dir);
    FILE *f = fopen(obj, "w");
    if (f) { fputs("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", f); fclose(f); }
    snprintf(args, sizeof args, "-q --size 32x32 --stats %s '%s'", json, obj);
    CHECK_MSG(run(args) == 0, "%s", out);
    char *text = slurp(json, NULL);
    CHECK_MSG(text && json_valid(text), "stats do not parse:\n%.400s", text ? text : "");
    CHECK(text && strstr(text, "\"scene\": \"tea\\\"pot"));
    free(text);
    CHECK(scratch_dir_remove(dir));
}

/* --frames 2: a frames array of two with their footprints, medians the mean of the two
 * (the upper one was reported), the peak the larger frame's. */
static void test_stats_per_frame(void)
{
    char json[] = "/tmp/gramps-cli-stats-XXXXXX", args[1024];
    int fd = mkstemp(json);
    if (fd < 0) { CHECK(0); return; }
    close(fd);
    snprintf(args, sizeof args, "-q --size 64x48 --frames 2 --stats %s teapot", json);
    CHECK(run(args) == 0);
    char *text = slurp(json, NULL);
    CHECK(text && json_valid(text));
    double ms[2] = {0}, outside_ms[2] = {0}, avg[2] = {0}, median_ms = -1, peak_median = -1,
           peak_top = -1;
    unsigned long long peak[2] = {0};
    const char *fr = text ? strstr(text, "\n\"frames\": [") : NULL;
    CHECK(fr && sscanf(fr, "\n\"frames\": [ {\"frame_ms\": %lf, \"outside_graph_ms\": %lf, "
                       "\"peak_footprint_bytes\": %llu, \"avg_footprint_bytes\": %lf}, "
                       "{\"frame_ms\": %lf, \"outside_graph_ms\": %lf, "
                       "\"peak_footprint_bytes\": %llu, \"avg_footprint_bytes\": %lf} ]",
                       &ms[0], &outside_ms[0], &peak[0], &avg[0], &ms[1], &outside_ms[1],
                       &peak[1], &avg[1]) == 8);
    for (int i = 0; i < 2; i++)
        CHECK_MSG(ms[i] > 0 && outside_ms[i] >= 0 && outside_ms[i] < ms[i] && peak[i] > 0 &&
                  avg[i] > 0 && avg[i] <= (double)peak[i], "frame %d: %.3f ms (%.3f outside the graph), "
                  "peak %llu, average %.1f", i, ms[i], outside_ms[i], peak[i], avg[i]);
    double out_median = -1, share = -1, bound16 = -1;
    const char *o = text ? strstr(text, "\"outside_graph_ms\": {\"median\": ") : NULL;
    CHECK(o && sscanf(o, "\"outside_graph_ms\": {\"median\": %lf", &out_median) == 1);
    const double outside_mean = (outside_ms[0] + outside_ms[1]) / 2;
    CHECK(out_median > outside_mean - 0.002 && out_median < outside_mean + 0.002);
    o = text ? strstr(text, "\"frame_serial_share\": ") : NULL;
    CHECK(o && sscanf(o, "\"frame_serial_share\": %lf,\n\"frame_amdahl_bound_16\": %lf",
                      &share, &bound16) == 2);
    CHECK_MSG(share > 0 && share < 1 && fabs(bound16 - 1 / (share + (1 - share) / 16)) < 0.01,
              "frame serial share %.4f, bound %.2f at 16", share, bound16);
    double listed[2] = {0};               /* frame_ms's own list, also in the old format */
    const char *m = text ? strstr(text, "\"frame_ms\": {\"median\": ") : NULL;
    CHECK(m && sscanf(m, "\"frame_ms\": {\"median\": %lf", &median_ms) == 1);
    m = m ? strstr(m, "\"frames\": [") : NULL;
    CHECK(m && sscanf(m, "\"frames\": [%lf, %lf]", &listed[0], &listed[1]) == 2);
    double mean = (listed[0] + listed[1]) / 2;
    CHECK_MSG(median_ms > mean - 0.002 && median_ms < mean + 0.002, "median %.3f of %.3f and "
              "%.3f", median_ms, listed[0], listed[1]);
    m = text ? strstr(text, "\"peak_bytes\": {\"median\": ") : NULL;
    CHECK(m && sscanf(m, "\"peak_bytes\": {\"median\": %lf", &peak_median) == 1);
    CHECK(peak_median == (peak[0] + peak[1]) / 2.0);
    m = text ? strstr(text, "\n\"peak_footprint_bytes\": ") : NULL;
    CHECK(m && sscanf(m, "\n\"peak_footprint_bytes\": %lf", &peak_top) == 1);
    CHECK(peak_top == (double)(peak[0] > peak[1] ? peak[0] : peak[1]));
    CHECK(text && strstr(text, "\n\"avg_footprint_bytes\": "));
    free(text);
    unlink(json);
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    RUN(test_bad_flags);
    RUN(test_bad_scene);
    RUN(test_limit_warnings);
    RUN(test_render_and_keep_output);
    RUN(test_unwritable_output_before_render);
    RUN(test_any_worker_count);
    RUN(test_stats_quoted_scene_name);
    RUN(test_stats_per_frame);
    return check_finish();
}
