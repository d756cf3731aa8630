/* image.h — image-space stages in the renderers (internal to the stage library): the
 * frame resources they work in, the built-in stage types (image.tonemap, image.fxaa,
 * image.outline) and the runner that pl_render_frame calls once the graph has run.
 *
 * Data flow: the graph's sinks write the image ("color", RGBA8, sRGB-encoded) and their
 * linear colour before the encode ("hdr-color", RGBA f32, values above 1 kept: the frame
 * asks for it because the graph's image-space stages read it) -> the runner copies the
 * frame's region of it ("post"; the image decoded when no sink wrote it) -> each
 * image-space stage of the graph, in section order, per tile, tiles in parallel (a stage
 * with a halo reads "post" and writes "post-swap", and the two swap) -> the final sRGB
 * encode back into "color". A stage with a halo starts a new phase (every tile of its
 * input must be final); the stages without one after it run in the same phase, tile by
 * tile, so a tile's pixels stay in cache from decode to encode. When no stage has a
 * halo there is one phase and no image buffer at all: each tile goes from decode to
 * encode in a tile-sized buffer of its thread's.
 *
 * Regions: when the frame renders part of the image (gramps-render-mpi's chunks), the
 * part is widened by the sum of the stages' halos before the graph runs (pl_render_frame),
 * so that every pixel of the part is computed from the pixels a whole-image render would
 * read: chunks stitch to the whole image's bits. docs/image-space.md. */
#ifndef PIPELINES_IMAGE_IMAGE_H
#define PIPELINES_IMAGE_IMAGE_H

#include "pipelines/frame.h"

/* Tile edges the runner accepts (the graph's `tile`, else PLI_DEFAULT_TILE). */
#define PLI_DEFAULT_TILE 64
#define PLI_MIN_TILE 8
#define PLI_MAX_TILE 256

int pli_register_resources(cp_registry *r, char err[CP_ERR_MAX]);
int pli_register_stages(cp_registry *r, char err[CP_ERR_MAX]);

/* The tile edge the image-space stages run in for a graph: its [graph] `tile` (through
 * its variables) when that is a number in PLI_MIN_TILE..PLI_MAX_TILE, else
 * PLI_DEFAULT_TILE. */
int pli_graph_tile(const cp_graph *g, const cp_vars *vars);

/* The halo the passes need together (the sum of theirs: each reads the one before it
 * through its own halo), or -1 with a message naming the stage when one needs more than
 * a tile (a tile reads at most its eight neighbours). 0 when the frame's output is not
 * colour: the stages do not run on primitive ids, depths or normals. */
int pli_total_halo(const pl_frame *f, const cp_image_pass *p, int n, int tile,
                   char err[CP_ERR_MAX]);

/* Runs the passes over the frame's region, after the graph: decode, the stages, encode
 * (see above), on gr_parallel_parts(workers) threads. false when out of memory (message
 * in err). Nothing to do (no pass, or an output that is not colour) is true. */
bool pli_run(pl_frame *f, const cp_image_pass *p, int n, int tile, unsigned workers,
             char err[CP_ERR_MAX]);

/* The linear value the runner decodes an sRGB byte to: sh_to_srgb8 gives the byte back. */
float pli_decode_srgb8(uint8_t byte);

#endif
