/* plan.h — how gramps-render-mpi cuts its work: every frame into chunks, bands of whole
 * image rows (the last one shorter), numbered frame after frame; and the dispenser that
 * hands them to ranks in one of two orders:
 *
 *   dynamic  a master queue: the next chunk in order goes to whichever rank asks first,
 *            so a rank on an expensive band simply asks less often;
 *   static   chunk k belongs to rank k mod N (interleaved bands), whatever they cost.
 *
 * Bands keep each chunk's pixels one contiguous run of the image; a region narrower than
 * the image would do as well (pl_frame_set_region takes any rectangle). No MPI here. */
#ifndef TOOLS_MPI_PLAN_H
#define TOOLS_MPI_PLAN_H

#include "pipelines/frame.h"

#include <stdbool.h>
#include <stddef.h>

/* One unit of work: a region of one frame. frame < 0: no more work. */
typedef struct mp_chunk { int frame; pl_region region; } mp_chunk;

typedef enum mp_handout { MP_DYNAMIC, MP_STATIC } mp_handout;

typedef struct mp_plan {
    int width, height, frames;
    int rows;                        /* rows per chunk */
    int per_frame;                   /* chunks per frame */
} mp_plan;

mp_plan mp_plan_make(int width, int height, int frames, int rows);
long mp_plan_chunks(const mp_plan *p);
mp_chunk mp_plan_chunk(const mp_plan *p, long k);
/* Pixel bytes of a chunk (RGBA8). */
size_t mp_chunk_bytes(const mp_chunk *c);

/* Rows per chunk when the user gives none. A graph with a raster front end re-runs the
 * whole geometry for every chunk, so it gets few, large bands (two per rank); one that
 * only traces rays pays per pixel, so it gets 32-row bands (the ray tracer's tile) for
 * the dynamic handout to balance. */
int mp_default_rows(int height, int nranks, bool raster_front_end);

typedef struct mp_dispenser {
    mp_plan plan;
    mp_handout mode;
    int nranks;
    long next;                       /* dynamic: the next chunk */
    long *next_of;                   /* static: each rank's next chunk */
    bool stopped;
} mp_dispenser;

bool mp_dispenser_init(mp_dispenser *d, const mp_plan *p, mp_handout mode, int nranks);
void mp_dispenser_free(mp_dispenser *d);
/* The next chunk for `rank`; false when it has none left or the run was stopped. */
bool mp_dispenser_take(mp_dispenser *d, int rank, mp_chunk *c);
/* No more chunks for anyone (a rank failed). */
void mp_dispenser_stop(mp_dispenser *d);

#endif
