/* fp_report.h — the footprint study's tables: CSV (one row per configuration, every
 * figure in plain units, for other programs) and Markdown (the same rows for people,
 * the papers' figures beside ours, and the plots). */
#ifndef TOOLS_FP_REPORT_H
#define TOOLS_FP_REPORT_H

#include "tools/common/fp_study.h"

#include <stdio.h>

/* The CSV's header line, without the newline: the columns every row has, in order. */
extern const char fp_csv_header[];

/* 0, or -1 when the file could not be written. */
int fp_write_csv(FILE *out, const fp_study *s);
int fp_write_markdown(FILE *out, const fp_study *s);

#endif
