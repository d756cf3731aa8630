/* test_device_append.c — rt.shade on the OpenCL device appends its shadow and mirror
 * rays to their queues' device memory when rt.shadow and rt.intersect run there too
 * (docs/opencl.md, appends): fewer bytes cross between host and device than with
 * `[graph] device_queues = false`, the queues hold at most their capacity (a capacity
 * of one packet still finishes: the host makes what does not fit), and the image is the
 * CPU graph's under three schedulers. Cornell at 48x48 (its mirror sends reflection
 * rays back to Intersect), PoCL in CI; kernels compiled once into POCL_CACHE_DIR. */
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/render/device_test.h"

static char cpu_png[700];

/* The bytes every stage moved, the shadow stages' uploads, and Shade's device queues
 * (peak and capacity summed over its copies' appends). */
typedef struct moved { unsigned long long bytes, shadow_in; unsigned peak, capacity; } moved;

static moved moved_in(const char *stats)
{
    moved m = {0};
    char *js = slurp(stats, NULL);
    CHECK_MSG(js != NULL, "no statistics in %s", stats);
    for (const char *s = next_stage(js, NULL); s; s = next_stage(js, s)) {
        m.bytes += stage_number(s, "bytes_to_device") + stage_number(s, "bytes_from_device");
        if (!strncmp(s, "{\"name\": \"shadow-intersect", 26))
            m.shadow_in += stage_number(s, "bytes_to_device");
        if (strncmp(s, "{\"name\": \"shade-", 16)) continue;
        unsigned peak = (unsigned)stage_number(s, "device_queue_peak");
        unsigned cap = (unsigned)stage_number(s, "device_queue_capacity");
        CHECK_MSG(peak <= cap, "a Shade copy held %u packets on the device, capacity %u", peak, cap);
        m.peak += peak;
        m.capacity += cap;
    }
    free(js);
    return m;
}

/* One worker: with two, how many rays fit in the device queues (and so the bytes moved)
 * depends on which worker drained them when (host queues alone: 168,800 to 235,360
 * bytes a run in the device-queue test). */
static void test_fewer_bytes_same_image(void)
{
    char dev[700], host[700], stats_dev[700], stats_host[700], extra[600];
    scratch_path(dev, sizeof dev, "dev.png");
    scratch_path(host, sizeof host, "host.png");
    scratch_path(stats_dev, sizeof stats_dev, "dev.json");
    scratch_path(stats_host, sizeof stats_host, "host.json");
    snprintf(extra, sizeof extra, "--stats %.500s", stats_dev);
    CHECK_MSG(render_cornell_on_device(1, extra, dev) == 0, "%s", out);
    snprintf(extra, sizeof extra, "--set graph.device_queues=false --stats %.500s", stats_host);
    CHECK_MSG(render_cornell_on_device(1, extra, host) == 0, "%s", out);
    CHECK_MSG(same_files(cpu_png, dev), "appends on the device: not the CPU image");
    CHECK_MSG(same_files(cpu_png, host), "queues on the host: not the CPU image");
    moved d = moved_in(stats_dev), h = moved_in(stats_host);
    CHECK_MSG(d.capacity > 0 && d.peak >= 1 && h.capacity == 0, "Shade's device queues: peak %u of "
              "%u; with device_queues = false: capacity %u", d.peak, d.capacity, h.capacity);
    CHECK_MSG(d.bytes > 0 && d.bytes < h.bytes && d.shadow_in < h.shadow_in, "bytes moved: %llu "
              "(shadow rays in: %llu) with appends, %llu (%llu) on the host", d.bytes, d.shadow_in,
              h.bytes, h.shadow_in);
    printf("bytes between host and device: %llu with appends, %llu without (shadow rays to the "
           "device: %llu against %llu); peak %u of %u packets\n", d.bytes, h.bytes, d.shadow_in,
           h.shadow_in, d.peak, d.capacity);
}

/* One packet's room in each queue Shade pushes to: most rays are made on the host, the
 * run finishes, and the image is the same whatever the scheduler. */
static void test_tiny_capacity_schedulers(void)
{
    const char *schedulers[] = {"gramps", "task-stealing", "static"};
    for (int i = 0; i < 3; i++) {
        char png[700], stats[700], extra[600];
        scratch_path(png, sizeof png, "tiny.png");
        scratch_path(stats, sizeof stats, "tiny.json");
        snprintf(extra, sizeof extra, "--scheduler %s --set shadow-rays.capacity=1 --set rays.capacity=1 "
                 "--stats %.400s", schedulers[i], stats);
        CHECK_MSG(render_cornell_on_device(2, extra, png) == 0, "%s: %s", schedulers[i], out);
        CHECK_MSG(same_files(cpu_png, png), "%s, capacity 1: not the CPU image", schedulers[i]);
        moved m = moved_in(stats);
        CHECK_MSG(m.capacity > 0 && m.peak <= m.capacity, "%s: peak %u of %u", schedulers[i], m.peak,
                  m.capacity);
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    if (!device_test_start(argv[0], "device-append")) return check_finish();
    render_cornell_on_cpu(cpu_png);
    RUN(test_fewer_bytes_same_image);
    RUN(test_tiny_capacity_schedulers);
    return check_finish();
}
