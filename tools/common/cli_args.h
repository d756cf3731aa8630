/* cli_args.h — parsing the command-line values the project's programs share. */
#ifndef TOOLS_COMMON_CLI_ARGS_H
#define TOOLS_COMMON_CLI_ARGS_H

#include <stdbool.h>

/* A decimal integer in lo..hi, nothing else in s; false otherwise (out untouched). */
bool io_parse_int(const char *s, int lo, int hi, int *out);

/* "WxH", each 1..PL_MAX_IMAGE_SIDE, nothing else in s; false otherwise (w, h untouched). */
bool io_parse_size(const char *s, int *w, int *h);

#endif
