/* worker.c — a rank other than 0 (see worker.h). */
#include "tools/mpi/worker.h"

#include "tools/common/measure.h"
#include "tools/mpi/protocol.h"

#include <mpi.h>
#include <stdlib.h>

/* Sends `tag` with size bytes of data and waits for the next chunk; the time is the
 * communication's. */
static mp_chunk exchange(int tag, const void *data, size_t size, mp_work *w)
{
    double t0 = io_now_ms();
    MPI_Send(data, (int)size, tag == MP_TAG_FAIL ? MPI_CHAR : MPI_BYTE, 0, tag, MPI_COMM_WORLD);
    int h[MP_HEADER_INTS];
    MPI_Recv(h, MP_HEADER_INTS, MPI_INT, 0, MP_TAG_CHUNK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    w->bytes_sent += (double)size;
    w->comm_ms += io_now_ms() - t0;
    return mp_header_unpack(h);
}

int mp_worker_run(mp_renderer *r, const mp_plan *p, mp_work *w)
{
    /* the largest chunk is the first band of a frame */
    size_t most = (size_t)p->width * (size_t)p->rows * 4;
    uint8_t *msg = malloc(MP_HEADER_BYTES + most);
    if (!msg) return 1;
    mp_chunk c = exchange(MP_TAG_ASK, NULL, 0, w);
    while (c.frame >= 0) {
        char err[CP_ERR_MAX];
        if (mp_render_chunk(r, &c, msg + MP_HEADER_BYTES, w, err)) {
            c = exchange(MP_TAG_FAIL, err, strlen(err) + 1, w);
            continue;
        }
        mp_header_pack(&c, (int *)msg);
        c = exchange(MP_TAG_RESULT, msg, MP_HEADER_BYTES + mp_chunk_bytes(&c), w);
    }
    free(msg);
    return 0;
}
