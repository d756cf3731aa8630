/* fp_plots.h — the footprint study's SVG plots (svg_plot.h), written into the output
 * directory: per pipeline and worker count, grouped bars of peak footprint, average
 * footprint (both log scale) and frame time, one group per scene and one bar per
 * scheduler, whiskers from the smallest to the largest frame; per pipeline and
 * scheduler, the queue depths over one journaled frame (the study's first scene at its
 * last worker count). */
#ifndef TOOLS_FP_PLOTS_H
#define TOOLS_FP_PLOTS_H

#include "tools/common/fp_study.h"

#include <stddef.h>

#define FP_PLOT_NAME 320

typedef enum fp_bar_plot { FP_PLOT_PEAK, FP_PLOT_AVG, FP_PLOT_TIME, FP_NBAR_PLOTS } fp_bar_plot;

/* File names (no directory): names made of [A-Za-z0-9._-], other bytes as '_'. */
void fp_bar_plot_name(char name[FP_PLOT_NAME], fp_bar_plot kind, const char *pipeline,
                      unsigned workers);
void fp_depth_plot_name(char name[FP_PLOT_NAME], const fp_study *s, int pipeline, int sched);

/* Every plot into dir (which exists). 0, or 1 with a message in err. */
int fp_write_plots(const char *dir, const fp_study *s, char *err, size_t errlen);

#endif
