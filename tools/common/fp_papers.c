/* fp_papers.c — the papers' footprint figures beside the study's (see fp_papers.h). */
#include "tools/common/fp_papers.h"

#include <string.h>

/* Sanchez 2011 Table III, raytracer rows, KB as printed. */
typedef struct sanchez_row { const char *scheduler; double ray0_avg, ray0_max, ray1_avg, ray1_max; } sanchez_row;
static const sanchez_row sanchez[] = {
    {"gramps", 215.9, 287.8, 361.1, 447.4},
    {"task-stealing", 191.7, 276.5, 327.5, 424.6},
    {"breadth-first", 23096.0, 51648.5, 31257.1, 78706.5},
    {"static", 322.7, 722.7, 1133.5, 2271.0},
};

/* Sugerman 2010 Table 4.2: fat-core occupancy (%) and peak queue size (KB), CPU-like
 * configuration (8 fat cores x 4 threads); peak queue size, GPU-like configuration. */
typedef struct thesis_row {
    const char *scene, *graph, *ours;
    double cpu_occupancy, cpu_peak, gpu_peak;
} thesis_row;
static const thesis_row thesis[] = {
    {"teapot", "D3D", "raster", 87.8, 510, 1329},
    {"teapot", "Ext. D3D", "hybrid", 90.2, 582, 1264},
    {"teapot", "Ray Tracer", "raytrace", 99.8, 156, 392},
    {"courtyard", "D3D", "raster", 88.5, 544, 1301},
    {"courtyard", "Ext. D3D", "hybrid", 94.2, 586, 1272},
    {"courtyard", "Ray Tracer", "raytrace", 99.9, 176, 456},
    {"fairy", "D3D", "raster", 77.2, 561, 1423},
    {"fairy", "Ext. D3D", "hybrid", 92.0, 605, 1195},
    {"fairy", "Ray Tracer", "raytrace", 100.0, 205, 537},
};

#define NELEMS(a) (int)(sizeof (a) / sizeof *(a))

/* A figure's range over the study's scenes, printed "lo-hi" (one number when both print
 * alike) or "-" when no scene had it. */
typedef struct range { double lo, hi; bool any; } range;

static void range_add(range *r, double v)
{
    if (!r->any || v < r->lo) r->lo = v;
    if (!r->any || v > r->hi) r->hi = v;
    r->any = true;
}

static void range_print(FILE *out, const range *r, const char *fmt)
{
    char lo[32], hi[32];
    if (!r->any) { fputs("-", out); return; }
    snprintf(lo, sizeof lo, fmt, r->lo);
    snprintf(hi, sizeof hi, fmt, r->hi);
    fprintf(out, strcmp(lo, hi) ? "%s-%s" : "%s", lo, hi);
}

/* Ours for one scheduler at w workers, over the scenes: average and peak KiB, and the
 * peak as a multiple of gramps' on the same scene. */
static void ours_raytrace(FILE *out, const fp_study *s, const char *sched, unsigned w)
{
    range avg = {0}, peak = {0}, ratio = {0};
    for (int sc = 0; sc < s->nscenes; sc++) {
        const fp_summary *c = fp_study_find(s, s->scenes[sc], "raytrace", sched, w);
        const fp_summary *g = fp_study_find(s, s->scenes[sc], "raytrace", "gramps", w);
        if (!c) continue;
        range_add(&avg, c->avg_bytes.median / 1024);
        range_add(&peak, c->peak_bytes.median / 1024);
        if (g && g->peak_bytes.median > 0) range_add(&ratio, c->peak_bytes.median / g->peak_bytes.median);
    }
    if (!avg.any) { fputs(" | -", out); return; }
    fputs(" | ", out);
    range_print(out, &avg, "%.0f");
    fputs(" / ", out);
    range_print(out, &peak, "%.0f");
    fputs(" (", out);
    range_print(out, &ratio, "%.1f");
    fputs("x)", out);
}

static void sanchez_table(FILE *out, const fp_study *s)
{
    fprintf(out, "\n## Beside Sanchez et al. 2011, Table III (ray tracer)\n\n"
            "Theirs: KB as printed, 24 threads on a 12-core Xeon; ray-0 without reflections, "
            "ray-1 with one bounce (a cycle in the graph), x = maximum over GRAMPS's. Ours: the "
            "`raytrace` graph (1 bounce, like ray-1) at %dx%d, median per scene, the range over "
            "the scenes (%d); avg / peak KiB (peak over gramps' on the same scene).\n\n"
            "| scheduler | ray-0 avg / max | ray-1 avg / max (x) |", s->width, s->height, s->nscenes);
    for (int w = 0; w < s->nworkers; w++)
        fprintf(out, " ours, %u %s |", s->workers[w], fp_workers_word(s, s->workers[w]));
    fputs("\n|---|---|---|", out);
    for (int w = 0; w < s->nworkers; w++) fputs("---|", out);
    fputc('\n', out);
    for (int i = 0; i < NELEMS(sanchez); i++) {
        const sanchez_row *r = &sanchez[i];
        fprintf(out, "| %s | %.1f / %.1f | %.1f / %.1f (%.1fx)", r->scheduler, r->ray0_avg,
                r->ray0_max, r->ray1_avg, r->ray1_max, r->ray1_max / sanchez[0].ray1_max);
        for (int w = 0; w < s->nworkers; w++) ours_raytrace(out, s, r->scheduler, s->workers[w]);
        fputs(" |\n", out);
    }
}

static void ours_thesis(FILE *out, const fp_study *s, const thesis_row *r, unsigned w)
{
    const fp_summary *c = fp_study_find(s, r->scene, r->ours, "gramps", w);
    if (c) fprintf(out, " %.0f%% / %.0f |", c->occupancy.median * 100, c->peak_bytes.median / 1024);
    else fputs(" - |", out);
}

static void thesis_table(FILE *out, const fp_study *s)
{
    fprintf(out, "\n## Beside Sugerman 2010, Table 4.2 (GRAMPS scheduler)\n\n"
            "Theirs: simulated; CPU-like = 8 fat cores x 4 threads (fat-core occupancy, peak "
            "queue size in KB), GPU-like = 1 fat core and 16 micro cores (peak KB). Ours: "
            "occupancy / peak KiB, median of the repeats, D3D as `raster`, Ext. D3D as "
            "`hybrid`, Ray Tracer as `raytrace`.\n\n"
            "| scene | thesis graph | ours | CPU-like occupancy | CPU-like peak | GPU-like peak |");
    for (int w = 0; w < s->nworkers; w++)
        fprintf(out, " ours, %u %s |", s->workers[w], fp_workers_word(s, s->workers[w]));
    fputs("\n|---|---|---|---|---|---|", out);
    for (int w = 0; w < s->nworkers; w++) fputs("---|", out);
    fputc('\n', out);
    for (int i = 0; i < NELEMS(thesis); i++) {
        const thesis_row *r = &thesis[i];
        fprintf(out, "| %s | %s | %s | %.1f%% | %.0f | %.0f |", r->scene, r->graph, r->ours,
                r->cpu_occupancy, r->cpu_peak, r->gpu_peak);
        for (int w = 0; w < s->nworkers; w++) ours_thesis(out, s, r, s->workers[w]);
        fputc('\n', out);
    }
}

void fp_papers_markdown(FILE *out, const fp_study *s)
{
    sanchez_table(out, s);
    thesis_table(out, s);
}
