/* gramps-render --simulate P (docs/many-cores.md): the PNG is byte for byte a real run's
 * for the raster, ray-tracing and hybrid graphs under every scheduler at 1, 4 and 32
 * virtual workers; the statistics and the trace say the times are virtual; bad counts
 * exit 2 naming the flag. Small images: the graphs are the full ones. */
#include "tests/check.h"
#include "tests/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const pipelines[] = {"raster", "raytrace", "hybrid"};
static const char *const scheds[] = {"gramps", "task-stealing", "breadth-first", "static", "qes",
                                     "pss"};
static const unsigned counts[] = {1, 4, 32};

static char dir[64];

static void test_images_match_a_real_run(void)
{
    char args[1024], ref[128], img[128];
    for (int p = 0; p < 3; p++) {
        snprintf(ref, sizeof ref, "%s/%s-real.png", dir, pipelines[p]);
        snprintf(args, sizeof args, "-q -p %s --size 80x60 -t 2 -o %s teapot", pipelines[p], ref);
        CHECK_MSG(run(args) == 0, "%s: %s", args, out);
        for (int s = 0; s < 6; s++)
            for (int k = 0; k < 3; k++) {
                snprintf(img, sizeof img, "%s/%s-%s-%u.png", dir, pipelines[p], scheds[s], counts[k]);
                /* the calibrated cost (one frame more) in test_sim_cost */
                snprintf(args, sizeof args, "-q -p %s --scheduler %s --size 80x60 --simulate %u "
                         "--sim-cost measured -o %s teapot", pipelines[p], scheds[s], counts[k], img);
                CHECK_MSG(run(args) == 0, "%s: %s", args, out);
                CHECK_MSG(same_files(ref, img), "%s under %s at %u virtual workers differs "
                          "from the real run", pipelines[p], scheds[s], counts[k]);
                unlink(img);
            }
        unlink(ref);
    }
}

/* --stats says simulated_workers at both levels; --trace names virtual time. */
static void test_stats_and_trace_say_virtual(void)
{
    char args[512], stats[128], trace[128];
    snprintf(stats, sizeof stats, "%s/s.json", dir);
    snprintf(trace, sizeof trace, "%s/t.json", dir);
    snprintf(args, sizeof args, "-q --size 64x64 --simulate 6 --stats %s --trace %s teapot",
             stats, trace);
    CHECK_MSG(run(args) == 0, "%s: %s", args, out);
    char *s = slurp(stats, NULL), *t = slurp(trace, NULL);
    CHECK(s && t);
    if (s && t) {
        CHECK(strstr(s, "\"simulated_workers\": 6,\n\"") != NULL);    /* the frame's */
        CHECK(strstr(s, "  \"simulated_workers\": 6,") != NULL);      /* the runtime's */
        CHECK(strstr(s, "\"host_ms\"") != NULL && strstr(s, "\"threads\": 6,") != NULL);
        CHECK(strstr(t, "virtual worker 5 (virtual time)") != NULL);
        CHECK(strstr(s, "\"sim_cost\": \"calibrated\"") != NULL);   /* the default */
    }
    free(s);
    free(t);
    unlink(stats);
    unlink(trace);
}

/* --sim-cost: calibrated by a 1-virtual-worker frame (the default from 2 virtual
 * workers) or as measured; the image is the same either way. */
