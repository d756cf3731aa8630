/* test_device_hits.c — with rt.intersect and rt.shade both on the OpenCL device, the
 * `hits` queue between them keeps Intersect's traced rays in device memory
 * (docs/opencl.md, device queues): Intersect copies nothing back, Shade reads those
 * packets within the device (rt.primary's, made on the host, it still uploads), the
 * queue holds at most its capacity there, and the image is the CPU graph's under two
 * schedulers, also with one packet of room in `hits` and `rays`. Cornell at 48x48 (its
 * mirror sends reflection rays through Intersect), PoCL in CI; kernels compiled once
 * into POCL_CACHE_DIR. */
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/render/device_test.h"

static char cpu_png[700];

/* Intersect's and Shade's figures, summed over their copies. */
typedef struct figures {
    unsigned long long intersect_back, shade_in, launches;
    unsigned peak, capacity;
} figures;

static figures figures_in(const char *stats)
{
    figures f = {0};
    char *js = slurp(stats, NULL);
    CHECK_MSG(js != NULL, "no statistics in %s", stats);
    for (const char *s = next_stage(js, NULL); s; s = next_stage(js, s)) {
        if (!strncmp(s, "{\"name\": \"shade-", 16)) f.shade_in += stage_number(s, "bytes_to_device");
        if (strncmp(s, "{\"name\": \"intersect-", 20)) continue;
        unsigned peak = (unsigned)stage_number(s, "device_queue_peak");
        unsigned cap = (unsigned)stage_number(s, "device_queue_capacity");
        CHECK_MSG(peak <= cap, "an Intersect copy held %u packets on the device, capacity %u", peak, cap);
        f.intersect_back += stage_number(s, "bytes_from_device");
        f.launches += stage_number(s, "kernel_launches");
        f.peak += peak;
        f.capacity += cap;
    }
    free(js);
    return f;
}

/* One worker and the graph's capacities: every traced reflection stays on the device
 * (Intersect copies nothing back: a hit sent to the host would cost 80 bytes there and
 * again out to Shade), the hits queue holds some packets there, within its capacity. */
static void test_hits_stay_on_device(void)
{
    char dev[700], stats[700], extra[600];
    scratch_path(dev, sizeof dev, "dev.png");
    scratch_path(stats, sizeof stats, "dev.json");
    snprintf(extra, sizeof extra, "--stats %.500s", stats);
    CHECK_MSG(render_cornell_on_device(1, extra, dev) == 0, "%s", out);
    CHECK_MSG(same_files(cpu_png, dev), "hits on the device: not the CPU image");
    figures d = figures_in(stats);
    CHECK_MSG(d.launches > 0 && d.capacity > 0 && d.peak >= 1, "Intersect: %llu launches, hits "
              "queue peak %u of %u on the device", d.launches, d.peak, d.capacity);
    CHECK_MSG(d.intersect_back == 0, "Intersect copied %llu bytes back to the host", d.intersect_back);
    printf("Intersect's bytes back: %llu; Shade's in: %llu; hits peak %u of %u packets\n",
           d.intersect_back, d.shade_in, d.peak, d.capacity);
}

/* One packet of room in `hits` and `rays` at two workers: packets beyond it cross to
 * the host, and the image does not change whatever the scheduler. */
static void test_tiny_capacity_schedulers(void)
{
    const char *schedulers[] = {"gramps", "qes"};
    for (int i = 0; i < 2; i++) {
        char png[700], stats[700], extra[600];
        scratch_path(png, sizeof png, "tiny.png");
        scratch_path(stats, sizeof stats, "tiny.json");
        snprintf(extra, sizeof extra, "--scheduler %s --set hits.capacity=1 --set rays.capacity=1 "
                 "--stats %.400s", schedulers[i], stats);
        CHECK_MSG(render_cornell_on_device(2, extra, png) == 0, "%s: %s", schedulers[i], out);
        CHECK_MSG(same_files(cpu_png, png), "%s, capacity 1: not the CPU image", schedulers[i]);
        figures f = figures_in(stats);
        CHECK_MSG(f.capacity > 0 && f.peak <= f.capacity, "%s: hits peak %u of %u", schedulers[i],
                  f.peak, f.capacity);
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    if (!device_test_start(argv[0], "device-hits")) return check_finish();
    render_cornell_on_cpu(cpu_png);
    RUN(test_hits_stay_on_device);
    RUN(test_tiny_capacity_schedulers);
    return check_finish();
}
