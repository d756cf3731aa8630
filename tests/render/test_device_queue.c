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

#include <unistd.h>

static char build_dir[200];
static char plugin[300];
static char layer[300];

static void tmp_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/tests/device-queue-%s", build_dir, name);
}

static int render(const char *extra, const char *png)
{
    char args[1400];
    snprintf(args, sizeof args, "-q -p raytrace -t 2 --size 48x48 %s -o %s cornell", extra, png);
    return run(args);
}

/* A stage's number field in the stats (0 when absent). */
static unsigned long long field(const char *stage, const char *name)
{
    char key[80];
    snprintf(key, sizeof key, "\"%s\": ", name);
    const char *v = strstr(stage, key);
    const char *end = strchr(stage, '}');
    return v && end && v < end ? strtoull(v + strlen(key), NULL, 10) : 0;
}

/* The bytes every stage moved between host and device; the peak and capacity of the
 * device queues, and whether any stage had one. */
typedef struct moved { unsigned long long bytes; unsigned peak, capacity; bool queue; } moved;

static moved moved_in(const char *stats)
{
    moved m = {0};
    char *js = slurp(stats, NULL);
    for (const char *s = js ? strstr(js, "{\"name\": ") : NULL; s; s = strstr(s + 1, "{\"name\": ")) {
        m.bytes += field(s, "bytes_to_device") + field(s, "bytes_from_device");
        unsigned cap = (unsigned)field(s, "device_queue_capacity");
        if (!cap) continue;
        unsigned peak = (unsigned)field(s, "device_queue_peak");
        m.queue = true;
        if (peak > m.peak) m.peak = peak;
        m.capacity = cap;
    }
    free(js);
    return m;
}

static void write_layer(void)
{
    tmp_path(layer, sizeof layer, "pass.graph");
    FILE *f = fopen(layer, "w");
    CHECK(f && fputs("[stage pass]\ntype = test.ray-pass\nafter = intersect\ndevice = opencl\n", f) >= 0);
    if (f) fclose(f);
}

/* The queue between Intersect and the pass holds 4 packets (the graph's 32 would hold
 * all of cornell's at this size): the pass's input stays on the device up to that, the
 * rest crosses to the host as before. */
static void test_fewer_bytes_same_image(void)
{
    char cpu[300], dev[300], host[300], stats_dev[300], stats_host[300], extra[1200];
    tmp_path(cpu, sizeof cpu, "cpu.png");
    tmp_path(dev, sizeof dev, "dev.png");
    tmp_path(host, sizeof host, "host.png");
    tmp_path(stats_dev, sizeof stats_dev, "dev.json");
    tmp_path(stats_host, sizeof stats_host, "host.json");
    CHECK_MSG(render("", cpu) == 0, "%s", out);
    snprintf(extra, sizeof extra, "--plugin %s --graph %s --set intersect.device=opencl "
             "--set pass-in.capacity=4 --stats %s", plugin, layer, stats_dev);
    CHECK_MSG(render(extra, dev) == 0, "%s", out);
    snprintf(extra, sizeof extra, "--plugin %s --graph %s --set intersect.device=opencl "
             "--set pass-in.capacity=4 --set graph.device_queues=false --stats %s", plugin, layer,
             stats_host);
    CHECK_MSG(render(extra, host) == 0, "%s", out);
    CHECK_MSG(same_files(cpu, dev), "device queue: not the CPU image");
    CHECK_MSG(same_files(cpu, host), "host queue: not the CPU image");
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
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    printf("skip all: PoCL's own threads and allocations are reported by this sanitizer "
           "(they are not instrumented); the plain and UBSan builds run these tests\n");
    return check_finish();
#endif
    find_tool(argv[0], "gramps-render");
    snprintf(build_dir, sizeof build_dir, "%s/../..", dirname(strdup(argv[0])));
    snprintf(plugin, sizeof plugin, "%s/tests/plugins/ray_pass.so", build_dir);
    char cache[700];
    snprintf(cache, sizeof cache, "%s/pocl-cache", build_dir);
    setenv("POCL_CACHE_DIR", cache, 0);
    write_layer();
    RUN(test_fewer_bytes_same_image);
    return check_finish();
}
