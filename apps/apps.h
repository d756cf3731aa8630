/* apps.h — the non-rendering applications of the thesis' chapter 5 and Sanchez 2011 §V,
 * built as GRAMPS graphs and checked against a plain serial implementation of the same
 * computation: histogram (MapReduce with a combiner), srad (Rodinia's Speckle Reducing
 * Anisotropic Diffusion over read-write buffers), fm-radio (StreamIt's FM radio chain)
 * mergesort (spawn-sync merge sort with a loop), gaussian (Rodinia's Gaussian
 * elimination, kernels and barriers as srad's) and spheres (rigid spheres over a sparse
 * voxel grid, a dynamic queue set). gramps-run runs them by name.
 *
 * Every app makes its input from its parameters alone (a seeded hash), so the serial
 * reference sees the same input; results are compared bit for bit, since each app's
 * graph does the same arithmetic in the same order per result element whatever the
 * worker count and scheduler. Sits on gramps/ only. */
#ifndef APPS_H
#define APPS_H

#include "gramps/gramps.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AP_MAX_PARAMS 8
#define AP_MSG_MAX 512

/* An integer parameter, set with --set graph.NAME=VALUE. */
typedef struct ap_param {
    const char *name;
    int64_t def, min, max;
    const char *help;
} ap_param;

typedef struct ap_app {
    const char *name;
    const char *help;
    const ap_param *params;
    int nparams;
    /* Makes the input and builds the graph into g from the parameter values (params'
     * order); returns the app's state, or NULL with a message in err. */
    void *(*build)(gr_graph *g, const int64_t *values, char err[AP_MSG_MAX]);
    /* After a successful run: compares the graph's result with the serial
     * implementation's. 0 and a one-line summary of the result in line, or -1 and the
     * first difference in line. */
    int (*check)(void *state, gr_graph *g, char line[AP_MSG_MAX]);
    void (*destroy)(void *state);
} ap_app;

/* The apps, by name (NULL: none of that name), and their names as "a, b, c". */
const ap_app *ap_find(const char *name);
const ap_app *ap_app_at(int i);          /* NULL past the last */
const char *ap_names(void);

/* An app with its parameter values. */
typedef struct ap_config {
    const ap_app *app;
    int64_t values[AP_MAX_PARAMS];
} ap_config;

/* The app's defaults; -1 with a message naming the known apps for an unknown name. */
int ap_config_init(ap_config *c, const char *name, char err[AP_MSG_MAX]);
/* "graph.KEY=VALUE" (or "KEY=VALUE"): -1 with a message naming the parameter and its
 * range for an unknown key or a value out of range. */
int ap_config_set(ap_config *c, const char *assignment, char err[AP_MSG_MAX]);
int64_t ap_value(const ap_config *c, const char *param);

/* One run: builds, launches under opts, waits, checks. */
typedef struct ap_outcome {
    gr_graph *graph;                      /* the caller destroys it (statistics) */
    gr_status status;                     /* the run's */
    bool matches;                         /* the result equals the serial one */
    char line[AP_MSG_MAX];                /* the result, or the run's error, or the difference */
} ap_outcome;

/* 0 when the run succeeded and matched the serial result; 1 otherwise (out->line says
 * why). out->graph may be NULL when the build failed. */
int ap_run(const ap_config *c, const gr_launch_opts *opts, ap_outcome *out);

/* ---- shared by the apps ------------------------------------------------------------- */

/* A 32-bit hash of (seed, i): the apps' inputs. */
static inline uint32_t ap_hash(uint64_t seed, uint64_t i)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + i + 0x632BE59BD9B4E019ull;
    x ^= x >> 30; x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27; x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return (uint32_t)x;
}

/* The apps' graphs, each in its own file. */
extern const ap_app ap_histogram, ap_srad, ap_fm_radio, ap_mergesort, ap_gaussian, ap_spheres;

#endif
