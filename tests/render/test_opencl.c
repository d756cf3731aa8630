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
#include "tests/render/device_test.h"

#include <sys/stat.h>
#include <unistd.h>

/* The ray tracer at 64x64; a test adds its own options. */
#define RT "-p raytrace --size 64x64"

static char plugin[600];

static void test_lists_devices(void)
{
    int rc = run("--list-devices");
    CHECK_MSG(rc == 0, "%s", out);
    CHECK(strstr(out, "platform 0:") && strstr(out, "device 0.0:"));
}

/* Intersect and Shade on the device; Shadow's kernel launches over batches of packets:
 * fewer launches than tasks, gathers included, at the graph's `contributions` capacity
 * (4 packets a subqueue), since a batch follows the subqueues its tasks push into
 * (gramps/batch_room.c, docs/opencl.md). */
static void check_device_stats(const char *scene, const char *stats)
{
    char *js = slurp(stats, NULL);
    char device[32] = "";
    CHECK(stage_string(stats_stage(js, "intersect-0"), "device", device, sizeof device) &&
          !strcmp(device, "opencl"));
    CHECK(js && strstr(js, "\"device\": \"cpu\""));          /* Primary, Blend... */
    CHECK_MSG(stage_string(stats_stage(js, "shade-0"), "device", device, sizeof device) &&
              !strcmp(device, "opencl"), "%s: Shade is not on the device", scene);
    const char *shadow = stats_stage(js, "shadow-intersect-0");
    unsigned long long launches = stage_number(shadow, "kernel_launches");
    unsigned long long tasks = stage_number(shadow, "tasks");
    CHECK(launches > 0);
    CHECK_MSG(launches < tasks || tasks < 2, "%s: %llu launches for %llu tasks", scene,
              launches, tasks);
    free(js);
}

/* Both kernels run (launch counts in the statistics) and the image is the CPU's, with 2
 * workers and with 1. The launch counts are checked at 1 worker only: there the batches
 * do not depend on timing, while with 2 the other worker's steals and pushes may leave
 * every batch of a small frame one task (teapot at 64x64: 6 launches for 6 Shadow tasks
 * in about one run of 20). */
static void test_same_image_as_cpu(void)
{
    const char *scenes[] = {"teapot", "cornell", "../shared/scenes/bunny.obj"};
    char stats[700];
    for (int i = 0; i < 3; i++) {
        if (i == 2 && access(scenes[i], R_OK) != 0) {
            printf("note: %s is not here; teapot and cornell only\n", scenes[i]);
            break;
        }
        for (int workers = 2; workers >= 1; workers--) {
            char options[100];
            snprintf(options, sizeof options, RT " -t %d", workers);
            CHECK_MSG(same_image_as_cpu(scenes[i], options, "--set graph.device=opencl", "same",
                                        stats),
                      "%s, %d workers: the OpenCL image differs from the CPU's", scenes[i], workers);
        }
        check_device_stats(scenes[i], stats);
    }
}

static void test_same_image_any_worker_count(void)
{
    char ref[700], png[700];
    scratch_path(ref, sizeof ref, "ref.png");
    scratch_path(png, sizeof png, "w.png");
    CHECK_MSG(render_to(ref, "cornell", RT " -t 1") == 0, "%s", out);
    for (int w = 1; w <= 3; w++) {
        CHECK_MSG(render_to(png, "cornell", RT " -t %d --set graph.device=opencl", w) == 0,
                  "%s", out);
        CHECK_MSG(same_files(ref, png), "%d workers: not the CPU image", w);
    }
}

/* The hybrid graph's Trace (mirror and through rays) and shadow stage on the device:
 * the CPU graph's image. */
static void test_hybrid_trace(void)
{
    char stats[700];
    CHECK_MSG(same_image_as_cpu("cornell", "-p hybrid -t 2 --size 48x48",
                                "--set graph.device=opencl", "hybrid", stats),
              "hybrid: the OpenCL image differs from the CPU's");
    char *js = slurp(stats, NULL);
    CHECK_MSG(stage_number(stats_stage(js, "trace-0"), "kernel_launches") > 0,
              "hybrid.trace did not launch its kernel");
    CHECK_MSG(stage_number(stats_stage(js, "shadow-0"), "kernel_launches") > 0,
              "hybrid.shadow did not launch its kernel");
    free(js);
}

