/* plugin_path.c — the programs' default plugin path (see the header). */
#include "tools/common/plugin_path.h"

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* <directory of the running program>/../plugins, or "" when /proc cannot tell. */
static void beside_program(char out[PATH_MAX + 16])
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    out[0] = 0;
    if (n <= 0) return;
    exe[n] = 0;
    snprintf(out, PATH_MAX + 16, "%s/../plugins", dirname(exe));
}

int tp_plugin_path_default(cp_registry *r, char err[CP_ERR_MAX])
{
    const char *env = getenv("GRAMPS_PLUGIN_PATH");
    if (env && cp_plugin_path_add(r, env, err)) return -1;
    char dir[PATH_MAX + 16];
    beside_program(dir);
    return cp_plugin_path_add(r, dir, err);
}
