/* svg_plot.h — charts as standalone SVG files, written by the tools themselves (no
 * Python, gnuplot or browser needed on CI): grouped bars with optional whiskers and a
 * log scale, and step lines over time. The output is well-formed XML: one <svg> root,
 * text XML-escaped. */
#ifndef TOOLS_SVG_PLOT_H
#define TOOLS_SVG_PLOT_H

#include <stdbool.h>
#include <stdio.h>

/* Groups along x (scenes), one bar per series in each (schedulers). Values are indexed
 * [group * nseries + series]; lo and hi (both or neither) draw a whisker from lo to hi.
 * A log scale needs values above 0: smaller ones are drawn at the axis' floor. */
typedef struct svg_bars {
    const char *title, *ylabel;
    int ngroups, nseries;
    const char *const *groups, *const *series;
    const double *value, *lo, *hi;
    bool log_y;
} svg_bars;

/* Series of points joined as steps (a value holds until the next point), x ascending
 * within a series as far as the caller knows; y from 0. */
typedef struct svg_steps {
    const char *title, *xlabel, *ylabel;
    int nseries;
    const char *const *series;
    const int *npoints;
    const double *const *x, *const *y;
} svg_steps;

/* 0, or -1 when the file could not be written. */
int svg_write_bars(FILE *out, const svg_bars *b);
int svg_write_steps(FILE *out, const svg_steps *s);

#endif
