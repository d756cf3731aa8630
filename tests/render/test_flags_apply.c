/* Renderer flags that do not apply to the graph chosen (--spp, --bounces, --no-coarse-z
 * on a graph without that [graph] setting; --parallel-rast on anything but -p raster)
 * are a warning naming the flag and the graph, and with --strict an error (exit 2);
 * where they apply nothing is said. */
#include "tests/check.h"
#include "tests/cli.h"

/* Runs with a 16x16 image written nowhere. */
static int render(const char *flags)
{
    char args[512];
    snprintf(args, sizeof args, "-q --size 16x16 -t 2 -o /dev/null %s", flags);
    return run(args);
}

static void test_warning_names_flag_and_graph(void)
{
    CHECK(render("--spp 4 --bounces 2") == 0 && strstr(out, "warning") &&
          strstr(out, "--spp") && strstr(out, "--bounces") && strstr(out, "'raster'"));
    CHECK(render("-p raytrace --parallel-rast --no-coarse-z") == 0 &&
          strstr(out, "--parallel-rast") && strstr(out, "--no-coarse-z") &&
          strstr(out, "'raytrace'") && strstr(out, "-p raster only"));
    CHECK(render("-p raster --no-coarse-z") == 0 && strstr(out, "--no-coarse-z"));
}

static void test_strict_is_an_error(void)
{
    CHECK(render("--strict --spp 4") == 2 && strstr(out, "error") && strstr(out, "--spp") &&
          strstr(out, "'raster'") && !strstr(out, "warning"));
    CHECK(render("--strict --parallel-rast -p hybrid") == 2 && strstr(out, "--parallel-rast"));
}

static void test_silent_where_flags_apply(void)
{
    CHECK_MSG(render("--strict -p raytrace --spp 2 --bounces 2 cornell") == 0 && !*out, "%s", out);
    CHECK_MSG(render("--strict -p hybrid --spp 2 --bounces 0 cornell") == 0 && !*out, "%s", out);
    CHECK_MSG(render("--strict -p raster-ordered --no-coarse-z") == 0 && !*out, "%s", out);
    CHECK_MSG(render("--strict --parallel-rast --no-coarse-z") == 0 && !*out, "%s", out);
    CHECK_MSG(render("--strict --graph examples/graphs/raytrace-ao.graph --spp 2 cornell") == 0 &&
              !*out, "%s", out);
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    RUN(test_warning_names_flag_and_graph);
    RUN(test_strict_is_an_error);
    RUN(test_silent_where_flags_apply);
    return check_finish();
}
