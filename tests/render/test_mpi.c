/* gramps-render-mpi under mpirun, as a user runs it: with 2 and 3 ranks (oversubscribed
 * on a 2-core machine) its PNG is gramps-render's, byte for byte, for the raster, ray
 * tracer and hybrid graphs, at a square size and at one that is not a multiple of any
 * tile, with either handout and odd chunk sizes; --frames hands out every frame's
 * chunks and the statistics count them per rank; a bad option is reported once; a
 * scene missing in one rank's working directory stops every rank with that rank's
 * message, without hanging. Skips, saying why, when gramps-render-mpi was not built
 * (no Open MPI) or mpirun is missing. */
#include "tests/check.h"
#include "tests/cli.h"

#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Every run is bounded: a hang fails the test (status 124) instead of stalling CI. */
#define MPIRUN "timeout 120 mpirun --allow-run-as-root --oversubscribe"

static char bin[512];                  /* the build's bin/ */
static char dir[64];                   /* scratch directory */

static bool have_mpi(void)
{
    char path[600];
    snprintf(path, sizeof path, "%s/gramps-render-mpi", bin);
    return access(path, X_OK) == 0 && system("command -v mpirun >/dev/null 2>&1") == 0;
}

#define NEED_MPI()                                                                        \
    do { if (!have_mpi()) SKIP("gramps-render-mpi not built or no mpirun (Debian "       \
                               "libopenmpi-dev, openmpi-bin)"); } while (0)

/* Runs a shell command line; its output in `out`, its exit status returned. */
static int shell(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    strncat(cmd, " 2>&1", sizeof cmd - strlen(cmd) - 1);
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = 0;
    int st = p ? pclose(p) : -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* gramps-render's PNG and gramps-render-mpi's on np ranks for the same options (and
 * gramps-render-mpi's own, mpi_opts): equal. */
static void same_image_with(int np, const char *opts, const char *mpi_opts, const char *scene)
{
    char ref[128], got[128];
    snprintf(ref, sizeof ref, "%s/ref.png", dir);
    snprintf(got, sizeof got, "%s/mpi.png", dir);
    unlink(got);
    CHECK_MSG(shell("%s/gramps-render -q %s -o %s %s", bin, opts, ref, scene) == 0, "%s", out);
    int rc = shell(MPIRUN " -np %d %s/gramps-render-mpi -q %s %s -o %s %s", np, bin, opts, mpi_opts,
                   got, scene);
    CHECK_MSG(rc == 0, "np %d %s: exit %d: %s", np, opts, rc, out);
    CHECK_MSG(same_files(ref, got), "np %d %s %s: image differs from gramps-render's", np, opts, scene);
}

static void same_image(int np, const char *opts, const char *scene)
{
    same_image_with(np, opts, "", scene);
}

static void test_two_ranks(void)
{
    NEED_MPI();
    same_image(2, "-t 2 --size 256x256", "teapot");
    same_image(2, "-t 2 --size 256x256 -p raytrace", "teapot");
    same_image(2, "-t 2 --size 256x256 -p hybrid", "teapot");
}

/* 203x117: no multiple of the raster tile (64), the ray tracer's (32) or a block (8). */
static void test_three_ranks(void)
{
    NEED_MPI();
    same_image(3, "-t 1 --size 203x117", "courtyard");
    same_image(3, "-t 1 --size 203x117 -p raytrace --bounces 2", "cornell");
    same_image(3, "-t 1 --size 203x117 -p hybrid", "courtyard");
}

static void test_handout_and_chunks(void)
{
    NEED_MPI();
    same_image_with(3, "-t 1 --size 203x117", "--handout static --chunk-rows 7", "teapot");
    same_image_with(2, "-t 1 --size 203x117 -p raytrace --spp 2", "--chunk-rows 50", "teapot");
    same_image(2, "-t 1 --size 160x96 --parallel-rast --aov depth", "teapot");
}

/* Image-space stages read a halo of neighbours: each chunk is rendered with the halo its
 * stages need, so thin chunks (7 rows, less than FXAA's halo of 5 on both sides) stitch
 * into gramps-render's image, bit for bit, with a plugin stage too. */
static void test_image_space_stages(void)
{
    NEED_MPI();
    same_image_with(3, "-t 1 --size 203x117 -p raster-fxaa", "--chunk-rows 7", "teapot");
    same_image_with(2, "-t 2 --size 203x117 -p raytrace-tonemap --set graph.exposure=1.7", "", "cornell");
    same_image_with(2, "-t 1 --size 160x96 --graph examples/graphs/raster-sharpen.graph "
                    "--set sharpen.radius=6", "--chunk-rows 5", "teapot");
}

/* A number after `"key": ` in the text after `from`, or -1. */
static double json_number(const char *text, const char *from, const char *key)
{
    const char *at = strstr(text, from);
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    at = at ? strstr(at, pat) : NULL;
    return at ? atof(at + strlen(pat)) : -1;
}

/* --frames: every frame's chunks are rendered once, somewhere (the chunk counts add up,
 * and so do the primary rays); the last frame is the image; rank 0 gathers exactly the
 * pixels the other ranks rendered. */
static void test_frames_and_stats(void)
{
    NEED_MPI();
    same_image_with(3, "-t 1 --size 96x80 -p raytrace --frames 3", "--chunk-rows 16", "teapot");
    char stats[128];
    snprintf(stats, sizeof stats, "%s/stats.json", dir);
    int rc = shell(MPIRUN " -np 3 %s/gramps-render-mpi -q -t 1 --size 96x80 -p raytrace "
                   "--frames 3 --chunk-rows 16 --stats %s teapot", bin, stats);
    CHECK_MSG(rc == 0, "%s", out);
    char *j = slurp(stats, NULL);
    CHECK(j != NULL);
    if (!j) return;
    CHECK(json_number(j, "", "nranks") == 3);
    CHECK(json_number(j, "", "chunks_per_frame") == 5);
    double tiles = 0, remote = 0;
    for (int r = 0; r < 3; r++) {
        char from[32];
        snprintf(from, sizeof from, "{\"rank\": %d,", r);
        CHECK_MSG(strstr(j, from), "no rank %d in %s", r, stats);
        tiles += json_number(j, from, "tiles");
        if (r > 0) remote += json_number(j, from, "tiles");
        /* a rank the dynamic handout gave no chunk ran no graph: its peak is 0 */
        double peak = json_number(j, from, "peak_footprint_bytes");
        CHECK(json_number(j, from, "busy_ms") >= 0 && peak >= 0);
        CHECK_MSG(json_number(j, from, "tiles") == 0 || peak > 0, "rank %d rendered %g chunks "
                  "with a peak footprint of %g bytes", r, json_number(j, from, "tiles"), peak);
    }
    CHECK_MSG(tiles == 15, "%g chunks rendered, 15 handed out", tiles);
    /* each remote chunk sent 96x16 pixels and a 20-byte header */
    double gathered = json_number(j, "\"communication\"", "bytes_gathered");
    CHECK_MSG(gathered == remote * (96 * 16 * 4 + 20), "%g bytes gathered for %g remote chunks",
              gathered, remote);
    /* every pixel traced once, on some rank: one primary ray each per frame */
    CHECK_MSG(json_number(j, "\"rays\"", "primary") == 96 * 80 * 3, "%g primary rays",
              json_number(j, "\"rays\"", "primary"));
    double share = json_number(j, "\"communication\"", "share");
    CHECK(share >= 0 && share <= 1);
    free(j);
}

static int occurrences(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what)) n++;
    return n;
}

