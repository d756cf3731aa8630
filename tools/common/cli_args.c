/* cli_args.c — command-line values (see cli_args.h). */
#include "tools/common/cli_args.h"

#include <errno.h>
#include <stdlib.h>

bool io_parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return false;
    *out = (int)v;
    return true;
}
