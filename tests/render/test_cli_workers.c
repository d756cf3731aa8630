/* A graph's $workers (through $default_groups: one copy of the per-group stages per
 * worker, at most 16) is the run's real worker count when GRAMPS_NUM_THREADS sets it:
 * gramps-render's statistics report that many threads and that many copies. Finds the
 * tool beside this test's build dir. */
#include "tests/check.h"
#include "tests/cli.h"

#include <unistd.h>

/* A worker count that is not the CPU count, so a graph that asked the CPUs shows. */
static unsigned other_than_cpus(void)
{
    return sysconf(_SC_NPROCESSORS_ONLN) == 3 ? 5 : 3;
}

/* Whether the statistics name stage `name`. */
static bool has_stage(const char *stats, const char *name)
{
    char want[96];
    snprintf(want, sizeof want, "\"name\": \"%s\"", name);
    return strstr(stats, want) != NULL;
}

static void check_copies(const char *pipeline, const char *stage)
{
    unsigned n = other_than_cpus();
    char env[16], json[] = "/tmp/gramps-cli-workers-XXXXXX", png[64], args[512], name[64], want[64];
    int fd = mkstemp(json);
    if (fd < 0) { CHECK(0); return; }
    close(fd);
    snprintf(png, sizeof png, "%s.png", json);
    snprintf(env, sizeof env, "%u", n);
    setenv("GRAMPS_NUM_THREADS", env, 1);
    snprintf(args, sizeof args, "-q -p %s --size 64x64 --stats %s -o %s teapot", pipeline, json, png);
    CHECK_MSG(run(args) == 0, "%s: %s", pipeline, out);
    unsetenv("GRAMPS_NUM_THREADS");
    char *stats = slurp(json, NULL);
    snprintf(want, sizeof want, "\"threads\": %u,", n);
    CHECK_MSG(stats && strstr(stats, want), "%s: the run did not have %u workers", pipeline, n);
    snprintf(name, sizeof name, "%s-%u", stage, n - 1);
    CHECK_MSG(stats && has_stage(stats, name), "%s: no stage %s: $workers was not %u", pipeline, name, n);
    snprintf(name, sizeof name, "%s-%u", stage, n);
    CHECK_MSG(stats && !has_stage(stats, name), "%s: stage %s: $workers was above %u", pipeline, name, n);
    free(stats);
    unlink(json);
    unlink(png);
}

static void test_raster_groups_follow_environment(void) { check_copies("raster", "vs"); }
static void test_raytrace_groups_follow_environment(void) { check_copies("raytrace", "shade"); }

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    RUN(test_raster_groups_follow_environment);
    RUN(test_raytrace_groups_follow_environment);
    return check_finish();
}
