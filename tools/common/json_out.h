/* json_out.h — strings in the JSON the tools write (statistics files): the one place
 * outside the runtime (gramps/stats.c has its own, as the runtime cannot depend on
 * tools/) that turns a C string into a JSON string. */
#ifndef TOOLS_JSON_OUT_H
#define TOOLS_JSON_OUT_H

#include <stdio.h>

/* Writes s quoted: '"' and '\' backslash-escaped, control characters as \u00XX,
 * every other byte (UTF-8 included) as it is. */
void io_json_string(FILE *out, const char *s);

#endif
