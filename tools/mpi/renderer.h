/* renderer.h — what every rank renders with: the graph (its own registry and plugins),
 * the scene loaded and flattened, and its BVH when the graph traces rays; and one chunk
 * rendered: a frame of the full image size narrowed to the chunk's region
 * (pl_frame_set_region), so each pixel is the one gramps-render makes. */
#ifndef TOOLS_MPI_RENDERER_H
#define TOOLS_MPI_RENDERER_H

#include "tools/common/render_graph.h"
#include "tools/mpi/counters.h"
#include "tools/mpi/options.h"
#include "tools/mpi/plan.h"

#include <stdint.h>

/* One rank's work, as the statistics report it. */
typedef struct mp_work {
    double chunks;                   /* chunks rendered */
    double busy_ms;                  /* rendering them */
    double comm_ms;                  /* sending pixels and waiting for the next chunk */
    double peak_footprint;           /* largest queue footprint of a chunk, bytes */
    double bytes_sent;               /* in MPI messages */
} mp_work;
#define MP_WORK_FIELDS 5             /* doubles in mp_work, as MPI sends it */

typedef struct mp_renderer {
    mp_options *o;
    rg_setup setup;
    sc_scene *scene;
    sc_geometry geo;
    pl_scene_data data;
    mp_counters counters;            /* summed over the frames rendered here */
    /* The frame this rank's chunks render into, kept while they belong to it: its
     * buffers are made and cleared once per frame, not per chunk. Chunks of one frame
     * are disjoint regions, so each finds its pixels as a fresh frame has them. */
    pl_frame frame;
    int frame_index;
    bool have_setup, have_scene, have_frame;
} mp_renderer;

/* The graph, then the scene, then the BVH if needed. 0, or an exit status (2: a bad
 * --set, 1: anything else) with the message in err. */
int mp_renderer_init(mp_renderer *r, mp_options *o, char err[CP_ERR_MAX]);
void mp_renderer_free(mp_renderer *r);
/* Whether the graph has a raster front end (a stage declares the "triangles"
 * resource: each chunk re-runs the whole geometry). */
bool mp_renderer_rasterizes(const mp_renderer *r);
/* The graph's name for reports: its [graph] name, else the built-in's or file's. */
const char *mp_renderer_graph_name(const mp_renderer *r);

/* Renders chunk c into pixels (its region's rows, packed; mp_chunk_bytes(c) bytes) and
 * adds to w (one thread per renderer; chunks in frame order). 0, or 1 with the message in err. */
int mp_render_chunk(mp_renderer *r, const mp_chunk *c, uint8_t *pixels, mp_work *w,
                    char err[CP_ERR_MAX]);

/* After the last chunk: the open frame's counters join r->counters and it is freed. */
void mp_renderer_end_frame(mp_renderer *r);

#endif
