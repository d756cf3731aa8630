/* Multisampling's cost in the raster graphs: frame time at 1024x1024 of teapot and
 * ../shared/scenes/bunny.obj with --msaa 1, 4 and 8, in the sort-middle default graph
 * and the ordered one ("ordered_"), the sample counts in alternation round by round (so
 * a load change on the machine falls on all of them alike), median of the rounds, and
 * the ratio of each to msaa 1, by wall time and by the process's CPU time (steadier on a
 * loaded machine). Workers: GRAMPS_BENCH_THREADS (default 1); rounds:
 * GRAMPS_BENCH_ROUNDS (default 7). Prints "name value unit". */
#include "pipelines/frame_memory.h"
#include "pipelines/kept_graph.h"
#include "pipelines/raster/raster.h"
#include "tools/common/measure.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_ROUNDS 64

static const int counts[] = {1, 4, 8};
#define NCOUNTS 3

static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static pl_kept_builtin *keep;         /* the graph, run again while c and the scene stay */

/* One frame: its wall time, and the CPU time of all the process's threads in *cpu. */
static double frame_ms(const sc_scene *s, const sc_geometry *g, plr_config *c, uint8_t *img,
                       double *cpu)
{
    char err[SC_ERR_MAX] = "out of memory";
    if (!keep) keep = pl_kept_builtin_new();
    double c0 = cpu_ms(), t0 = io_now_ms();
    const gr_graph *gg = keep ? plr_render_kept(keep, s, g, c, img, NULL, err) : NULL;
    double ms = io_now_ms() - t0;
    *cpu = cpu_ms() - c0;
    if (!gg) { printf("# %s\n", err); exit(1); }
    return ms;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, io_cmp_double);
    return io_median_sorted(v, (size_t)n);
}

static void bench_scene(const char *label, const char *path, plr_graph kind, unsigned workers,
                        int rounds)
{
    sc_scene *s;
    sc_geometry g;
    char err[SC_ERR_MAX];
    if (sc_load(path, &s, err) || sc_flatten(s, &g, err)) { printf("# %s: %s\n", label, err); return; }
    plr_config c;
    plr_config_default(&c);
    c.graph = kind;
    c.workers = workers;
    uint8_t *img = malloc((size_t)c.width * c.height * 4);
    double t[NCOUNTS][MAX_ROUNDS], cpu[NCOUNTS][MAX_ROUNDS];
    for (int r = -1; r < rounds; r++)             /* round -1: warm-up */
        for (int k = 0; k < NCOUNTS; k++) {
            c.msaa = counts[k];
            double used, ms = frame_ms(s, &g, &c, img, &used);
            if (r >= 0) t[k][r] = ms, cpu[k][r] = used;
        }
    const char *v = kind == PLR_ORDERED ? "ordered_" : "";
    double base = 0, base_cpu = 0;
    for (int k = 0; k < NCOUNTS; k++) {
        double med = median(t[k], rounds), med_cpu = median(cpu[k], rounds);
        if (k == 0) base = med, base_cpu = med_cpu;
        printf("raster_%smsaa%d_frame_ms_%s_%uw %.1f ms\n", v, counts[k], label, workers, med);
        printf("raster_%smsaa%d_frame_cpu_ms_%s_%uw %.1f ms\n", v, counts[k], label, workers, med_cpu);
        if (k) printf("raster_%smsaa%d_over_msaa1_%s_%uw %.3f x (cpu %.3f x)\n", v, counts[k], label,
                      workers, med / base, med_cpu / base_cpu);
    }
    free(img);
    pl_kept_builtin_forget(keep);
    sc_geometry_free(&g);
    sc_free(s);
}

int main(void)
{
    pl_keep_freed_memory();
    const char *w = getenv("GRAMPS_BENCH_THREADS"), *r = getenv("GRAMPS_BENCH_ROUNDS");
    unsigned workers = (unsigned)(w ? atol(w) : 1);
    int rounds = r ? atoi(r) : 7;
    if (rounds < 1 || rounds > MAX_ROUNDS) rounds = 7;
    for (int kind = PLR_TILED; kind <= PLR_ORDERED; kind++) {
        bench_scene("teapot", "teapot", (plr_graph)kind, workers, rounds);
        bench_scene("bunny", "../shared/scenes/bunny.obj", (plr_graph)kind, workers, rounds);
    }
    return 0;
}
