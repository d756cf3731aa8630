/* options.c — gramps-render-mpi's command line (see options.h). */
#include "tools/mpi/options.h"

#include "gramps/gramps.h"
#include "output/image_format.h"
#include "scenes/limits.h"
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
        "  -o, --output FILE     image to write (the last frame): .png, .jpg or .jpeg\n"
        "      --frames N        render N frames; chunks of all frames are handed out\n"
        "      --stats FILE      write statistics as JSON, with a `ranks` array\n"
        "      --chunk-rows N    rows per chunk (default: 2 bands per rank for raster front\n"
        "                        ends, 32 rows for the ray tracer)\n"
        "      --handout KIND    dynamic (default: the next chunk to the first rank that\n"
        "                        asks) or static (chunk k to rank k mod N)\n"
        "      --chunk-timeout S a rank that has not answered for S seconds with a chunk\n"
        "                        stops the job, naming the rank (default 300, 1..86400)\n"
        "  -h, --help            this help\n"
        "      --version         version\n");
}

enum { OPT_STATS = RO_OPT_END, OPT_VERSION, OPT_CHUNK_ROWS, OPT_HANDOUT, OPT_CHUNK_TIMEOUT,
       OPT_UNSUPPORTED };

static int parse_own(void *ctx, int c, const char *arg, const char *flag)
{
    mp_options *o = ctx;
    switch (c) {
    case 'o': {
        io_image_format format;
        if (!io_image_format_of(arg, &format) || format == IO_IMAGE_EXR)
            return ro_bad_flag(&o->c, flag, arg, "unknown image type: name it .png, .jpg or "
                               ".jpeg (.exr: gramps-render only)");
        o->output = arg;
        return 0;
    }
    case OPT_STATS: o->stats = arg; return 0;
    case OPT_CHUNK_ROWS:
        if (!io_parse_int(arg, 1, PL_MAX_IMAGE_SIDE, &o->chunk_rows))
            return ro_bad_flag(&o->c, flag, arg, "expected " LIMIT_RANGE(1, PL_MAX_IMAGE_SIDE));
        return 0;
    case OPT_HANDOUT:
        if (!strcmp(arg, "dynamic")) o->handout = MP_DYNAMIC;
        else if (!strcmp(arg, "static")) o->handout = MP_STATIC;
        else return ro_bad_flag(&o->c, flag, arg, "expected dynamic or static");
        return 0;
    case OPT_CHUNK_TIMEOUT:
        if (!io_parse_int(arg, 1, 86400, &o->chunk_timeout_s))
            return ro_bad_flag(&o->c, flag, arg, "expected 1..86400 seconds");
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
        {"chunk-timeout", required_argument, 0, OPT_CHUNK_TIMEOUT},
        {"trace", required_argument, 0, OPT_UNSUPPORTED}, {"dot", required_argument, 0, OPT_UNSUPPORTED},
        {"info", no_argument, 0, OPT_UNSUPPORTED}, {"list-stages", no_argument, 0, OPT_UNSUPPORTED},
        {0, 0, 0, 0}};
    *o = (mp_options){0};
    int rc = ro_init(&o->c, MP_PROG, argc);
    if (rc) return rc;
    return ro_parse_args(&o->c, argc, argv,
                         &(ro_program){"o:h", longs, OPT_VERSION, usage, parse_own, o});
}

void mp_options_free(mp_options *o) { ro_free(&o->c); }
