/* test_device_counts.c — the device statistics against what the process really asked of
 * OpenCL (docs/opencl.md, Statistics): gramps-render runs with the LD_PRELOAD shim
 * tests/plugins/device_cl_count.so, which counts every clEnqueueNDRangeKernel (the
 * gather kernel's apart) and the bytes of every host write and read, and the stages'
 * kernel_launches and bytes_to_device / bytes_from_device, summed, must equal them.
 * Cornell at 48x48 with every stage that has a kernel on the device: Shade appends its
 * shadow and reflection rays there, so Shadow-Intersect and Intersect gather them before
 * their own kernels; the run must gather (else the comparison would not test the
 * gathers' count), and a launch count that left the gathers out (as ac_run did before)
 * fails. Buffers made from host data (the scene's and BVH's uploads) are not stage
 * traffic and are not compared. One and two workers. */
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/render/device_test.h"

/* What the shim counted. */
typedef struct calls { unsigned long long launches, gathers, to, from, within, created; } calls;

/* The stages' figures, summed. */
typedef struct claimed { unsigned long long launches, to, from; double kernel_ms; } claimed;

static bool calls_in(const char *path, calls *c)
{
    char *text = slurp(path, NULL);
    bool ok = text && sscanf(text, "launches %llu gathers %llu to %llu from %llu within %llu created %llu",
                             &c->launches, &c->gathers, &c->to, &c->from, &c->within, &c->created) == 6;
    free(text);
    return ok;
}

static claimed claimed_in(const char *stats)
{
    claimed c = {0};
    char *js = slurp(stats, NULL);
    CHECK_MSG(js != NULL, "no statistics in %s", stats);
    for (const char *s = next_stage(js, NULL); s; s = next_stage(js, s)) {
        c.launches += stage_number(s, "kernel_launches");
        c.to += stage_number(s, "bytes_to_device");
        c.from += stage_number(s, "bytes_from_device");
        const char *ms = stage_field(s, "kernel_ms");
        if (ms) c.kernel_ms += strtod(ms, NULL);
    }
    free(js);
    return c;
}

static void check_counts(int workers)
{
    char png[700], stats[700], counts[700], name[64], extra[800];
    snprintf(name, sizeof name, "%d.png", workers);
    scratch_path(png, sizeof png, name);
    snprintf(name, sizeof name, "%d.json", workers);
    scratch_path(stats, sizeof stats, name);
    snprintf(name, sizeof name, "%d.calls", workers);
    scratch_path(counts, sizeof counts, name);
    remove(counts);
    snprintf(extra, sizeof extra, "--stats %.700s", stats);
    int rc = render_cornell_counted(workers, extra, png, counts);
    CHECK_MSG(rc == 0, "%d workers: rc %d: %s", workers, rc, out);
    if (rc != 0) return;
    calls c;
    CHECK_MSG(calls_in(counts, &c), "%d workers: the shim wrote no counts to %s (not preloaded?)",
              workers, counts);
    if (!calls_in(counts, &c)) return;
    claimed s = claimed_in(stats);
    printf("%d workers: OpenCL saw %llu launches (%llu gathers), %llu bytes to the device, %llu "
           "from it, %llu within it, %llu in buffers made from host data; the stages claim %llu "
           "launches, %llu and %llu bytes, %.3f kernel ms\n", workers, c.launches, c.gathers, c.to,
           c.from, c.within, c.created, s.launches, s.to, s.from, s.kernel_ms);
    CHECK_MSG(c.gathers > 0 && c.gathers < c.launches, "%d workers: %llu gathers of %llu launches: "
              "the run does not test the gathers' count", workers, c.gathers, c.launches);
    CHECK_MSG(s.launches == c.launches, "%d workers: the stages claim %llu kernel launches, OpenCL "
              "saw %llu (%llu of them gathers)", workers, s.launches, c.launches, c.gathers);
    CHECK_MSG(s.to == c.to && s.from == c.from, "%d workers: the stages claim %llu bytes to the "
              "device and %llu from it, OpenCL saw %llu and %llu", workers, s.to, s.from, c.to, c.from);
    CHECK_MSG(s.kernel_ms > 0, "%d workers: no kernel time", workers);
}

static void test_one_worker(void) { check_counts(1); }
static void test_two_workers(void) { check_counts(2); }

int main(int argc, char **argv)
{
    (void)argc;
    if (!device_test_start(argv[0], "device-counts")) return check_finish();
    RUN(test_one_worker);
    RUN(test_two_workers);
    return check_finish();
}
