/* fp_apps.h — gramps-footprint's apps study (--apps): the gramps-run apps (apps/apps.h)
 * at their defaults x schedulers x worker counts, real or virtual, each configuration
 * run `repeats` times; writes apps.csv and apps.md (medians of wall time, peak and
 * average queue footprint) into the output directory. Every run's result is checked
 * against the app's serial implementation; a mismatch or a failed run stops the study.
 * Static runs without a profile (1 per stage and queue), as gramps-run does. */
#ifndef FP_APPS_H
#define FP_APPS_H

#include <stdbool.h>

typedef struct fp_apps_study {
    const char *const *apps; int napps;
    const char *const *schedulers; int nschedulers;
    const unsigned *workers; int nworkers;
    bool simulate;                    /* workers are virtual (gr_launch_opts.simulate) */
    int repeats;
    bool quiet;                       /* no progress line per configuration on stderr */
} fp_apps_study;

/* An unknown app name: -1 with the known names in err (checked before anything runs). */
int fp_apps_check(const fp_apps_study *s, char *err, int errlen);
/* Runs the study and writes DIR/apps.csv and DIR/apps.md; 1 with a message in err. */
int fp_apps_run(const fp_apps_study *s, const char *dir, char *err, int errlen);

#endif
