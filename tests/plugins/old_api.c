/* old_api.c — a plugin that claims to be built against the previous stage API
 * (CP_API_VERSION - 1), for tests/render/test_plugins.c: programs must refuse it with a
 * message naming the file and both versions, before calling anything in it. */
#include "compose/compose.h"

/* Never called: a refused plugin registers nothing. */
static int register_stages(cp_registry *r, char err[CP_ERR_MAX])
{
    (void)r;
    (void)err;
    return -1;
}

const cp_plugin gramps_plugin = {CP_API_VERSION - 1, "old-api", register_stages};
