/* master.c — rank 0's server and renderer (see master.h). */
#include "tools/mpi/master.h"

#include "tools/common/measure.h"
#include "tools/mpi/protocol.h"

#include <mpi.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

typedef struct master {
    pthread_mutex_t lock;
    double *heard_ms;                 /* per rank: its last message (the start before any);
                                         0 once it was told to stop */
    mp_chunk *held;                   /* per rank: the chunk it was sent last (frame -1: none) */
    double timeout_ms;
    mp_dispenser disp;
    mp_master_result *res;
    bool local_done;
    mp_renderer *r;
    const mp_plan *plan;
} master;

/* Records the first failure and stops the handout (lock held). */
static void fail(master *m, int rank, const char *msg)
{
    if (m->res->failed_rank < 0) {
        m->res->failed_rank = rank;
        snprintf(m->res->failure, sizeof m->res->failure, "%s", msg);
    }
    mp_dispenser_stop(&m->disp);
}

/* The next chunk for rank, its frame opened; frame -1 when there is none. */
static mp_chunk next_chunk(master *m, int rank)
{
    mp_chunk c = {.frame = -1};
    pthread_mutex_lock(&m->lock);
    if (mp_dispenser_take(&m->disp, rank, &c) && !mp_frames_begin(&m->res->frames, &c, io_now_ms())) {
        fail(m, 0, "out of memory for a frame's image");
        c.frame = -1;
    }
    pthread_mutex_unlock(&m->lock);
    return c;
}

static void put_chunk(master *m, const mp_chunk *c, const uint8_t *pixels)
{
    pthread_mutex_lock(&m->lock);
    mp_frames_put(&m->res->frames, c, pixels, io_now_ms());
    pthread_mutex_unlock(&m->lock);
}

/* ---- rank 0's own rendering (no MPI) ----------------------------------------------------- */

static void *render_locally(void *arg)
{
    master *m = arg;
    uint8_t *pixels = malloc((size_t)m->plan->width * (size_t)m->plan->rows * 4);
    char err[CP_ERR_MAX] = "out of memory for a chunk's pixels";
    bool ok = pixels != NULL;
    for (mp_chunk c; ok && (c = next_chunk(m, 0)).frame >= 0;) {
        ok = mp_render_chunk(m->r, &c, pixels, &m->res->local, err) == 0;
        if (ok) put_chunk(m, &c, pixels);
    }
    pthread_mutex_lock(&m->lock);
    if (!ok) fail(m, 0, err);
    m->local_done = true;
    pthread_mutex_unlock(&m->lock);
    free(pixels);
    return NULL;
}

/* ---- serving the other ranks --------------------------------------------------------------- */

