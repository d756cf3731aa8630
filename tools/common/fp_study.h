/* fp_study.h — the footprint study's matrix (gramps-footprint): scenes x pipelines x
 * worker counts x schedulers, each configuration summarised over its repeats, and one
 * journaled frame per pipeline and scheduler for the queue-depth timelines. The report
 * (fp_report.h), the papers' tables (fp_papers.h) and the plots (fp_plots.h) read it. */
#ifndef TOOLS_FP_STUDY_H
#define TOOLS_FP_STUDY_H

#include "tools/common/fp_summary.h"

typedef struct fp_study {
    int nscenes, npipelines, nworkers, nschedulers;
    const char *const *scenes;        /* labels: built-in names, file names without extension */
    const char *const *pipelines;     /* graph names ([graph] name) */
    const unsigned *workers;
    const char *const *schedulers;
    int width, height, repeats;
    fp_summary *cells;                /* fp_cell_index order */
    /* The timelines: scene 0 at the last worker count, [pipeline * nschedulers + sched]. */
    fp_timeline *timelines;
    bool simulated;                   /* the worker counts are virtual (--simulate) */
} fp_study;

/* "virtual workers" for a simulated study, else "workers" (n == 1: singular). */
static inline const char *fp_workers_word(const fp_study *s, unsigned n)
{
    if (s->simulated) return n == 1 ? "virtual worker" : "virtual workers";
    return n == 1 ? "worker" : "workers";
}

static inline int fp_cell_index(const fp_study *s, int scene, int pipeline, int workers, int sched)
{
    return ((scene * s->npipelines + pipeline) * s->nworkers + workers) * s->nschedulers + sched;
}

/* The configuration of that scene, pipeline, scheduler and worker count, or NULL when
 * the matrix does not hold it. */
const fp_summary *fp_study_find(const fp_study *s, const char *scene, const char *pipeline,
                                const char *scheduler, unsigned workers);

#endif
