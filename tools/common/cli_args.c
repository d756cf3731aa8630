/* cli_args.c — command-line values (see cli_args.h). */
#include "tools/common/cli_args.h"

#include "gramps/gramps.h"
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

int io_bad_flag(const char *prog, const char *flag, const char *value, const char *why)
{
    fprintf(stderr, "%s: %s '%s': %s\n", prog, flag, value ? value : "", why);
    return 2;
}

int io_parse_flags(int argc, char **argv, const io_program *p)
{
    opterr = 0;
    int c, idx = -1;
    while ((c = getopt_long(argc, argv, p->shorts, p->longs, &idx)) != -1) {
        char flag[40];
        if (idx >= 0) snprintf(flag, sizeof flag, "--%s", p->longs[idx].name);
        else snprintf(flag, sizeof flag, "-%c", c);
        idx = -1;
        if (c == 'h') { p->usage(stdout); return -1; }
        if (p->version_code && c == p->version_code) {
            printf("%s %s\n", p->prog, GR_VERSION);
            return -1;
        }
        const char *opt = argv[optind - 1];
        if (c == '?') return io_bad_flag(p->prog, "option", opt, "unknown option (see --help)");
        if (c == ':') return io_bad_flag(p->prog, "option", opt, "needs a value");
        int rc = p->flag(p->ctx, c, optarg, flag);
        if (rc) return rc;
    }
    return 0;
}
