/* test_opencl.c — Shader stages placed on the OpenCL device (docs/opencl.md), through
 * gramps-render as a user runs it: rt.intersect's, rt.shadow's and rt.shade's kernels give the CPU
 * graph's image byte for byte (teapot, cornell, the Stanford bunny), for any worker count,
 * and so does hybrid.trace's in the hybrid graph;
 * a scene with what the kernels lack (hit filters, textures) stays on the CPU under `auto`; a stage without a kernel, a kernel
 * that does not build and a machine without an OpenCL platform are refused with a
 * message (or fall back under `auto`). Runs on whatever platform the ICD loader finds:
 * PoCL on the CPU in CI. Kernels are compiled once into POCL_CACHE_DIR under the build
 * directory, so later runs skip PoCL's compile. */
#include "tests/check.h"
#include "tests/cli.h"

#include <sys/stat.h>
#include <unistd.h>

static char build_dir[512];
static char plugin[600];

static int tmp_path(char *buf, size_t n, const char *name)
{
    return snprintf(buf, n, "%s/tests/opencl-%s", build_dir, name);
}

/* A scene at 64x64 through the ray tracer, with `extra` options. */
static int render(const char *scene, const char *extra, const char *png)
{
    char args[1400];
    snprintf(args, sizeof args, "-q -p raytrace --size 64x64 %s -o %s %s", extra, png, scene);
    return run(args);
}

static void test_lists_devices(void)
{
    int rc = run("--list-devices");
    CHECK_MSG(rc == 0, "%s", out);
    CHECK(strstr(out, "platform 0:") && strstr(out, "device 0.0:"));
}

/* Both kernels run (launch counts in the statistics) and the image is the CPU's. */
static void test_same_image_as_cpu(void)
{
    const char *scenes[] = {"teapot", "cornell", "../shared/scenes/bunny.obj"};
    for (int i = 0; i < 3; i++) {
        if (i == 2 && access(scenes[i], R_OK) != 0) {
            printf("note: %s is not here; teapot and cornell only\n", scenes[i]);
            break;
        }
        char cpu[700], cl[700], stats[700], extra[800];
        tmp_path(cpu, sizeof cpu, "cpu.png");
        tmp_path(cl, sizeof cl, "cl.png");
        tmp_path(stats, sizeof stats, "stats.json");
        CHECK_MSG(render(scenes[i], "-t 2", cpu) == 0, "%s", out);
        snprintf(extra, sizeof extra, "-t 2 --set graph.device=opencl --stats %s", stats);
        CHECK_MSG(render(scenes[i], extra, cl) == 0, "%s", out);
        CHECK_MSG(same_files(cpu, cl), "%s: the OpenCL image differs from the CPU's", scenes[i]);
        char *js = slurp(stats, NULL);
        CHECK(js && strstr(js, "\"name\": \"intersect-0\"") && strstr(js, "\"device\": \"opencl\""));
        CHECK(js && strstr(js, "\"device\": \"cpu\""));          /* Primary, Blend... */
        const char *shade = js ? strstr(js, "\"name\": \"shade-0\"") : NULL;
        CHECK_MSG(shade && strstr(shade, "\"device\": \"opencl\"") &&
                  strstr(shade, "\"device\": \"opencl\"") < strchr(shade, '}'),
                  "%s: Shade is not on the device", scenes[i]);
        /* Launches over batches of packets: fewer launches than tasks. */
        const char *sh = js ? strstr(js, "\"name\": \"shadow-intersect-0\"") : NULL;
        const char *tasks = sh ? strstr(sh, "\"tasks\": ") : NULL;
        const char *launches = sh ? strstr(sh, "\"kernel_launches\": ") : NULL;
        CHECK(launches && atoi(launches + 19) > 0);
        CHECK_MSG(!launches || !tasks || atoi(launches + 19) < atoi(tasks + 9) || atoi(tasks + 9) < 2,
                  "%s: %d launches for %d tasks", scenes[i], launches ? atoi(launches + 19) : -1,
                  tasks ? atoi(tasks + 9) : -1);
        free(js);
    }
}

static void test_same_image_any_worker_count(void)
{
    char ref[700], png[700], extra[300];
    tmp_path(ref, sizeof ref, "ref.png");
    tmp_path(png, sizeof png, "w.png");
    CHECK_MSG(render("cornell", "-t 1", ref) == 0, "%s", out);
    for (int w = 1; w <= 3; w++) {
        snprintf(extra, sizeof extra, "-t %d --set graph.device=opencl", w);
        CHECK_MSG(render("cornell", extra, png) == 0, "%s", out);
        CHECK_MSG(same_files(ref, png), "%d workers: not the CPU image", w);
    }
}

/* The hybrid graph's Trace (shadow, mirror and through rays in one packet) on the
 * device: the CPU graph's image. */
static void test_hybrid_trace(void)
{
    char cpu[700], cl[700], stats[700], args[2400];
    tmp_path(cpu, sizeof cpu, "hybrid-cpu.png");
    tmp_path(cl, sizeof cl, "hybrid-cl.png");
    tmp_path(stats, sizeof stats, "hybrid.json");
    snprintf(args, sizeof args, "-q -p hybrid -t 2 --size 48x48 -o %s cornell", cpu);
    CHECK_MSG(run(args) == 0, "%s", out);
    snprintf(args, sizeof args, "-q -p hybrid -t 2 --size 48x48 --set graph.device=opencl "
             "--stats %s -o %s cornell", stats, cl);
    CHECK_MSG(run(args) == 0, "%s", out);
    CHECK_MSG(same_files(cpu, cl), "hybrid: the OpenCL image differs from the CPU's");
    char *js = slurp(stats, NULL);
    const char *trace = js ? strstr(js, "\"name\": \"trace-0\"") : NULL;
    const char *launches = trace ? strstr(trace, "\"kernel_launches\": ") : NULL;
    CHECK_MSG(launches && atoi(launches + 19) > 0, "hybrid.trace did not launch its kernel");
    free(js);
}

