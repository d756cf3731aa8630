/* memory_estimate.h — what a render will allocate, estimated before it starts so that a
 * scene or image too large for the machine is an error naming the sizes, not an
 * out-of-memory kill halfway through. An upper-end estimate: the frame resources the
 * graph's stages declare (cp_graph_resources, sized by pl_resource_bytes), the image,
 * the scene's data and the queues. */
#ifndef TOOLS_MEMORY_ESTIMATE_H
#define TOOLS_MEMORY_ESTIMATE_H

#include <stdbool.h>
#include <stddef.h>

#include "compose/compose.h"
#include "scenes/scene.h"

typedef struct io_memory_estimate {
    double image, buffers, textures, geometry, bvh, queues, total;   /* bytes */
} io_memory_estimate;

/* The frame a render makes and what its graph needs of it. */
typedef struct io_render_size {
    int width, height;
    long tile;                        /* the graph's framebuffer tile (0: the default) */
    int samples;                      /* the graph's multisampling (its msaa; 0 or 1: none) */
    unsigned threads;
    const cp_resource_need *needs;    /* cp_graph_resources with the run's variables */
    int nneeds;
    bool hdr;                         /* the sinks keep their linear colour ("hdr-color"):
                                         a float output, or an image-space stage */
    bool surface;                     /* the stages write depth and normals ("surface"):
                                         a float output */
} io_render_size;

io_memory_estimate io_estimate_memory(const sc_scene *s, size_t nvertices, size_t ntriangles,
                                      const io_render_size *r);

/* "SIZE" in bytes with an optional K, M, G or T suffix (powers of 1024); false when
 * malformed, zero or past 2^60. */
bool io_parse_bytes(const char *text, size_t *out);

#endif
