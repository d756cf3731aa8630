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
 * traffic and are not compared. The stages' kernel_ms must be the device time the shim
 * read from each launch's profiling event, summed (all stages, and Shade's alone against
 * rt_shade's), within TIME_TOLERANCE plus the statistics' rounding, and at most the
 * host time from each launch's enqueue to the clFinish that waited for it: a kernel_ms
 * that left the gathers out, counted from the command's queuing, or was off in its units
 * fails. One and two workers. */
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/render/device_test.h"

#include <math.h>

/* What the shim counted. */
typedef struct calls { unsigned long long launches, gathers, to, from, within, created; } calls;

/* The stages' figures, summed (and Shade's kernel time alone). */
typedef struct claimed { unsigned long long launches, to, from; double kernel_ms, shade_ms; int timed; } claimed;

/* The device time the shim measured: every kernel's, rt_shade's, and the launches' host
 * windows (enqueue to the clFinish that waited), in ms; launches it could not time. */
typedef struct measured { double kernel_ms, shade_ms, window_ms; unsigned long long unfinished; } measured;

/* kernel_ms against the shim's device time: equal but for 0.1% and the statistics'
 * rounding (%.3f ms, half a microsecond a stage). */
#define TIME_TOLERANCE 0.001
#define ROUNDING_MS 0.0005

static bool calls_in(const char *path, calls *c)
{
    char *text = slurp(path, NULL);
    bool ok = text && sscanf(text, "launches %llu gathers %llu to %llu from %llu within %llu created %llu",
                             &c->launches, &c->gathers, &c->to, &c->from, &c->within, &c->created) == 6;
    free(text);
    return ok;
}

static bool measured_in(const char *path, measured *m)
{
    char *text = slurp(path, NULL), name[64];
    unsigned long long ns, window = 0;
    *m = (measured){0};
    const char *line = text ? strstr(text, "kernel_ns ") : NULL;
    for (; line && sscanf(line, "kernel_ns %63s %llu", name, &ns) == 2; line = strstr(line + 1, "kernel_ns ")) {
        m->kernel_ms += (double)ns / 1e6;
        if (!strcmp(name, "rt_shade")) m->shade_ms += (double)ns / 1e6;
    }
    const char *w = text ? strstr(text, "window_ns ") : NULL;
    bool ok = w && sscanf(w, "window_ns %llu unfinished %llu", &window, &m->unfinished) == 2;
    m->window_ms = (double)window / 1e6;
    free(text);
    return ok;
}

/* Whether the statistics' `claimed` ms (over `stages` stages) is the shim's `ms`. */
static bool same_time(double claimed_ms, double ms, int stages)
{
    return fabs(claimed_ms - ms) <= TIME_TOLERANCE * ms + ROUNDING_MS * stages;
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
        if (!ms) continue;
        char name[64] = "";
        stage_string(s, "name", name, sizeof name);
        c.kernel_ms += strtod(ms, NULL);
        if (!strncmp(name, "shade-", 6)) c.shade_ms += strtod(ms, NULL);
        c.timed++;
    }
    free(js);
    return c;
}

/* The stages' kernel_ms against the device time the shim measured. */
static void check_kernel_time(int workers, const claimed *s, const char *counts)
{
    measured m;
    CHECK_MSG(measured_in(counts, &m), "%d workers: the shim wrote no kernel times", workers);
    printf("%d workers: kernel_ms %.3f (Shade %.3f), the shim's device time %.3f ms (rt_shade "
           "%.3f), launch windows %.3f ms\n", workers, s->kernel_ms, s->shade_ms, m.kernel_ms,
           m.shade_ms, m.window_ms);
    CHECK_MSG(m.unfinished == 0, "%d workers: %llu launches no clFinish waited for", workers,
              m.unfinished);
    CHECK_MSG(m.kernel_ms > 0 && m.shade_ms > 0, "%d workers: the shim measured no device time",
              workers);
    CHECK_MSG(same_time(s->kernel_ms, m.kernel_ms, s->timed), "%d workers: the stages claim %.3f "
              "kernel ms, the launches' events say %.3f", workers, s->kernel_ms, m.kernel_ms);
    CHECK_MSG(same_time(s->shade_ms, m.shade_ms, workers), "%d workers: Shade claims %.3f kernel "
              "ms, rt_shade's events say %.3f", workers, s->shade_ms, m.shade_ms);
    CHECK_MSG(m.kernel_ms <= m.window_ms && s->kernel_ms <= m.window_ms + ROUNDING_MS * s->timed,
              "%d workers: kernel time %.3f ms (the stages claim %.3f) outside the launches' "
              "windows, %.3f ms", workers, m.kernel_ms, s->kernel_ms, m.window_ms);
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
    check_kernel_time(workers, &s, counts);
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
