/* gramps-render-mpi on this machine: the ray tracer on fairy at 512x512, 2 frames, 1
 * worker per rank, on 1..GRAMPS_BENCH_MAX_RANKS ranks (default 3) with the dynamic
 * handout, then 2 ranks with each handout. Prints "name value unit" per rank count: frame
 * time, bytes gathered at rank 0 per frame, the model's bytes for the same chunks
 * (remote chunks x (pixel bytes + 20-byte header) / frames), communication share; per
 * handout: the busiest rank's busy time over the mean, and the run's wall time.
 *
 * Ranks beyond the cores take turns on them (mpirun --oversubscribe): the times show
 * overheads and balance, not cluster speed-up. Needs gramps-render-mpi (Open MPI) and
 * mpirun; otherwise prints a note and exits. */
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define W 512
#define ROWS 32
#define FRAMES 2
#define SCENE "fairy"

static char bin[PATH_MAX + 32];

/* A number after `"key": ` following `from` in text, or -1. */
static double number(const char *text, const char *from, const char *key)
{
    const char *at = strstr(text, from);
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    at = at ? strstr(at, pat) : NULL;
    return at ? atof(at + strlen(pat)) : -1;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = calloc(1, 1 << 20);
    if (buf) buf[fread(buf, 1, (1 << 20) - 1, f)] = 0;
    fclose(f);
    return buf;
}

/* One run's statistics file, read whole (NULL when the run failed). */
static char *render(int np, const char *handout, const char *stats)
{
    char cmd[2 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "mpirun --allow-run-as-root --oversubscribe -np %d %s/gramps-render-mpi "
             "-q -t 1 -p raytrace --size %dx%d --frames %d --chunk-rows %d --handout %s --stats %s %s",
             np, bin, W, W, FRAMES, ROWS, handout, stats, SCENE);
    return system(cmd) == 0 ? slurp(stats) : NULL;
}

static void rank_counts(int np, const char *stats)
{
    char *j = render(np, "dynamic", stats);
    if (!j) { printf("# %d ranks: run failed\n", np); return; }
    double remote = 0;
    for (int r = 1; r < np; r++) {
        char from[32];
        snprintf(from, sizeof from, "{\"rank\": %d,", r);
        remote += number(j, from, "tiles");
    }
    printf("mpi_rt_fairy_frame_ms_np%d %.1f ms\n", np, number(j, "\"frame_ms\"", "median"));
    printf("mpi_rt_fairy_bytes_gathered_per_frame_np%d %.0f bytes\n", np,
           number(j, "\"communication\"", "bytes_gathered_per_frame"));
    printf("mpi_rt_fairy_bytes_model_per_frame_np%d %.0f bytes\n", np,
           remote * (W * ROWS * 4 + 20) / FRAMES);
    printf("mpi_rt_fairy_comm_share_np%d %.3f fraction\n", np, number(j, "\"communication\"", "share"));
    free(j);
}

static void handout(const char *kind, const char *stats)
{
    char *j = render(2, kind, stats);
    if (!j) { printf("# %s handout: run failed\n", kind); return; }
    double b0 = number(j, "{\"rank\": 0,", "busy_ms"), b1 = number(j, "{\"rank\": 1,", "busy_ms");
    double most = b0 > b1 ? b0 : b1;
    printf("mpi_rt_fairy_%s_busy_max_over_mean_np2 %.2f ratio\n", kind, most / ((b0 + b1) / 2));
    printf("mpi_rt_fairy_%s_wall_ms_np2 %.1f ms\n", kind, number(j, "", "wall_ms"));
    free(j);
}

int main(int argc, char **argv)
{
    (void)argc;
    char self[PATH_MAX], where[PATH_MAX];
    snprintf(self, sizeof self, "%s", argv[0]);
    if (!realpath(dirname(self), where)) { perror(argv[0]); return 1; }
    snprintf(bin, sizeof bin, "%s/../bin", where);
    char tool[sizeof bin + 32];
    snprintf(tool, sizeof tool, "%s/gramps-render-mpi", bin);
    if (access(tool, X_OK) != 0 || system("command -v mpirun >/dev/null 2>&1") != 0) {
        printf("# bench_mpi: gramps-render-mpi not built or no mpirun (Debian libopenmpi-dev, openmpi-bin)\n");
        return 0;
    }
    const char *cap = getenv("GRAMPS_BENCH_MAX_RANKS");
    int max_ranks = cap ? atoi(cap) : 3;
    char stats[] = "/tmp/bench_mpi.XXXXXX";
    int fd = mkstemp(stats);
    if (fd < 0) { perror("mkstemp"); return 1; }
    close(fd);
    setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 1);
    for (int np = 1; np <= max_ranks; np++) rank_counts(np, stats);
    handout("dynamic", stats);
    handout("static", stats);
    unlink(stats);
    return 0;
}