static void test_bad_options_once(void)
{
    NEED_MPI();
    int rc = shell(MPIRUN " -np 3 %s/gramps-render-mpi --size foo teapot", bin);
    CHECK_MSG(rc == 2 && occurrences(out, "--size 'foo'") == 1, "exit %d: %s", rc, out);
    rc = shell(MPIRUN " -np 2 %s/gramps-render-mpi --trace t.json teapot", bin);
    CHECK_MSG(rc == 2 && occurrences(out, "not supported across ranks") == 1, "exit %d: %s", rc, out);
    rc = shell(MPIRUN " -np 2 %s/gramps-render-mpi --scheduler static teapot", bin);
    CHECK_MSG(rc == 2 && occurrences(out, "not supported across ranks") == 1, "exit %d: %s", rc, out);
    /* a flag the graph has no setting for: one warning, or with --strict one error */
    rc = shell(MPIRUN " -np 2 %s/gramps-render-mpi -q --size 16x16 --spp 4 -o /dev/null teapot", bin);
    CHECK_MSG(rc == 0 && occurrences(out, "--spp does not apply to graph 'raster'") == 1,
              "exit %d: %s", rc, out);
    rc = shell(MPIRUN " -np 2 %s/gramps-render-mpi -q --size 16x16 --strict --spp 4 -o /dev/null teapot", bin);
    CHECK_MSG(rc == 2 && occurrences(out, "--spp does not apply to graph 'raster'") == 1,
              "exit %d: %s", rc, out);
    /* an image type it cannot write, before any rank renders (as gramps-render) */
    rc = shell(MPIRUN " -np 2 %s/gramps-render-mpi -o x.bmp teapot", bin);
    CHECK_MSG(rc == 2 && occurrences(out, "unknown image type") == 1, "exit %d: %s", rc, out);
}

/* A real per-rank cause: rank 0 runs in a directory holding the scene, ranks 1 and 2 in
 * one without it (mpirun's --wdir per application context). */
