/* memory_estimate.h — what a render will allocate, estimated before it starts so that a
 * scene or image too large for the machine is an error naming the sizes, not an
 * out-of-memory kill halfway through. An upper-end estimate, from the sizes the
 * pipelines allocate (pipelines/raster/raster.c, raytrace.c, raytracer/bvh.h). */
#ifndef TOOLS_MEMORY_ESTIMATE_H
#define TOOLS_MEMORY_ESTIMATE_H

#include <stdbool.h>
#include <stddef.h>

#include "scenes/scene.h"

typedef struct io_memory_estimate {
    double image, buffers, textures, geometry, bvh, queues, total;   /* bytes */
} io_memory_estimate;

/* depth_layers: the depth layers a depth-only pass keeps (raster.zraster copies: 8
 * bytes a pixel each, with a 4-byte visibility buffer), 0 for none. */
io_memory_estimate io_estimate_memory(const sc_scene *s, size_t nvertices, size_t ntriangles,
                                      int width, int height, bool raytrace, unsigned threads,
                                      unsigned depth_layers);

/* "SIZE" in bytes with an optional K, M, G or T suffix (powers of 1024); false when
 * malformed, zero or past 2^60. */
bool io_parse_bytes(const char *text, size_t *out);

#endif
