/* frame_internal.h — what frame.c and frame_resources.c share (not installed). */
#ifndef PIPELINES_FRAME_INTERNAL_H
#define PIPELINES_FRAME_INTERNAL_H

#include "pipelines/frame.h"

/* The frame ready for its next run through a kept graph (kept_graph.c): the camera
 * taken from the scene again, the shading environments made again on first use, the
 * counters at 0 and nothing written yet. Its plain resources stay (the stages' create
 * hooks ask for them again, which owes their clears); those its types' create hooks
 * made (the ordered graph's coarse depth bounds, depth layers), whose contents no clear
 * resets, are made again, in place, except the scene's own. false when out of memory. */
bool pl_frame_restart(pl_frame *f);
/* The second half of that (frame_resources.c). */
bool pl_frame_remake_created(pl_frame *f);

/* Frees every resource the frame made (not the caller's borrowed image). */
void pl_frame_free_resources(pl_frame *f);

/* The caller's pixels as resource t (one not per copy; pl_frame_free leaves them), for
 * a program that reads it after the run. */
void pl_frame_lend(pl_frame *f, const cp_resource_type *t, void *pixels);
/* Resource t's data (not per copy), or NULL when the frame has none. */
void *pl_frame_found(pl_frame *f, const cp_resource_type *t);

#endif