/* A stage whose type has no kernel, placed by its own setting: refused, named. */
static void test_stage_without_kernel_refused(void)
{
    char png[700];
    tmp_path(png, sizeof png, "x.png");
    int rc = render("teapot", "--set primary.device=opencl", png);
    CHECK_MSG(rc == 1 && strstr(out, "stage 'primary'") && strstr(out, "no OpenCL kernel") &&
              strstr(out, "command line"), "rc %d: %s", rc, out);
    char graph[700], extra[900];
    tmp_path(graph, sizeof graph, "place.graph");
    FILE *f = fopen(graph, "w");
    CHECK(f && fputs("[stage primary]\ndevice = opencl\n", f) >= 0);
    if (f) fclose(f);
    snprintf(extra, sizeof extra, "--graph %s", graph);
    rc = render("teapot", extra, png);
    CHECK_MSG(rc == 1 && strstr(out, "place.graph:2: stage 'primary' (type rt.primary)"), "rc %d: %s", rc, out);
    rc = render("teapot", "--set intersect.device=gpu", png);
    CHECK_MSG(rc == 1 && strstr(out, "device = gpu") && strstr(out, "cpu, opencl or auto"),
              "rc %d: %s", rc, out);
}

/* The showcase has alpha-tested and blended materials, which the kernels do not do:
 * `opencl` is refused naming the stage and why, `auto` renders the CPU image and says
 * so once (not for every frame). */
static void test_unsupported_scene(void)
{
    char cpu[700], png[700];
    tmp_path(cpu, sizeof cpu, "cpu.png");
    tmp_path(png, sizeof png, "auto.png");
    int rc = render("showcase", "--set graph.device=opencl", png);
    CHECK_MSG(rc == 1 && strstr(out, "stage 'intersect-0'") && strstr(out, "hit filter"),
              "rc %d: %s", rc, out);
    rc = render("showcase", "--set graph.device=auto --frames 2", png);
    const char *note = strstr(out, "stage 'intersect-0' runs on the CPU (device = auto)");
    CHECK_MSG(rc == 0 && note, "rc %d: %s", rc, out);
    CHECK_MSG(!note || !strstr(note + 1, "stage 'intersect-0' runs on the CPU"),
              "the note comes once, not every frame: %s", out);
    CHECK(render("showcase", "", cpu) == 0);
    CHECK(same_files(cpu, png));
}

static void test_kernel_build_failure(void)
{
    char png[700], extra[1400];
    tmp_path(png, sizeof png, "x.png");
    snprintf(extra, sizeof extra, "--plugin %s --set intersect.type=test.bad-kernel "
             "--set intersect.device=opencl", plugin);
    int rc = render("teapot", extra, png);
    CHECK_MSG(rc == 1 && strstr(out, "stage 'intersect-0'") &&
              strstr(out, "tests/plugins/bad_kernel.cl") && strstr(out, "build log") &&
              strstr(out, "error"), "rc %d: %s", rc, out);
}

/* No platform: `opencl` is refused naming where the loader looked; `auto` warns and
 * renders on the CPU. */
static void test_no_platform(void)
{
    char empty[700], cpu[700], png[700], extra[1000];
    tmp_path(empty, sizeof empty, "no-vendors");
    mkdir(empty, 0755);
    tmp_path(cpu, sizeof cpu, "cpu.png");
    tmp_path(png, sizeof png, "auto.png");
    setenv("OCL_ICD_VENDORS", empty, 1);
    int rc = render("teapot", "--set graph.device=opencl", png);
    CHECK_MSG(rc == 1 && strstr(out, "no OpenCL platform") && strstr(out, empty), "rc %d: %s", rc, out);
    snprintf(extra, sizeof extra, "--set graph.device=auto");
    rc = render("teapot", extra, png);
    CHECK_MSG(rc == 0 && strstr(out, "warning") && strstr(out, "run on the CPU"), "rc %d: %s", rc, out);
    rc = run("--list-devices");
    CHECK_MSG(rc == 1 && strstr(out, "no OpenCL platform"), "rc %d: %s", rc, out);
    unsetenv("OCL_ICD_VENDORS");
    CHECK(render("teapot", "", cpu) == 0);
    CHECK(same_files(cpu, png));
}

int main(int argc, char **argv)
{
    (void)argc;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    printf("skip all: PoCL's own threads and allocations are reported by this sanitizer "
           "(they are not instrumented); the plain and UBSan builds run these tests\n");
    return check_finish();
#endif
    find_tool(argv[0], "gramps-render");
    snprintf(build_dir, sizeof build_dir, "%s/../..", dirname(strdup(argv[0])));
    snprintf(plugin, sizeof plugin, "%s/tests/plugins/bad_kernel.so", build_dir);
    char cache[700];
    snprintf(cache, sizeof cache, "%s/pocl-cache", build_dir);
    setenv("POCL_CACHE_DIR", cache, 0);
    RUN(test_lists_devices);
    RUN(test_same_image_as_cpu);
    RUN(test_same_image_any_worker_count);
    RUN(test_hybrid_trace);
    RUN(test_stage_without_kernel_refused);
    RUN(test_unsupported_scene);
    RUN(test_kernel_build_failure);
    RUN(test_no_platform);
    return check_finish();
}
