/* cli_args.h — parsing the command-line values the project's programs share. */
#ifndef TOOLS_COMMON_CLI_ARGS_H
#define TOOLS_COMMON_CLI_ARGS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

/* A decimal integer in lo..hi, nothing else in s; false otherwise (out untouched). */
bool io_parse_int(const char *s, int lo, int hi, int *out);

/* "WxH", each 1..PL_MAX_IMAGE_SIDE, nothing else in s; false otherwise (w, h untouched). */
bool io_parse_size(const char *s, int *w, int *h);

/* A program's options, for io_parse_flags. */
typedef struct io_program {
    const char *prog;              /* its name, for messages ("gramps-run") */
    const char *shorts;            /* getopt's short options, starting with ':' */
    const struct option *longs;    /* zero-terminated */
    int version_code;              /* the code of its --version; 0: it has none */
    void (*usage)(FILE *out);
    /* One of its flags (flag: "--name" or "-c"): 0, or an exit status. */
    int (*flag)(void *ctx, int c, const char *arg, const char *flag);
    void *ctx;
} io_program;

/* The options of argv: -h prints the usage and --version "PROG VERSION" (both return -1:
 * exit 0), an unknown option or a missing value is a bad flag, every other flag goes to
 * p->flag. 0 with optind at the first argument that is not an option, -1, or an exit
 * status. */
int io_parse_flags(int argc, char **argv, const io_program *p);

/* "PROG: FLAG 'VALUE': WHY" on stderr; returns 2, the exit status of a bad flag. */
int io_bad_flag(const char *prog, const char *flag, const char *value, const char *why);

#endif
