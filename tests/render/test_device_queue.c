/* test_device_queue.c — a queue between two stages on the OpenCL device keeps its
 * packets' elements in device memory (docs/opencl.md, device queues): rt.intersect
 * followed by test.ray-pass (tests/plugins/ray_pass.c, a kernel that forwards its rays)
 * moves fewer bytes between host and device than with `[graph] device_queues = false`,
 * holds at most the queue's capacity on the device (packets beyond it cross to the
 * host), and renders the CPU graph's image. Cornell at 48x48 (its mirror sends
 * reflection rays through Intersect), PoCL in CI: most of each device run's 1.2 s of CPU
 * time is PoCL's start. */
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/render/device_test.h"

/* The ray tracer at 48x48 with two workers; a test adds its own options. */
#define RT "-p raytrace -t 1 --size 48x48"

static char plugin[600];
static char layer[600];

/* The bytes every stage moved between host and device; the peak and capacity of the
 * device queues, and whether any stage had one. */
typedef struct moved { unsigned long long bytes; unsigned peak, capacity; bool queue; } moved;

static moved moved_in(const char *stats)
{
    moved m = {0};
    char *js = slurp(stats, NULL);
    for (const char *s = next_stage(js, NULL); s; s = next_stage(js, s)) {
        m.bytes += stage_number(s, "bytes_to_device") + stage_number(s, "bytes_from_device");
        unsigned cap = (unsigned)stage_number(s, "device_queue_capacity");
        if (!cap) continue;
        unsigned peak = (unsigned)stage_number(s, "device_queue_peak");
        m.queue = true;
        if (peak > m.peak) m.peak = peak;
        m.capacity = cap;
    }
    free(js);
    return m;
}

static void write_layer(void)
{
    scratch_path(layer, sizeof layer, "pass.graph");
    FILE *f = fopen(layer, "w");
    CHECK(f && fputs("[stage pass]\ntype = test.ray-pass\nafter = intersect\ndevice = opencl\n", f) >= 0);
    if (f) fclose(f);
}

/* The queue between Intersect and the pass holds 4 packets (the graph's 32 would hold
 * all of cornell's at this size): the pass's input stays on the device up to that, the
 * rest crosses to the host as before. One worker (RT): with two, the bytes moved depend
 * on when the pass drained the queue (device queue 153,920-165,280 bytes, host queues
 * 168,800-235,360 in six runs; once the device's exceeded the host's). */
static void test_fewer_bytes_same_image(void)
{
    char stats_dev[700], stats_host[700], on_device[1400], on_host[1500];
    snprintf(on_device, sizeof on_device, "--plugin %s --graph %s --set intersect.device=opencl "
             "--set pass-in.capacity=4", plugin, layer);
    CHECK_MSG(same_image_as_cpu("cornell", RT, on_device, "dev", stats_dev),
              "device queue: not the CPU image");
    snprintf(on_host, sizeof on_host, "%s --set graph.device_queues=false", on_device);
    CHECK_MSG(same_image_as_cpu("cornell", RT, on_host, "host", stats_host),
              "host queue: not the CPU image");
    moved d = moved_in(stats_dev), h = moved_in(stats_host);
    CHECK_MSG(d.queue && !h.queue, "device queue reported: %d, with device_queues = false: %d",
              d.queue, h.queue);
    CHECK_MSG(d.bytes > 0 && d.bytes < h.bytes, "bytes moved: %llu on the device queue, %llu on "
              "the host", d.bytes, h.bytes);
    CHECK_MSG(d.peak >= 1 && d.peak <= d.capacity && d.capacity == 4, "peak %u of %u packets",
              d.peak, d.capacity);
    printf("bytes between host and device: %llu with the device queue, %llu without; peak %u "
           "of %u packets\n", d.bytes, h.bytes, d.peak, d.capacity);
}

int main(int argc, char **argv)
{
    (void)argc;
    if (!device_test_start(argv[0], "device-queue")) return check_finish();
    snprintf(plugin, sizeof plugin, "%s/tests/plugins/ray_pass.so", build_dir);
    write_layer();
    RUN(test_fewer_bytes_same_image);
    return check_finish();
}
