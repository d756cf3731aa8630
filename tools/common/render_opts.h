/* render_opts.h — the command-line options that choose what a renderer program renders
 * and how: scene, graph (-p, --graph, --set, --plugin and the renderer flags), size,
 * camera, light, AOV, workers, scheduler, frames, memory limit. gramps-render and
 * gramps-view take them alike; each program adds its own (outputs, window) around them.
 *
 * A program's getopt_long table starts with RO_LONG_OPTIONS and its short options with
 * RO_SHORT_OPTIONS; every code ro_parse_one does not know is the program's. */
#ifndef TOOLS_COMMON_RENDER_OPTS_H
#define TOOLS_COMMON_RENDER_OPTS_H

#include "pipelines/frame.h"
#include "scenes/scene.h"
#include "tools/common/render_graph.h"

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct ro_options {
    const char *prog;              /* the program's name, for messages */
    const char *scene, *pipeline;
    const char *scheduler;         /* NULL: GRAMPS_SCHEDULER, else gramps */
    rg_options graph;              /* -p, --graph, --set, --plugin and the graph's flags */
    int width, height, frames;
    unsigned threads;              /* 0: all hardware threads */
    size_t max_memory;             /* 0 until the scene is loaded: sc_load_opts_default's */
    sh_aov aov;
    bool quiet, verbose, have_camera, have_light;
    bool strict;                   /* a flag that does not apply is an error, not a warning */
    bool scene_given;              /* SCENE is on the command line (else the default) */
    float camera[10], light[3];
} ro_options;

/* Option codes above any character; a program numbers its own from RO_OPT_END. */
enum { RO_OPT_SIZE = 256, RO_OPT_CAMERA, RO_OPT_LIGHT, RO_OPT_AOV, RO_OPT_FRAMES,
       RO_OPT_SPP, RO_OPT_BOUNCES, RO_OPT_PARALLEL_RAST, RO_OPT_NO_COARSE_Z,
       RO_OPT_SCHEDULER, RO_OPT_GRAPH, RO_OPT_SET, RO_OPT_PLUGIN, RO_OPT_MAX_MEMORY,
       RO_OPT_MSAA, RO_OPT_STRICT, RO_OPT_EDIT, RO_OPT_END };

#define RO_SHORT_OPTIONS "p:t:qv"
#define RO_LONG_OPTIONS                                                                    \
    {"pipeline", required_argument, 0, 'p'}, {"threads", required_argument, 0, 't'},      \
    {"quiet", no_argument, 0, 'q'}, {"verbose", no_argument, 0, 'v'},                      \
    {"size", required_argument, 0, RO_OPT_SIZE},                                           \
    {"camera", required_argument, 0, RO_OPT_CAMERA},                                       \
    {"light", required_argument, 0, RO_OPT_LIGHT}, {"aov", required_argument, 0, RO_OPT_AOV}, \
    {"frames", required_argument, 0, RO_OPT_FRAMES},                                       \
    {"spp", required_argument, 0, RO_OPT_SPP},                                             \
    {"bounces", required_argument, 0, RO_OPT_BOUNCES},                                     \
    {"msaa", required_argument, 0, RO_OPT_MSAA},                                           \
    {"parallel-rast", no_argument, 0, RO_OPT_PARALLEL_RAST},                               \
    {"no-coarse-z", no_argument, 0, RO_OPT_NO_COARSE_Z},                                   \
    {"scheduler", required_argument, 0, RO_OPT_SCHEDULER},                                 \
    {"graph", required_argument, 0, RO_OPT_GRAPH}, {"set", required_argument, 0, RO_OPT_SET}, \
    {"plugin", required_argument, 0, RO_OPT_PLUGIN},                                       \
    {"max-memory", required_argument, 0, RO_OPT_MAX_MEMORY},                              \
    {"strict", no_argument, 0, RO_OPT_STRICT},                                             \
    {"edit", required_argument, 0, RO_OPT_EDIT}

/* Defaults (teapot, raster, 1024x1024, frames 1) with room for argc --set, --plugin,
 * --graph and --edit values. 0, or exit status 2 with a message when out of memory. */
int ro_init(ro_options *o, const char *prog, int argc);
void ro_free(ro_options *o);

/* Applies one option. 0, 2 with a message naming `flag` for a bad value, or
 * RO_NOT_MINE for a code that is not a shared option. */
#define RO_NOT_MINE (-2)
int ro_parse_one(ro_options *o, int c, const char *arg, const char *flag);

/* What a program adds to the shared options' getopt loop. */
typedef struct ro_program {
    const char *shorts;            /* its short options, after RO_SHORT_OPTIONS */
    const struct option *longs;    /* RO_LONG_OPTIONS and its own, zero-terminated */
    int version_code;              /* the code of its --version */
    void (*usage)(FILE *out);
    /* One of its flags (flag: "--name" or "-c"), then ro_parse_one for the shared ones:
     * 0, or an exit status. */
    int (*flag)(void *ctx, int c, const char *arg, const char *flag);
    void *ctx;
} ro_program;

/* The command line: -h prints the usage and --version "PROG VERSION" (both return -1:
 * exit 0), an unknown option or a missing value is a bad flag, every other flag goes
 * to p->flag, then at most one SCENE. 0, -1, or an exit status. */
int ro_parse_args(ro_options *o, int argc, char **argv, const ro_program *p);

/* "PROG: FLAG 'VALUE': WHY" on stderr; returns 2, the exit status of a bad flag. */
int ro_bad_flag(const ro_options *o, const char *flag, const char *value, const char *why);

/* The renderer flags given that do not apply to the graph set up (s->unused): a warning
 * each, naming the flag and the graph; with --strict an error. 0, or exit status 2. */
int ro_check_flags_apply(const ro_options *o, const rg_setup *s);

/* The help lines of the shared options. */
void ro_usage(FILE *out);

/* Parses a camera as --camera takes it: 10 numbers, checked (sc_camera_problem). */
int ro_parse_camera(ro_options *o, const char *arg, const char *flag);

/* Loads the scene with --max-memory, applies --camera and --light and, when `flatten`,
 * flattens it into g. 0, or exit status 1 with the message printed. */
int ro_load_scene(ro_options *o, bool flatten, sc_scene **s, sc_geometry *g);
/* The same with the message left in err instead of printed (a program that reports
 * it elsewhere: gramps-render-mpi's ranks send it to rank 0). */
int ro_load_scene_msg(ro_options *o, bool flatten, sc_scene **s, sc_geometry *g,
                      char err[SC_ERR_MAX]);

#endif
