/* worker.h — a rank other than 0: asks rank 0 for chunks, renders each and sends its
 * pixels back with the request for the next, until told to stop (protocol.h). */
#ifndef TOOLS_MPI_WORKER_H
#define TOOLS_MPI_WORKER_H

#include "tools/mpi/renderer.h"

/* Adds this rank's work to w. Returns when rank 0 says stop; a chunk that fails to
 * render is reported to rank 0, which stops everyone. 0, or 1 when out of memory. */
int mp_worker_run(mp_renderer *r, const mp_plan *p, mp_work *w);

#endif
