/* frame_internal.h — what frame.c and frame_resources.c share (not installed). */
#ifndef PIPELINES_FRAME_INTERNAL_H
#define PIPELINES_FRAME_INTERNAL_H

#include "pipelines/frame.h"

/* Frees every resource the frame made (not the caller's borrowed image). */
void pl_frame_free_resources(pl_frame *f);

#endif
