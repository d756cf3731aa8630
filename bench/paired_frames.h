/* paired_frames.h — timing our renderer against a peer that runs in a process of its own
 * (llvmpipe reads LP_NUM_THREADS once per process), one frame of each in turn.
 *
 * Why in turn: a shared machine changes speed for seconds at a time (the development VM
 * runs one process at two speeds about 1.4x apart, docs/benchmarks.md), so two runs
 * timed one after the other compare two phases of the machine as often as two
 * renderers. The peer's frame and ours, timed back to back, almost always share a phase:
 * the median of the per-pair ratios is the comparison (the order inside a pair alternates,
 * so neither side always runs first).
 *
 * The peer is this program again with an argument that makes it serve frames
 * (bench_peer_serve): it reads a line per frame from its standard input and answers
 * "wall_ms cpu_ms" on its standard output. Header-only, like gl_raster.h. */
#ifndef BENCH_PAIRED_FRAMES_H
#define BENCH_PAIRED_FRAMES_H

#include "tools/common/measure.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct bench_peer {
    pid_t pid;
    FILE *to, *from;                      /* its standard input and output */
} bench_peer;

/* Starts argv (argv[0] the program, found as execvp does) with the environment variable
 * env set to value; false when it cannot (nothing left running). A peer that dies makes
 * bench_peer_frame false, not this program end: SIGPIPE is ignored from here on. */
static bool bench_peer_start(bench_peer *p, char *const argv[], const char *env, int value)
{
    int down[2], up[2];
    *p = (bench_peer){-1, NULL, NULL};    /* bench_peer_stop may be called whatever happens */
    if (pipe(down)) return false;
    if (pipe(up)) {
        close(down[0]), close(down[1]);
        return false;
    }
    fflush(NULL);                         /* the child must not print our buffered lines again */
    p->pid = fork();
    if (p->pid == 0) {
        char text[16];
        snprintf(text, sizeof text, "%d", value);
        setenv(env, text, 1);
        dup2(down[0], STDIN_FILENO);
        dup2(up[1], STDOUT_FILENO);
        close(down[0]), close(down[1]), close(up[0]), close(up[1]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(down[0]), close(up[1]);
    if (p->pid < 0) {
        close(down[1]), close(up[0]);
        p->pid = -1;
        return false;
    }
    signal(SIGPIPE, SIG_IGN);
    p->to = fdopen(down[1], "w");
    p->from = fdopen(up[0], "r");
    return p->to && p->from;
}

/* One frame of the peer: its wall and CPU ms; false when it failed or is gone. */
static bool bench_peer_frame(bench_peer *p, double *ms, double *cpu)
{
    if (fputs("frame\n", p->to) == EOF || fflush(p->to)) return false;
    return fscanf(p->from, "%lf %lf", ms, cpu) == 2 && *ms >= 0;
}

/* Ends the peer (end of its input) and waits for it; after any bench_peer_start. */
static void bench_peer_stop(bench_peer *p)
{
    if (p->to) fclose(p->to);
    if (p->from) fclose(p->from);
    if (p->pid > 0) waitpid(p->pid, NULL, 0);
}

/* The peer's side: a frame (frame(arg)) per line of standard input, each answered with
 * its wall and CPU ms, until the input ends; 0, or 1 when a frame failed (answered
 * "-1 -1", then stops). */
static int bench_peer_serve(bool (*frame)(void *), void *arg)
{
    char line[64];
    while (fgets(line, sizeof line, stdin)) {
        const double t0 = io_now_ms(), c0 = io_process_cpu_ms();
        if (!frame(arg)) {
            printf("-1 -1\n");
            fflush(stdout);
            return 1;
        }
        printf("%.4f %.4f\n", io_now_ms() - t0, io_process_cpu_ms() - c0);
        fflush(stdout);
    }
    return 0;
}

#define BENCH_MAX_PAIRS 256

/* What bench_pairs_run measured: medians over the timed pairs of each side's wall and
 * CPU ms, the median of the per-pair ratios ours / peer (wall), and the fastest frames'
 * ratio. */
typedef struct bench_pairs {
    double peer_ms, ours_ms, peer_cpu_ms, ours_cpu_ms;
    double ratio;                         /* median of ours / peer, pair by pair */
    double ratio_min;                     /* ours' fastest / the peer's fastest */
} bench_pairs;

static inline double bench_median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, io_cmp_double);
    return io_median_sorted(v, (size_t)n);
}

/* warm untimed pairs, then `pairs` timed ones (at most BENCH_MAX_PAIRS); ours(arg)
 * renders one of our frames. False when either side failed a frame. */
static bool bench_pairs_run(bench_peer *p, bool (*ours)(void *), void *arg, int warm, int pairs,
                            bench_pairs *out)
{
    static double peer[BENCH_MAX_PAIRS], us[BENCH_MAX_PAIRS], peer_cpu[BENCH_MAX_PAIRS],
        us_cpu[BENCH_MAX_PAIRS], ratio[BENCH_MAX_PAIRS];
    if (pairs < 1 || pairs > BENCH_MAX_PAIRS) return false;
    double peer_min = 0, us_min = 0;
    for (int i = -warm; i < pairs; i++) {
        double pm, pc, um, uc;
        const bool peer_first = (i & 1) == 0;
        if (peer_first && !bench_peer_frame(p, &pm, &pc)) return false;
        const double t0 = io_now_ms(), c0 = io_process_cpu_ms();
        if (!ours(arg)) return false;
        um = io_now_ms() - t0, uc = io_process_cpu_ms() - c0;
        if (!peer_first && !bench_peer_frame(p, &pm, &pc)) return false;
        if (i < 0) continue;
        peer[i] = pm, peer_cpu[i] = pc, us[i] = um, us_cpu[i] = uc, ratio[i] = um / pm;
        peer_min = i == 0 || pm < peer_min ? pm : peer_min;
        us_min = i == 0 || um < us_min ? um : us_min;
    }
    *out = (bench_pairs){bench_median_of(peer, pairs), bench_median_of(us, pairs),
                         bench_median_of(peer_cpu, pairs), bench_median_of(us_cpu, pairs),
                         bench_median_of(ratio, pairs), us_min / peer_min};
    return true;
}

#endif
