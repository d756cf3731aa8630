/* A value beyond one of the renderer's limits (scenes/limits.h, gramps.h) is refused
 * with exit status 2 and a message that names the limit and its value, so a user can
 * find it. Finds the tool beside this test's build dir. */
#include "gramps/gramps.h"
#include "scenes/limits.h"
#include "tests/check.h"
#include "tests/cli.h"

static void refused_naming(const char *args, const char *range)
{
    CHECK_MSG(run(args) == 2 && strstr(out, range), "%s: want exit 2 and \"%s\", got: %s", args,
              range, out);
}

static void test_options_name_their_limits(void)
{
    refused_naming("-q --spp 4097", LIMIT_RANGE(1, PL_MAX_SPP));
    refused_naming("-q --bounces 65", LIMIT_RANGE(0, PL_MAX_BOUNCES));
    refused_naming("-q --size 16385x1", LIMIT_RANGE(1, PL_MAX_IMAGE_SIDE));
    refused_naming("-q -t 1025", LIMIT_RANGE(1, GR_MAX_WORKERS));
    refused_naming("-q --frames 100001", LIMIT_RANGE(1, PL_MAX_FRAMES));
    CHECK(!strcmp(LIMIT_RANGE(1, PL_MAX_SPP), "1..4096 (PL_MAX_SPP)"));
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    RUN(test_options_name_their_limits);
    return check_finish();
}
