/* test_device_placement.c — `device = auto` as PTask places (docs/opencl.md, placement):
 * a stage type's first run goes to the device, its second to the CPU, later ones to the
 * side measured faster per task (within 10%: where its input is), each stage's
 * statistics saying where and why; the image is the CPU graph's whatever the choice.
 * Cornell at 32x32 through the ray tracer, PoCL in CI. */
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/render/device_test.h"

/* Stage intersect-0's entry in the stats: its device and placement. */
static bool intersect_of(const char *stats, char *device, size_t dn, char *why, size_t wn)
{
    char *js = slurp(stats, NULL);
    const char *s = stats_stage(js, "intersect-0");
    bool ok = stage_string(s, "device", device, dn) && stage_string(s, "placement", why, wn);
    free(js);
    return ok;
}

static void test_calibration_then_measured(void)
{
    char stats[700], device[32] = "", why[300] = "";
    /* A warm-up and two frames: the device, the CPU, then the faster side, with both
     * times (each is there only if a run was on that side). */
    CHECK(same_image_as_cpu("cornell", "-p raytrace -t 2 --size 32x32",
                            "--set graph.device=auto --frames 2", "auto", stats));
    double dev = -1, host = -1;
    CHECK_MSG(intersect_of(stats, device, sizeof device, why, sizeof why) &&
              sscanf(why, "auto: %lf ms a task on the device, %lf on the CPU", &dev, &host) == 2,
              "three runs: %s, %s", device, why);
    bool close = dev <= host * 1.1 && host <= dev * 1.1;
    CHECK_MSG(close || !strcmp(device, dev < host ? "opencl" : "cpu"), "%s: on %s", why, device);
    printf("after calibration: %s (%s)\n", device, why);
}

int main(int argc, char **argv)
{
    (void)argc;
    if (!device_test_start(argv[0], "device-placement")) return check_finish();
    RUN(test_calibration_then_measured);
    return check_finish();
}
