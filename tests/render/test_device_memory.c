/* test_device_memory.c — device memory is checked before the run, as --max-memory checks
 * host memory (docs/opencl.md): with GRAMPS_OPENCL_MAX_MEMORY below what the ray
 * tracer's Intersect on the device needs (the scene's BVH, then a batch's launch buffers),
 * `device = opencl` is refused with a message naming the limit and the stage, no image
 * is written and the run does not start; `device = auto` runs the stage on the CPU
 * instead, with a note; a value that is not a size is refused naming the variable.
 * PoCL in CI. */
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/render/device_test.h"

#include <unistd.h>

static char png[700];

/* Cornell with Intersect on `device`, under GRAMPS_OPENCL_MAX_MEMORY=limit. */
static int render_as(const char *limit, const char *device)
{
    setenv("GRAMPS_OPENCL_MAX_MEMORY", limit, 1);
    unlink(png);
    int rc = render_to(png, "cornell", "-p raytrace -t 2 --size 32x32 --set intersect.device=%s",
                       device);
    unsetenv("GRAMPS_OPENCL_MAX_MEMORY");
    return rc;
}

static int render_with(const char *limit) { return render_as(limit, "opencl"); }

/* 1 KiB: the BVH does not fit. */
static void test_bvh_refused(void)
{
    int rc = render_with("1K");
    CHECK_MSG(rc == 1 && strstr(out, "stage 'intersect-0'") && strstr(out, "BVH") &&
              strstr(out, "out of device memory") && strstr(out, "GRAMPS_OPENCL_MAX_MEMORY=1K"),
              "rc %d: %s", rc, out);
    CHECK_MSG(access(png, F_OK) != 0, "an image was written");
}

/* 200 KiB: the BVH fits, a batch's launch buffers (32 packets of 64 rays) do not. */
static void test_launch_buffers_refused(void)
{
    int rc = render_with("200K");
    CHECK_MSG(rc == 1 && strstr(out, "cannot run on the device") &&
              strstr(out, "out of device memory") && strstr(out, "launch") &&
              strstr(out, "GRAMPS_OPENCL_MAX_MEMORY=200K"), "rc %d: %s", rc, out);
    CHECK_MSG(access(png, F_OK) != 0, "an image was written");
}

/* Under `auto` the stage runs on the CPU instead, with a note saying why. */
static void test_auto_falls_back(void)
{
    int rc = render_as("1K", "auto");
    CHECK_MSG(rc == 0 && strstr(out, "stage 'intersect-0' runs on the CPU (device = auto)") &&
              strstr(out, "out of device memory"), "rc %d: %s", rc, out);
    CHECK_MSG(access(png, F_OK) == 0, "no image");
}

static void test_bad_value(void)
{
    int rc = render_with("12x");
    CHECK_MSG(rc == 1 && strstr(out, "GRAMPS_OPENCL_MAX_MEMORY=12x") && strstr(out, "size"),
              "rc %d: %s", rc, out);
}

int main(int argc, char **argv)
{
    (void)argc;
    if (!device_test_start(argv[0], "device-memory")) return check_finish();
    scratch_path(png, sizeof png, "out.png");
    RUN(test_bvh_refused);
    RUN(test_launch_buffers_refused);
    RUN(test_auto_falls_back);
    RUN(test_bad_value);
    return check_finish();
}
