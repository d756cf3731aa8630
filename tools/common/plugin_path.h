/* plugin_path.h — where the command-line programs look for plugins named without a
 * directory (`--plugin fog.so`, a graph file's `plugins = fog.so`): the directories of
 * GRAMPS_PLUGIN_PATH (':'-separated), then the plugins/ directory beside the program's
 * bin/ directory, which is where `make` puts the examples/plugins sources built ($(BUILD)/plugins for
 * $(BUILD)/bin/PROGRAM, also in sanitizer builds), then ../lib/gramps/plugins from bin/,
 * where `make install` puts them. */
#ifndef TOOLS_COMMON_PLUGIN_PATH_H
#define TOOLS_COMMON_PLUGIN_PATH_H

#include "compose/compose.h"

/* Adds those directories to r's plugin path; 0, or -1 with a message in err. */
int tp_plugin_path_default(cp_registry *r, char err[CP_ERR_MAX]);

#endif
