/* frames.h — rank 0's images under assembly: one per frame while any of its chunks is
 * out (chunks are handed out frame after frame, so only the frames at the front of the
 * queue are open at once), freed when complete, except the last frame's, which is the
 * one written. Each frame's time runs from its first chunk's handout to its last chunk's
 * arrival. Not thread-safe: rank 0 guards it with its dispenser's lock. */
#ifndef TOOLS_MPI_FRAMES_H
#define TOOLS_MPI_FRAMES_H

#include "tools/mpi/plan.h"

#include <stdint.h>

typedef struct mp_frames {
    mp_plan plan;
    uint8_t **image;                 /* per frame: NULL until its first chunk is out */
    int *left;                       /* per frame: chunks not yet arrived */
    double *start_ms, *end_ms;
} mp_frames;

bool mp_frames_init(mp_frames *f, const mp_plan *p);
void mp_frames_free(mp_frames *f);
/* A chunk of frame c->frame was handed out at now_ms. false when out of memory. */
bool mp_frames_begin(mp_frames *f, const mp_chunk *c, double now_ms);
/* Its pixels (its region's rows, packed) arrived at now_ms. */
void mp_frames_put(mp_frames *f, const mp_chunk *c, const uint8_t *pixels, double now_ms);
bool mp_frames_complete(const mp_frames *f);
/* The last frame's image (complete runs only) and a frame's time. */
const uint8_t *mp_frames_last(const mp_frames *f);
double mp_frames_ms(const mp_frames *f, int frame);

#endif
