/* test_device_placement.c — `device = auto` as PTask places (docs/opencl.md, placement):
 * a stage type's first run goes to the device, its second to the CPU, later ones to the
 * side measured faster per task (within 10%: where its input is), each stage's
 * statistics saying where and why; the image is the CPU graph's whatever the choice.
 * Cornell at 32x32 through the ray tracer, PoCL in CI. */
#include "tests/check.h"
#include "tests/cli.h"

static char build_dir[200];

static void tmp_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/tests/device-placement-%s", build_dir, name);
}

/* Stage intersect-0's entry in the stats: its device and placement. */
static bool intersect_of(const char *stats, char *device, size_t dn, char *why, size_t wn)
{
    char *js = slurp(stats, NULL);
    const char *s = js ? strstr(js, "{\"name\": \"intersect-0\"") : NULL;
    const char *d = s ? strstr(s, "\"device\": \"") : NULL;
    const char *p = s ? strstr(s, "\"placement\": \"") : NULL;
    bool ok = d && p && p < strchr(s, '}');
    if (ok) {
        snprintf(device, dn, "%.*s", (int)strcspn(d + 11, "\""), d + 11);
        snprintf(why, wn, "%.*s", (int)strcspn(p + 14, "\""), p + 14);
    }
    free(js);
    return ok;
}

static int render(const char *frames, const char *stats, const char *png)
{
    char args[900];
    snprintf(args, sizeof args, "-q -p raytrace -t 2 --size 32x32 --set graph.device=auto %s "
             "--stats %s -o %s cornell", frames, stats, png);
    return run(args);
}

static void test_calibration_then_measured(void)
{
    char cpu[300], png[300], stats[300], args[900], device[32], why[300];
    tmp_path(cpu, sizeof cpu, "cpu.png");
    tmp_path(png, sizeof png, "auto.png");
    tmp_path(stats, sizeof stats, "auto.json");
    snprintf(args, sizeof args, "-q -p raytrace -t 2 --size 32x32 -o %s cornell", cpu);
    CHECK_MSG(run(args) == 0, "%s", out);
    /* A warm-up and two frames: the device, the CPU, then the faster side, with both
     * times (each is there only if a run was on that side). */
    CHECK_MSG(render("--frames 2", stats, png) == 0, "%s", out);
    CHECK(same_files(cpu, png));
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
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    printf("skip all: PoCL's own threads and allocations are reported by this sanitizer "
           "(they are not instrumented); the plain and UBSan builds run these tests\n");
    return check_finish();
#endif
    find_tool(argv[0], "gramps-render");
    snprintf(build_dir, sizeof build_dir, "%s/../..", dirname(strdup(argv[0])));
    char cache[300];
    snprintf(cache, sizeof cache, "%s/pocl-cache", build_dir);
    setenv("POCL_CACHE_DIR", cache, 0);
    RUN(test_calibration_then_measured);
    return check_finish();
}
