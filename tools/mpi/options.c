/* options.c — gramps-render-mpi's command line (see options.h). */
#include "tools/mpi/options.h"

#include "gramps/gramps.h"
#include "tools/common/cli_args.h"

#include <getopt.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out,
        "usage: mpirun -np N " MP_PROG " [options] [SCENE]\n"
        "Renders SCENE like gramps-render, on N ranks: each loads the scene and renders the\n"
        "chunks (bands of rows) rank 0 hands it; rank 0 gathers them and writes the outputs.\n"
        "The image is the same, bit for bit, as gramps-render's.\n\n");
    ro_usage(out);
    fprintf(out,
        "  -o, --output FILE     PNG to write (the last frame)\n"
        "      --frames N        render N frames; chunks of all frames are handed out\n"
        "      --stats FILE      write statistics as JSON, with a `ranks` array\n"
        "      --chunk-rows N    rows per chunk (default: 2 bands per rank for raster front\n"
        "                        ends, 32 rows for the ray tracer)\n"
        "      --handout KIND    dynamic (default: the next chunk to the first rank that\n"
        "                        asks) or static (chunk k to rank k mod N)\n"
        "  -h, --help            this help\n"
        "      --version         version\n");
}

enum { OPT_STATS = RO_OPT_END, OPT_VERSION, OPT_CHUNK_ROWS, OPT_HANDOUT, OPT_UNSUPPORTED };

static int parse_own(mp_options *o, int c, const char *arg, const char *flag)
{
    switch (c) {
    case 'o': o->output = arg; return 0;
    case OPT_STATS: o->stats = arg; return 0;
    case OPT_CHUNK_ROWS:
        if (!io_parse_int(arg, 1, 16384, &o->chunk_rows)) return ro_bad_flag(&o->c, flag, arg, "expected 1..16384");
        return 0;
    case OPT_HANDOUT:
        if (!strcmp(arg, "dynamic")) o->handout = MP_DYNAMIC;
        else if (!strcmp(arg, "static")) o->handout = MP_STATIC;
        else return ro_bad_flag(&o->c, flag, arg, "expected dynamic or static");
        return 0;
    case OPT_UNSUPPORTED:
        return ro_bad_flag(&o->c, "option", flag, "not supported across ranks (use gramps-render)");
    }
    int rc = ro_parse_one(&o->c, c, arg, flag);
    /* the Static scheduler partitions by a profiling frame of the whole image */
    if (!rc && c == RO_OPT_SCHEDULER && !strcmp(arg, "static"))
        return ro_bad_flag(&o->c, flag, arg, "not supported across ranks (use gramps-render)");
    return rc;
}

int mp_parse_args(int argc, char **argv, mp_options *o)
{
    static const struct option longs[] = {
        RO_LONG_OPTIONS, {"output", required_argument, 0, 'o'}, {"help", no_argument, 0, 'h'},
        {"stats", required_argument, 0, OPT_STATS}, {"version", no_argument, 0, OPT_VERSION},
        {"chunk-rows", required_argument, 0, OPT_CHUNK_ROWS},
        {"handout", required_argument, 0, OPT_HANDOUT},
        {"trace", required_argument, 0, OPT_UNSUPPORTED}, {"dot", required_argument, 0, OPT_UNSUPPORTED},
        {"info", no_argument, 0, OPT_UNSUPPORTED}, {"list-stages", no_argument, 0, OPT_UNSUPPORTED},
        {0, 0, 0, 0}};
    *o = (mp_options){0};
    int rc = ro_init(&o->c, MP_PROG, argc);
    if (rc) return rc;
    opterr = 0;
    int c, idx = -1;
    while ((c = getopt_long(argc, argv, ":" RO_SHORT_OPTIONS "o:h", longs, &idx)) != -1) {
        char flag[40];
        if (idx >= 0) snprintf(flag, sizeof flag, "--%s", longs[idx].name);
        else snprintf(flag, sizeof flag, "-%c", c);
        idx = -1;
        if (c == 'h') { usage(stdout); return -1; }
        if (c == OPT_VERSION) { printf(MP_PROG " %s\n", GR_VERSION); return -1; }
        if (c == '?') return ro_bad_flag(&o->c, "option", argv[optind - 1], "unknown option (see --help)");
        if (c == ':') return ro_bad_flag(&o->c, "option", argv[optind - 1], "needs a value");
        rc = parse_own(o, c, optarg, flag);
        if (rc) return rc;
    }
    if (optind < argc) o->c.scene = argv[optind++];
    if (optind < argc) return ro_bad_flag(&o->c, "argument", argv[optind], "only one SCENE may be given");
    return 0;
}

void mp_options_free(mp_options *o) { ro_free(&o->c); }