/* A stage whose type has no kernel, placed by its own setting: refused, named. */
static void test_stage_without_kernel_refused(void)
{
    char png[700], graph[700];
    scratch_path(png, sizeof png, "x.png");
    int rc = render_to(png, "teapot", RT " --set primary.device=opencl");
    CHECK_MSG(rc == 1 && strstr(out, "stage 'primary'") && strstr(out, "no OpenCL kernel") &&
              strstr(out, "command line"), "rc %d: %s", rc, out);
    scratch_path(graph, sizeof graph, "place.graph");
    FILE *f = fopen(graph, "w");
    CHECK(f && fputs("[stage primary]\ndevice = opencl\n", f) >= 0);
    if (f) fclose(f);
    rc = render_to(png, "teapot", RT " --graph %s", graph);
    CHECK_MSG(rc == 1 && strstr(out, "place.graph:2: stage 'primary' (type rt.primary)"), "rc %d: %s", rc, out);
    rc = render_to(png, "teapot", RT " --set intersect.device=gpu");
    CHECK_MSG(rc == 1 && strstr(out, "device = gpu") && strstr(out, "cpu, opencl or auto"),
              "rc %d: %s", rc, out);
}

/* The showcase has alpha-tested and blended materials, which the kernels do not do:
 * `opencl` is refused naming the stage and why, `auto` renders the CPU image and says
 * so once (not for every frame). */
static void test_unsupported_scene(void)
{
    char cpu[700], png[700];
    scratch_path(cpu, sizeof cpu, "cpu.png");
    scratch_path(png, sizeof png, "auto.png");
    int rc = render_to(png, "showcase", RT " --set graph.device=opencl");
    CHECK_MSG(rc == 1 && strstr(out, "stage 'intersect-0'") && strstr(out, "hit filter"),
              "rc %d: %s", rc, out);
    rc = render_to(png, "showcase", RT " --set graph.device=auto --frames 2");
    const char *note = strstr(out, "stage 'intersect-0' runs on the CPU (device = auto)");
    CHECK_MSG(rc == 0 && note, "rc %d: %s", rc, out);
    CHECK_MSG(!note || !strstr(note + 1, "stage 'intersect-0' runs on the CPU"),
              "the note comes once, not every frame: %s", out);
    CHECK(render_to(cpu, "showcase", RT) == 0);
    CHECK(same_files(cpu, png));
}

static void test_kernel_build_failure(void)
{
    char png[700];
    scratch_path(png, sizeof png, "x.png");
    int rc = render_to(png, "teapot", RT " --plugin %s --set intersect.type=test.bad-kernel "
                       "--set intersect.device=opencl", plugin);
    CHECK_MSG(rc == 1 && strstr(out, "stage 'intersect-0'") &&
              strstr(out, "tests/plugins/bad_kernel.cl") && strstr(out, "build log") &&
              strstr(out, "error"), "rc %d: %s", rc, out);
}

/* No platform: `opencl` is refused naming where the loader looked; `auto` warns and
 * renders on the CPU. */
static void test_no_platform(void)
{
    char empty[700], cpu[700], png[700];
    scratch_path(empty, sizeof empty, "no-vendors");
    mkdir(empty, 0755);
    scratch_path(cpu, sizeof cpu, "cpu.png");
    scratch_path(png, sizeof png, "auto.png");
    setenv("OCL_ICD_VENDORS", empty, 1);
    int rc = render_to(png, "teapot", RT " --set graph.device=opencl");
    CHECK_MSG(rc == 1 && strstr(out, "no OpenCL platform") && strstr(out, empty), "rc %d: %s", rc, out);
    rc = render_to(png, "teapot", RT " --set graph.device=auto");
    CHECK_MSG(rc == 0 && strstr(out, "warning") && strstr(out, "run on the CPU"), "rc %d: %s", rc, out);
    rc = run("--list-devices");
    CHECK_MSG(rc == 1 && strstr(out, "no OpenCL platform"), "rc %d: %s", rc, out);
    unsetenv("OCL_ICD_VENDORS");
    CHECK(render_to(cpu, "teapot", RT) == 0);
    CHECK(same_files(cpu, png));
}

int main(int argc, char **argv)
{
    (void)argc;
    if (!device_test_start(argv[0], "opencl")) return check_finish();
    snprintf(plugin, sizeof plugin, "%s/tests/plugins/bad_kernel.so", build_dir);
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
