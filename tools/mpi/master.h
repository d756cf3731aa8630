/* master.h — rank 0: hands out chunks and gathers their pixels into the frames
 * (frames.h), and renders chunks itself meanwhile.
 *
 * Its main thread serves the other ranks and is the only thread of the process that
 * calls MPI (so MPI_THREAD_FUNNELED suffices); a second thread renders chunks from the
 * same dispenser and puts their pixels straight into the frames, with no messages. One
 * lock guards the dispenser, the frames and the failure. The server polls (MPI_Iprobe,
 * then a 100 us sleep when nothing came) rather than blocking in MPI_Recv, which in Open
 * MPI spins a core the renderer needs. */
#ifndef TOOLS_MPI_MASTER_H
#define TOOLS_MPI_MASTER_H

#include "tools/mpi/frames.h"
#include "tools/mpi/renderer.h"

typedef struct mp_master_result {
    mp_frames frames;                /* complete unless failed */
    mp_work local;                   /* rank 0's: its rendering and the server's bytes */
    int failed_rank;                 /* -1: none */
    char failure[CP_ERR_MAX];
} mp_master_result;

/* Runs the whole plan on nranks ranks. 0, or 1 when rank 0 could not start (out of
 * memory; message printed). A rank's failure is in res->failed_rank and res->failure. A
 * rank that says nothing for timeout_s seconds before it is told to stop ends the job
 * (MPI_Abort) with a message naming it. */
int mp_master_run(mp_renderer *r, const mp_plan *p, mp_handout h, int nranks,
                  double timeout_s, mp_master_result *res);
void mp_master_result_free(mp_master_result *res);

#endif
