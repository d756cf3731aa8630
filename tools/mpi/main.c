/* gramps-render-mpi — gramps-render on several machines: run under `mpirun -np N`, every
 * rank loads the scene, builds its own acceleration structures and runs its own GRAMPS
 * runtime on its cores; rank 0 hands out chunks of the image (bands of rows, of every
 * frame) and gathers their pixels, renders chunks itself meanwhile, and writes the PNG
 * and the statistics. The image is gramps-render's, bit for bit: each chunk is a frame
 * of the full image narrowed to a region (pl_frame_set_region).
 *
 *   mpirun -np N gramps-render-mpi [gramps-render's options] [SCENE]
 *
 * Exit status, the same on every rank: 2 for a bad option (reported once, by rank 0), 1
 * when a rank cannot load the scene or render (rank 0 reports that rank's message), 0
 * otherwise. */
#include "pipelines/frame_memory.h"
#include "output/image_out.h"
#include "scenes/digest.h"
#include "tools/common/measure.h"
#include "tools/mpi/sanitizers.h"
#include "tools/mpi/master.h"
#include "tools/mpi/protocol.h"
#include "tools/mpi/report.h"
#include "tools/mpi/worker.h"

#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

_Static_assert(sizeof(mp_work) == MP_WORK_FIELDS * sizeof(double), "mp_work is sent as doubles");

/* Every rank parses the same arguments to the same result; only rank 0's messages (and
 * --help, --version) are shown, so a bad option is reported once, not N times. */
static int parse_on_rank(int rank, int argc, char **argv, mp_options *o)
{
    if (rank == 0) return mp_parse_args(argc, argv, o);
    int out = dup(1), err = dup(2), null = open("/dev/null", O_WRONLY);
    if (out >= 0 && err >= 0 && null >= 0) { dup2(null, 1); dup2(null, 2); }
    int rc = mp_parse_args(argc, argv, o);
    fflush(stdout);
    fflush(stderr);
    if (out >= 0 && err >= 0 && null >= 0) { dup2(out, 1); dup2(err, 2); }
    if (out >= 0) close(out);
    if (err >= 0) close(err);
    if (null >= 0) close(null);
    return rc;
}

/* The seconds a rank may stay silent (--chunk-timeout): also how long every rank waits
 * for the others at the start. */
static double timeout_of(const mp_options *o)
{
    return o->chunk_timeout_s ? o->chunk_timeout_s : MP_CHUNK_TIMEOUT_S;
}

/* MPI_Allgather that gives up after timeout_s: a rank stopped, hung or gone before the
 * start would otherwise hold every other rank in the collective for good. The rank that
 * waited says so and the job stops (MPI offers no way to go on without a rank). */
