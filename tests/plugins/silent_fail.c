/* silent_fail.c — a plugin whose register_stages fails without writing a message, for
 * tests/render/test_plugins.c: the program must say so instead of printing whatever the
 * message buffer held. */
#include "compose/compose.h"

static int register_stages(cp_registry *r, char err[CP_ERR_MAX])
{
    (void)r;
    (void)err;
    return -1;
}

const cp_plugin gramps_plugin = {CP_API_VERSION, "silent-fail", register_stages};
