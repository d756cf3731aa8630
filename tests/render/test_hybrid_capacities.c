/* The Extended Direct3D graph's queue capacities (pipelines/graphs/hybrid.graph), chosen
 * by the thesis' 4.6.2 tuning experiment (docs/footprint.md):
 *
 * - the defaults are what the experiment chose: `primitives` PRIMITIVES_CAPACITY packets
 *   per IA/VS group, `rays` and `traced` RAYS_CAPACITY per copy (the statistics' queue
 *   table, as a user reads it with --stats);
 * - a capacity trades footprint against time only: the old defaults (8 and 32) and the
 *   smallest the experiment ran (2) give the same bytes as the new ones. */
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/scratch_dir.h"

#include <unistd.h>

#define PRIMITIVES_CAPACITY 4
#define RAYS_CAPACITY 8

static char dir[] = "/tmp/gramps-hybcap-XXXXXX";

/* Queue `name`'s capacity in a --stats file's text (-1: absent). */
static long queue_capacity(const char *stats, const char *name)
{
    char key[128];
    snprintf(key, sizeof key, "\"name\": \"%s\", \"capacity\": ", name);
    const char *p = stats ? strstr(stats, key) : NULL;
    return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static void test_defaults_are_the_tuned_ones(void)
{
    char args[512], stats[256];
    snprintf(stats, sizeof stats, "%s/s.json", dir);
    snprintf(args, sizeof args, "-q -t 2 --size 48x48 -p hybrid --stats %s -o %s/d.png teapot", stats, dir);
    CHECK_MSG(run(args) == 0, "%s", out);
    char *s = slurp(stats, NULL);
    CHECK_MSG(queue_capacity(s, "primitives-0") == PRIMITIVES_CAPACITY, "primitives: %ld",
              queue_capacity(s, "primitives-0"));
    CHECK_MSG(queue_capacity(s, "rays-0") == RAYS_CAPACITY, "rays: %ld", queue_capacity(s, "rays-0"));
    CHECK_MSG(queue_capacity(s, "traced-0") == RAYS_CAPACITY, "traced: %ld", queue_capacity(s, "traced-0"));
    free(s);
}

static void test_capacities_keep_the_image(void)
{
    static const char *const settings[] = {
        "--set primitives.capacity=8 --set rays.capacity=32 --set traced.capacity=32",
        "--set primitives.capacity=2 --set rays.capacity=2 --set traced.capacity=2"};
    char args[512], png[256], ref[256];
    snprintf(ref, sizeof ref, "%s/ref.png", dir);
    snprintf(args, sizeof args, "-q -t 2 --size 48x48 -p hybrid --bounces 2 -o %s teapot", ref);
    CHECK_MSG(run(args) == 0, "%s", out);
    for (size_t i = 0; i < sizeof settings / sizeof *settings; i++) {
        snprintf(png, sizeof png, "%s/c%zu.png", dir, i);
        snprintf(args, sizeof args, "-q -t 2 --size 48x48 -p hybrid --bounces 2 %s -o %s teapot",
                 settings[i], png);
        CHECK_MSG(run(args) == 0, "%s: %s", settings[i], out);
        CHECK_MSG(same_files(ref, png), "%s: another image", settings[i]);
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    if (!mkdtemp(dir)) return 1;
    RUN(test_defaults_are_the_tuned_ones);
    RUN(test_capacities_keep_the_image);
    scratch_dir_remove(dir);
    return check_finish();
}