static void allgather_within(const void *send, void *recv, MPI_Datatype type, double timeout_s,
                             int rank, const char *what)
{
    MPI_Request rq;
    MPI_Iallgather(send, 1, type, recv, 1, type, MPI_COMM_WORLD, &rq);
    const double t0 = io_now_ms();
    const struct timespec nap = {0, 1000 * 1000};
    for (int done = 0; !done; nanosleep(&nap, NULL)) {
        MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
        if (!done && io_now_ms() - t0 > timeout_s * 1000) {
            fprintf(stderr, MP_PROG ": rank %d waited %.0f s for every rank to %s (one stopped, "
                    "hung or its node gone): stopping the job\n", rank, timeout_s, what);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
}

/* Every rank's start (graph, scene, BVH) together: when any failed, rank 0 prints the
 * first failing rank's message (without the rank when all failed alike) and every rank
 * returns the worst status. */
static int agree_on_start(int rc, char err[CP_ERR_MAX], int rank, int nranks, double timeout_s)
{
    int *all = malloc((size_t)nranks * sizeof *all);
    if (!all) MPI_Abort(MPI_COMM_WORLD, 1);
    allgather_within(&rc, all, MPI_INT, timeout_s, rank, "start (scene, graph, BVH)");
    int first = -1, failed = 0, worst = 0;
    for (int i = 0; i < nranks; i++) {
        if (all[i] && first < 0) first = i;
        failed += all[i] != 0;
        if (all[i] > worst) worst = all[i];
    }
    free(all);
    if (first > 0 && rank == first)
        MPI_Send(err, (int)strlen(err) + 1, MPI_CHAR, 0, MP_TAG_FAIL, MPI_COMM_WORLD);
    if (first > 0 && rank == 0)
        MPI_Recv(err, CP_ERR_MAX, MPI_CHAR, first, MP_TAG_FAIL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (first >= 0 && rank == 0) {
        if (failed == nranks) fprintf(stderr, MP_PROG ": %s\n", err);
        else if (failed == 1) fprintf(stderr, MP_PROG ": rank %d: %s\n", first, err);
        else fprintf(stderr, MP_PROG ": rank %d (of %d failing ranks): %s\n", first, failed, err);
    }
    return worst;
}

static char *stats_json(const mp_report *rep, size_t *size)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, size);
    if (!f) return NULL;
    mp_write_stats(rep, f);
    bool ok = !ferror(f);
    if (fclose(f) != 0 || !ok) { free(buf); return NULL; }
    return buf;
}

/* -o and --stats, staged and committed together as gramps-render writes them. */
static int write_outputs(const mp_report *rep)
{
    const mp_options *o = rep->o;
    char err[600];
    size_t stats_size = 0;
    char *stats = o->stats ? stats_json(rep, &stats_size) : NULL;
    int rc = io_write_outputs(o->output, o->c.width, o->c.height, mp_frames_last(rep->frames),
                              o->c.threads, o->stats, stats, stats_size, err, sizeof err) != 0;
    free(stats);
    if (rc) fprintf(stderr, MP_PROG ": %s\n", err);
    return rc;
}

/* Every rank read the same scene: the digests of what they loaded (scenes/digest.h)
 * match rank 0's. Ranks that read different files under one name would render a mixed
 * image with exit 0. 0, or 1 on every rank with rank 0 naming the first that differs. */
static int agree_on_scene(const mp_renderer *r, int rank, int nranks, double timeout_s)
{
    unsigned long long mine = sc_digest(r->scene, &r->geo);
    unsigned long long *all = malloc((size_t)nranks * sizeof *all);
    if (!all) MPI_Abort(MPI_COMM_WORLD, 1);
    allgather_within(&mine, all, MPI_UNSIGNED_LONG_LONG, timeout_s, rank, "compare scene digests");
    int differs = -1;
    for (int i = 1; i < nranks && differs < 0; i++)
        if (all[i] != all[0]) differs = i;
    if (differs > 0 && rank == 0)
        fprintf(stderr, MP_PROG ": rank %d loaded a different scene from '%s' than rank 0 "
                "(digest %016llx against %016llx): every rank must read the same files\n",
                differs, r->o->c.scene ? r->o->c.scene : "(built-in)", all[differs], all[0]);
    free(all);
    return differs > 0;
}

/* Rank 0: serves and renders the plan, gathers every rank's work, reports. */
static int run_master(mp_options *o, mp_renderer *r, const mp_plan *p, int nranks)
{
    double t0 = io_now_ms();
    mp_master_result res;
    double timeout_s = timeout_of(o);
    if (mp_master_run(r, p, o->handout, nranks, timeout_s, &res)) MPI_Abort(MPI_COMM_WORLD, 1);
    mp_report rep = {.o = o, .r = r, .plan = p, .frames = &res.frames, .nranks = nranks,
                     .wall_ms = io_now_ms() - t0};
    mp_work *works = calloc((size_t)nranks, sizeof *works);
    if (!works) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Gather(&res.local, MP_WORK_FIELDS, MPI_DOUBLE, works, MP_WORK_FIELDS, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    rep.works = works;
    mp_renderer_end_frame(r);
    mp_counters_gather(&r->counters, 0, nranks);
    int rc = 1;
    if (res.failed_rank >= 0) fprintf(stderr, MP_PROG ": rank %d: %s\n", res.failed_rank, res.failure);
    else rc = write_outputs(&rep);
    if (!rc && !o->c.quiet) mp_summary(&rep, stdout);
    free(works);
    mp_master_result_free(&res);
    return rc;
}

static int run_worker(mp_renderer *r, const mp_plan *p, int rank, int nranks)
{
    mp_work w = {0};
    /* rank 0 would wait for this rank's requests: out of memory here stops the job */
    if (mp_worker_run(r, p, &w)) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Gather(&w, MP_WORK_FIELDS, MPI_DOUBLE, NULL, MP_WORK_FIELDS, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    mp_renderer_end_frame(r);
    mp_counters_gather(&r->counters, rank, nranks);
    return 0;
}

/* Renderer flags that do not apply to the graph (render_opts.h): rank 0 warns; with
 * --strict every rank fails alike, so agree_on_start says it once. */
static int flags_apply(const mp_options *o, const rg_setup *s, int rank, char err[CP_ERR_MAX])
{
    if (o->c.strict && s->nunused) {
        snprintf(err, CP_ERR_MAX, "error: %s does not apply to graph '%s' (--strict)",
                 s->unused[0], cp_graph_value(s->graph, "name") ? cp_graph_value(s->graph, "name") : s->name);
        return 2;
    }
    if (rank == 0) ro_check_flags_apply(&o->c, s);
    return 0;
}

static int run(mp_options *o, int rank, int nranks)
{
    mp_renderer r;
    char err[CP_ERR_MAX] = "";
    int started = mp_renderer_init(&r, o, err);
    if (!started) started = flags_apply(o, &r.setup, rank, err);
    int rc = agree_on_start(started, err, rank, nranks, timeout_of(o));
    if (!rc) rc = agree_on_scene(&r, rank, nranks, timeout_of(o));
    if (!rc) {
        int rows = o->chunk_rows ? o->chunk_rows
                                 : mp_default_rows(o->c.height, nranks, mp_renderer_rasterizes(&r));
        mp_plan p = mp_plan_make(o->c.width, o->c.height, o->c.frames, rows);
        rc = rank == 0 ? run_master(o, &r, &p, nranks) : run_worker(&r, &p, rank, nranks);
        MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);    /* rank 0's outputs decide */
    }
    mp_renderer_free(&r);
    return rc;
}

int main(int argc, char **argv)
{
    pl_keep_freed_memory();           /* chunks reuse memory, as frames do */
    signal(SIGXFSZ, SIG_IGN);         /* a file-size limit is a write error, not a kill */
    int provided = 0, rank = 0, nranks = 1;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, MP_PROG ": MPI could not start\n");
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    mp_options o;
    int rc = parse_on_rank(rank, argc, argv, &o);
    if (!rc && provided < MPI_THREAD_FUNNELED) {
        if (rank == 0) fprintf(stderr, MP_PROG ": this MPI gives no MPI_THREAD_FUNNELED\n");
        rc = 1;
    }
    if (!rc) rc = run(&o, rank, nranks);
    mp_options_free(&o);
    mp_check_leaks_now();
    MPI_Finalize();
    return rc < 0 ? 0 : rc;
}
