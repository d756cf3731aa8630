/* frame_internal.h — what frame.c and frame_resources.c share (not installed). */
#ifndef PIPELINES_FRAME_INTERNAL_H
#define PIPELINES_FRAME_INTERNAL_H

#include "pipelines/frame.h"

/* Frees every resource the frame made (not the caller's borrowed image). */
void pl_frame_free_resources(pl_frame *f);

/* The caller's pixels as resource t (one not per copy; pl_frame_free leaves them), for
 * a program that reads it after the run. */
void pl_frame_lend(pl_frame *f, const cp_resource_type *t, void *pixels);
/* Resource t's data (not per copy), or NULL when the frame has none. */
void *pl_frame_found(pl_frame *f, const cp_resource_type *t);

#endif
