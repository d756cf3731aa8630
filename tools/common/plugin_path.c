/* plugin_path.c — the programs' default plugin path (see the header). */
#include "tools/common/plugin_path.h"

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* <directory of the running program>/../plugins (a build tree) and, for an installed
 * copy, ../lib/gramps/plugins, as "a:b"; "" when /proc cannot tell. */
static void beside_program(char out[2 * PATH_MAX + 64])
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    out[0] = 0;
    if (n <= 0) return;
    exe[n] = 0;
    const char *bin = dirname(exe);
    snprintf(out, 2 * PATH_MAX + 64, "%s/../plugins:%s/../lib/gramps/plugins", bin, bin);
}

int tp_plugin_path_default(cp_registry *r, char err[CP_ERR_MAX])
{
    const char *env = getenv("GRAMPS_PLUGIN_PATH");
    if (env && cp_plugin_path_add(r, env, err)) return -1;
    char dir[2 * PATH_MAX + 64];
    beside_program(dir);
    return cp_plugin_path_add(r, dir, err);
}