static void test_scene_missing_on_a_rank(void)
{
    NEED_MPI();
    char has[128], lacks[128];
    snprintf(has, sizeof has, "%s/has", dir);
    snprintf(lacks, sizeof lacks, "%s/lacks", dir);
    CHECK(mkdir(has, 0755) == 0 && mkdir(lacks, 0755) == 0);
    CHECK(shell("cp ../shared/scenes/teapot.obj %s/", has) == 0);
    const char *args = "-q -t 1 --size 64x64 teapot.obj";
    int rc = shell(MPIRUN " -np 1 --wdir %s %s/gramps-render-mpi %s : -np 2 --wdir %s "
                   "%s/gramps-render-mpi %s", has, bin, args, lacks, bin, args);
    CHECK_MSG(rc == 1 && occurrences(out, "teapot.obj: cannot open") == 1 &&
              strstr(out, "rank 1 (of 2 failing ranks)"), "exit %d: %s", rc, out);
    /* and the same program renders there when every rank has the file */
    rc = shell(MPIRUN " -np 2 --wdir %s %s/gramps-render-mpi %s", has, bin, args);
    CHECK_MSG(rc == 0, "exit %d: %s", rc, out);
    shell("rm -rf %s %s", has, lacks);
}

/* Ranks that read different files under one name (each rank's --wdir holds another
 * teapot.obj): refused with the rank named, instead of a mixed image with exit 0. */
static void test_different_scenes_refused(void)
{
    NEED_MPI();
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    CHECK(mkdir(a, 0755) == 0 && mkdir(b, 0755) == 0);
    CHECK(shell("cp ../shared/scenes/teapot.obj %s/ && sed '0,/^v /s/^v .*/v 0 0 9/' "
                "../shared/scenes/teapot.obj > %s/teapot.obj", a, b) == 0);
    const char *args = "-q -t 1 --size 64x64 teapot.obj";
    int rc = shell(MPIRUN " -np 1 --wdir %s %s/gramps-render-mpi %s : -np 1 --wdir %s "
                   "%s/gramps-render-mpi %s", a, bin, args, b, bin, args);
    CHECK_MSG(rc == 1 && occurrences(out, "rank 1 loaded a different scene") == 1,
              "exit %d: %s", rc, out);
    shell("rm -rf %s %s", a, b);
}

/* A rank that stops answering (SIGSTOP) ends the job after --chunk-timeout with the
 * rank named, instead of hanging it; stopped before the start is over (a loaded
 * machine's ranks start slowly), the others give up waiting for it at the start after
 * the same time. Rank 1 is stopped once it has used 1.5 s of CPU time: it is past
 * MPI_Init then. A loaded machine can hold a rank there for seconds, Open MPI polling
 * all the while (half a second of CPU was not enough in a CI run with a test beside it),
 * and a rank stopped inside MPI_Init holds the whole job until mpirun's timeout: that is
 * MPI's. The render runs well past 1.5 s of CPU on each rank. */
static void test_silent_rank_stops_the_job(void)
{
    NEED_MPI();
    int rc = shell("cd %s && (" MPIRUN " -np 2 %s/gramps-render-mpi -q -t 1 -p raytrace --spp 64 "
                   "--size 512x512 --frames 10 --chunk-rows 8 --chunk-timeout 2 teapot > silent.txt 2>&1; "
                   "echo status $? >> silent.txt) & "
                   "for i in $(seq 600); do sleep 0.1; for p in $(pgrep -f 'chunk-timeout 2 teapot'); do "
                   "tr '\\0' '\\n' < /proc/$p/environ 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=1 "
                   "&& [ \"$(awk '{print $14 + $15}' /proc/$p/stat 2>/dev/null || echo 0)\" -ge 150 ] "
                   "&& kill -STOP $p && break 2; done; done; wait; cat %s/silent.txt", dir, bin, dir);
    CHECK_MSG(rc == 0 && (strstr(out, "rank 1 has not") || strstr(out, "for every rank to")) &&
              !strstr(out, "status 0") && !strstr(out, "status 124"), "exit %d: %s", rc, out);
}

int main(int argc, char **argv)
{
    (void)argc;
    char self[512], where[PATH_MAX];
    snprintf(self, sizeof self, "%s", argv[0]);
    if (!realpath(dirname(self), where)) { perror(argv[0]); return 1; }
    snprintf(bin, sizeof bin, "%.400s/../../bin", where);
    snprintf(dir, sizeof dir, "/tmp/test_mpi.XXXXXX");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    /* shared-memory transfers between ranks by copy: containers often forbid the
     * cross-process reads (CMA) Open MPI would use for large messages */
    setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 1);
    RUN(test_two_ranks);
    RUN(test_three_ranks);
    RUN(test_handout_and_chunks);
    RUN(test_image_space_stages);
    RUN(test_frames_and_stats);
    RUN(test_bad_options_once);
    RUN(test_scene_missing_on_a_rank);
    RUN(test_different_scenes_refused);
    RUN(test_silent_rank_stops_the_job);
    shell("rm -rf %s", dir);
    return check_finish();
}
