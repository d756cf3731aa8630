/* fp_apps.c — the apps study of gramps-footprint (fp_apps.h). */
#include "tools/common/fp_apps.h"

#include "apps/apps.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct apps_cell { double wall_ms, peak_kib, avg_kib; } apps_cell;

int fp_apps_check(const fp_apps_study *s, char *err, int errlen)
{
    for (int a = 0; a < s->napps; a++)
        if (!ap_find(s->apps[a])) {
            snprintf(err, (size_t)errlen, "--apps: unknown app '%s' (known: %s)", s->apps[a], ap_names());
            return -1;
        }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One app, scheduler and worker count, `repeats` checked runs: the medians. */
static int run_cell(const fp_apps_study *s, const char *app, const char *sched, unsigned workers,
                    apps_cell *out, char *err, int errlen)
{
    ap_config cfg;
    char msg[AP_MSG_MAX];
    if (ap_config_init(&cfg, app, msg)) { snprintf(err, (size_t)errlen, "%s", msg); return 1; }
    double wall[s->repeats], peak[s->repeats], avg[s->repeats];
    gr_launch_opts o = {.scheduler = sched};
    if (s->simulate) o.simulate = workers; else o.workers = workers;
    for (int r = 0; r < s->repeats; r++) {
        ap_outcome res;
        int rc = ap_run(&cfg, &o, &res);
        const gr_stats *st = res.graph && !rc ? gr_get_stats(res.graph) : NULL;
        if (rc || !st) {
            snprintf(err, (size_t)errlen, "app %s, %s, %u %sworkers: %s", app, sched, workers,
                     s->simulate ? "virtual " : "", res.line);
            if (res.graph) gr_graph_destroy(res.graph);
            return 1;
        }
        wall[r] = st->wall_ms;
        peak[r] = (double)st->peak_footprint_bytes / 1024;
        avg[r] = st->avg_footprint_bytes / 1024;
        gr_graph_destroy(res.graph);
    }
    *out = (apps_cell){median(wall, s->repeats), median(peak, s->repeats), median(avg, s->repeats)};
    return 0;
}

static FILE *open_in(const char *dir, const char *name, char *err, int errlen)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) snprintf(err, (size_t)errlen, "%.900s: %s", path, strerror(errno));
    return f;
}

static int write_outputs(const fp_apps_study *s, const apps_cell *cells, const char *dir,
                         char *err, int errlen)
{
    FILE *csv = open_in(dir, "apps.csv", err, errlen), *md = csv ? open_in(dir, "apps.md", err, errlen) : NULL;
    if (!csv || !md) { if (csv) fclose(csv); return 1; }
    const char *kind = s->simulate ? "virtual " : "";
    fprintf(csv, "app,scheduler,workers,simulated,wall_ms,peak_kib,avg_kib\n");
    fprintf(md, "# Apps: wall time and queue footprint by scheduler\n\nMedians of %d checked "
            "runs per configuration; KiB = 1024 bytes; %s.\n\n| app | scheduler |", s->repeats,
            s->simulate ? "virtual workers on one thread (times and footprints predicted)" : "real workers");
    for (int w = 0; w < s->nworkers; w++) fprintf(md, " %u %sw: ms / peak / avg KiB |", s->workers[w], kind);
    fprintf(md, "\n|---|---|");
    for (int w = 0; w < s->nworkers; w++) fprintf(md, "---|");
    fputc('\n', md);
    for (int a = 0; a < s->napps; a++)
        for (int k = 0; k < s->nschedulers; k++) {
            fprintf(md, "| %s | %s |", s->apps[a], s->schedulers[k]);
            for (int w = 0; w < s->nworkers; w++) {
                const apps_cell *c = &cells[(a * s->nschedulers + k) * s->nworkers + w];
                fprintf(csv, "%s,%s,%u,%d,%.3f,%.1f,%.1f\n", s->apps[a], s->schedulers[k],
                        s->workers[w], s->simulate, c->wall_ms, c->peak_kib, c->avg_kib);
                fprintf(md, " %.2f / %.1f / %.1f |", c->wall_ms, c->peak_kib, c->avg_kib);
            }
            fputc('\n', md);
        }
    int bad = ferror(csv) | ferror(md);
    bad |= fclose(csv) != 0;
    bad |= fclose(md) != 0;
    if (bad) snprintf(err, (size_t)errlen, "%.900s: could not write apps.csv or apps.md", dir);
    return bad ? 1 : 0;
}

int fp_apps_run(const fp_apps_study *s, const char *dir, char *err, int errlen)
{
    apps_cell *cells = calloc((size_t)s->napps * s->nschedulers * s->nworkers, sizeof *cells);
    if (!cells) { snprintf(err, (size_t)errlen, "out of memory"); return 1; }
    int rc = 0;
    for (int a = 0; a < s->napps && !rc; a++)
        for (int k = 0; k < s->nschedulers && !rc; k++)
            for (int w = 0; w < s->nworkers && !rc; w++) {
                apps_cell *c = &cells[(a * s->nschedulers + k) * s->nworkers + w];
                rc = run_cell(s, s->apps[a], s->schedulers[k], s->workers[w], c, err, errlen);
                if (!rc && !s->quiet)
                    fprintf(stderr, "%s %s %u%s: %.2f ms, peak %.1f KiB, avg %.1f KiB\n", s->apps[a],
                            s->schedulers[k], s->workers[w], s->simulate ? " virtual" : "",
                            c->wall_ms, c->peak_kib, c->avg_kib);
            }
    if (!rc) rc = write_outputs(s, cells, dir, err, errlen);
    free(cells);
    return rc;
}