static void test_sim_cost(void)
{
    char args[512], stats[128], a[128], b[128];
    snprintf(stats, sizeof stats, "%s/s.json", dir);
    snprintf(a, sizeof a, "%s/measured.png", dir);
    snprintf(b, sizeof b, "%s/calibrated.png", dir);
    snprintf(args, sizeof args, "-q --size 32x32 --simulate 3 --sim-cost measured --stats %s "
             "-o %s teapot", stats, a);
    CHECK_MSG(run(args) == 0, "%s: %s", args, out);
    char *s = slurp(stats, NULL);
    CHECK(s && strstr(s, "\"sim_cost\": \"measured\""));
    free(s);
    unlink(stats);
    /* one virtual worker is the calibration frame's own configuration */
    snprintf(args, sizeof args, "-q --size 32x32 --simulate 1 --stats %s -o %s teapot", stats, a);
    CHECK_MSG(run(args) == 0, "%s: %s", args, out);
    s = slurp(stats, NULL);
    CHECK(s && strstr(s, "\"sim_cost\": \"measured\""));
    free(s);
    unlink(stats);
    snprintf(args, sizeof args, "-q -p raytrace --size 32x32 --simulate 3 -o %s teapot", b);
    CHECK_MSG(run(args) == 0, "%s: %s", args, out);
    snprintf(args, sizeof args, "-q -p raytrace --size 32x32 --simulate 3 --sim-cost measured "
             "-o %s teapot", a);
    CHECK_MSG(run(args) == 0, "%s: %s", args, out);
    CHECK(same_files(a, b));
    unlink(a);
    unlink(b);
    CHECK(run("-q --size 16x16 --simulate 2 --sim-cost cheap teapot") == 2);
    CHECK_MSG(strstr(out, "--sim-cost") && strstr(out, "calibrated or measured"), "%s", out);
}

/* Stage `name`'s task count in a --stats file's text; -1 when it is not there. */
static long stage_tasks(const char *stats, const char *name)
{
    char key[96];
    snprintf(key, sizeof key, "\"name\": \"%s\",", name);
    const char *stages = stats ? strstr(stats, "\"stages\": [") : NULL;   /* not the queues' */
    const char *at = stages ? strstr(stages, key) : NULL;
    const char *tasks = at ? strstr(at, "\"tasks\": ") : NULL;
    long n = -1;
    if (tasks && sscanf(tasks + 9, "%ld", &n) != 1) n = -1;
    return n;
}

/* Every worker starts with one copy of each replicated stage (launch.c start_instances).
 * With both IA copies on one worker and both Bins on the other, Task-Stealing at 2
 * virtual workers never reached the IA under the other one's continuation, and one IA
 * took every batch, in 3 of 4 runs of this configuration. */
static void test_every_ia_copy_takes_batches(void)
{
    char args[512], stats[128], img[128];
    snprintf(stats, sizeof stats, "%s/ia.json", dir);
    snprintf(img, sizeof img, "%s/ia.png", dir);
    for (int run_no = 0; run_no < 6; run_no++) {
        snprintf(args, sizeof args, "-q -p raster --scheduler task-stealing --simulate 2 "
                 "--sim-cost measured --size 256x256 --stats %s -o %s teapot", stats, img);
        CHECK_MSG(run(args) == 0, "%s: %s", args, out);
        char *s = slurp(stats, NULL);
        const long a = stage_tasks(s, "ia-0"), b = stage_tasks(s, "ia-1");
        CHECK_MSG(a > 0 && b > 0 && a >= (a + b) / 5 && b >= (a + b) / 5,
                  "run %d: the IA copies ran %ld and %ld tasks", run_no, a, b);
        free(s);
    }
    unlink(stats);
    unlink(img);
}

static void test_bad_counts(void)
{
    static const char *bad[] = {"0", "100000", "1025", "-3", "four", ""};
    char args[256];
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(args, sizeof args, "-q --size 16x16 --simulate '%s' teapot", bad[i]);
        CHECK_MSG(run(args) == 2, "--simulate '%s' was not refused: %s", bad[i], out);
        CHECK_MSG(strstr(out, "--simulate") != NULL, "the message names no flag: %s", out);
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    snprintf(dir, sizeof dir, "/tmp/test_simulate.XXXXXX");
    if (!mkdtemp(dir)) return 1;
    RUN(test_images_match_a_real_run);
    RUN(test_stats_and_trace_say_virtual);
    RUN(test_sim_cost);
    RUN(test_every_ia_copy_takes_batches);
    RUN(test_bad_counts);
    rmdir(dir);
    return check_finish();
}
