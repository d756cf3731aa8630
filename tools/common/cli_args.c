/* cli_args.c — command-line values (see cli_args.h). */
#include "tools/common/cli_args.h"

#include "scenes/limits.h"

#include <ctype.h>
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

/* "WxH", each 1..PL_MAX_IMAGE_SIDE: digits only, nothing after H (strtol's range check keeps
 * 4294967297 from wrapping to 1). */
bool io_parse_size(const char *s, int *w, int *h)
{
    char *end;
    if (!isdigit((unsigned char)*s)) return false;
    errno = 0;
    long a = strtol(s, &end, 10);
    if (errno || *end != 'x' || !isdigit((unsigned char)end[1])) return false;
    long b = strtol(end + 1, &end, 10);
    if (errno || *end || a < 1 || b < 1 || a > PL_MAX_IMAGE_SIDE || b > PL_MAX_IMAGE_SIDE) return false;
    *w = (int)a;
    *h = (int)b;
    return true;
}