/* Receives the message st announced; a result goes into its frame. */
static void receive(master *m, const MPI_Status *st, uint8_t *buf)
{
    int bytes = 0;
    MPI_Get_count(st, MPI_BYTE, &bytes);
    MPI_Recv(buf, bytes, st->MPI_TAG == MP_TAG_FAIL ? MPI_CHAR : MPI_BYTE, st->MPI_SOURCE,
             st->MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (st->MPI_TAG == MP_TAG_RESULT) {
        mp_chunk c = mp_header_unpack((const int *)buf);
        put_chunk(m, &c, buf + MP_HEADER_BYTES);
    } else if (st->MPI_TAG == MP_TAG_FAIL) {
        buf[bytes > 0 ? bytes - 1 : 0] = 0;
        pthread_mutex_lock(&m->lock);
        fail(m, st->MPI_SOURCE, (const char *)buf);
        pthread_mutex_unlock(&m->lock);
    }
}

/* Answers the request: the rank's next chunk, or stop. true when it was told to stop. */
static bool reply(master *m, int rank)
{
    mp_chunk c = next_chunk(m, rank);
    int h[MP_HEADER_INTS];
    mp_header_pack(&c, h);
    MPI_Send(h, MP_HEADER_INTS, MPI_INT, rank, MP_TAG_CHUNK, MPI_COMM_WORLD);
    if (c.frame < 0) m->heard_ms[rank] = 0;
    m->held[rank] = c;
    m->res->local.bytes_sent += (double)MP_HEADER_BYTES;
    return c.frame < 0;
}

static bool local_done(master *m)
{
    pthread_mutex_lock(&m->lock);
    bool done = m->local_done;
    pthread_mutex_unlock(&m->lock);
    return done;
}

/* A rank not yet told to stop that has said nothing for the timeout (stopped, hung, its
 * node gone): the job stops, naming it and the chunk it holds. MPI offers no way to go
 * on without a rank. */
static void check_silent_ranks(master *m, int nranks)
{
    double now = io_now_ms();
    for (int r = 1; r < nranks; r++) {
        if (!(m->heard_ms[r] > 0 && now - m->heard_ms[r] > m->timeout_ms)) continue;
        const mp_chunk *c = &m->held[r];
        if (c->frame >= 0)
            fprintf(stderr, MP_PROG ": rank %d has not answered for %.0f s (it holds a chunk of "
                    "frame %d, rows %d..%d): stopping the job\n", r, m->timeout_ms / 1000,
                    c->frame, c->region.y0, c->region.y1 - 1);
        else
            fprintf(stderr, MP_PROG ": rank %d has not asked for work for %.0f s: stopping the "
                    "job\n", r, m->timeout_ms / 1000);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void serve(master *m, int nranks, uint8_t *buf)
{
    const struct timespec nap = {0, 100 * 1000};
    int active = nranks - 1;                      /* ranks not yet told to stop */
    while (active > 0 || !local_done(m)) {
        int flag = 0;
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
        if (!flag) {
            check_silent_ranks(m, nranks);
            nanosleep(&nap, NULL);
            continue;
        }
        m->heard_ms[st.MPI_SOURCE] = io_now_ms();
        receive(m, &st, buf);
        if (reply(m, st.MPI_SOURCE)) active--;
    }
}

int mp_master_run(mp_renderer *r, const mp_plan *p, mp_handout h, int nranks,
                  double timeout_s, mp_master_result *res)
{
    *res = (mp_master_result){.failed_rank = -1};
    master m = {.res = res, .r = r, .plan = p, .timeout_ms = timeout_s * 1000,
                .heard_ms = calloc((size_t)nranks, sizeof(double)),
                .held = calloc((size_t)nranks, sizeof(mp_chunk))};
    if (!m.heard_ms || !m.held) {
        fprintf(stderr, MP_PROG ": out of memory\n");
        free(m.heard_ms);
        free(m.held);
        return 1;
    }
    for (int i = 0; i < nranks; i++) {
        m.heard_ms[i] = io_now_ms();
        m.held[i].frame = -1;
    }
    /* the largest message: a full band's pixels or an error message */
    size_t most = MP_HEADER_BYTES + (size_t)p->width * (size_t)p->rows * 4;
    if (most < CP_ERR_MAX) most = CP_ERR_MAX;
    uint8_t *buf = malloc(most);
    pthread_t local;
    if (!buf || !mp_frames_init(&res->frames, p) || !mp_dispenser_init(&m.disp, p, h, nranks) ||
        pthread_mutex_init(&m.lock, NULL)) {
        fprintf(stderr, MP_PROG ": out of memory\n");
        free(buf);
        mp_dispenser_free(&m.disp);
        free(m.heard_ms);
        free(m.held);
        return 1;
    }
    bool threaded = pthread_create(&local, NULL, render_locally, &m) == 0;
    if (!threaded) m.local_done = true;           /* rank 0 then only serves */
    serve(&m, nranks, buf);
    if (threaded) pthread_join(local, NULL);
    pthread_mutex_destroy(&m.lock);
    mp_dispenser_free(&m.disp);
    free(buf);
    free(m.heard_ms);
    free(m.held);
    return 0;
}

void mp_master_result_free(mp_master_result *res) { mp_frames_free(&res->frames); }
