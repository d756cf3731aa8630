/* position_buffer.h — the depth-only pass's vertex buffer: the scene's positions alone
 * (12 bytes a vertex against the interleaved buffer's 32, shaders/vertex_buffer.h),
 * renumbered in the order the index stream first uses them, with the indices
 * renumbered to match; built once per scene (the frame resource "depth-positions",
 * pipelines/frame.h).
 *
 * Why: the VS walks the triangles in draw order and gathers their corners. In the
 * geometry's own vertex order that gather is scattered over the whole array, and every
 * frame most of it comes from beyond L2. Renumbered by first use, a triangle's new
 * corners are the next ones in the array and its others were used a few triangles
 * before, so the gather reads the array front to back, in the lines it just brought in.
 * The values are the geometry's positions, so the VS computes the same bits; the
 * triangles keep their order and primitive ids. */
#ifndef SHADERS_POSITION_BUFFER_H
#define SHADERS_POSITION_BUFFER_H

#include "gramps/api.h"
#include "scenes/scene.h"

#include <stddef.h>
#include <stdint.h>

typedef struct sh_position_buffer {
    float *positions;        /* 3 floats a vertex the triangles use, in first-use order */
    uint32_t *indices;       /* 3 a triangle, in draw order: g->indices renumbered */
} sh_position_buffer;

/* g's position buffer; NULL when out of memory. Free with sh_position_buffer_free. */
GR_API sh_position_buffer *sh_position_buffer_of(const sc_geometry *g);
GR_API void sh_position_buffer_free(sh_position_buffer *b);
/* The bytes sh_position_buffer_of allocates at most for g's sizes. */
GR_API size_t sh_position_buffer_bytes(size_t nvertices, size_t ntriangles);

#endif
