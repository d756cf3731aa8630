/* default_output.h — where gramps-render writes its image when no output is named:
 * SCENE-GRAPH.png in the working directory, named after the scene file (or built-in)
 * and the graph, and never over a file that is already there. */
#ifndef TOOLS_COMMON_DEFAULT_OUTPUT_H
#define TOOLS_COMMON_DEFAULT_OUTPUT_H

#include <stddef.h>

/* "SCENE-GRAPH.png" into name: each the last path component without its extension,
 * characters other than letters, digits, '.', '_' and '-' made '_'. */
void do_default_name(const char *scene, const char *graph, char *name, size_t size);

#endif
