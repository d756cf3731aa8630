/* sample_runs.h — sample runs (rt.sample-runs, one per packet of samples or rays): cutting
 * image tiles into them, for the stages that hand pixel work to the ray tracer (rt.tiler:
 * every tile of the image; raster.ztile: each tile once its depth pass is final), and
 * the samples of a run, for the stages that take them (rt.sampler, rt.primary,
 * hybrid.visible).
 *
 * A run covers `samples` consecutive samples of one tile, 8x8-pixel blocks in order
 * (PLRT_BLOCK), `spp` samples per pixel; runs never span tiles. Blocks, not tile rows: a
 * square packet's rays diverge less than a 32x2 strip's, so the packet traversal culls
 * more of the tree for the whole packet. Runs wait in the cutter to be committed
 * PLRT_RUN_BATCH at a time: one reserve and commit per run would be the cutting stage's
 * main cost. */
#ifndef PIPELINES_SAMPLE_RUNS_H
#define PIPELINES_SAMPLE_RUNS_H

#include "pipelines/raytrace/packets.h"

#define PLRT_RUN_BATCH 16

typedef struct plrt_run_cutter {
    int spp;
    uint32_t samples;                     /* per run: the Sampler's packet size */
    int output;                           /* the stage's rt.sample-runs output */
    plrt_sample_run run[PLRT_RUN_BATCH];    /* run[n] is the open run (count 0: empty) */
    int n;
} plrt_run_cutter;

void plrt_runs_init(plrt_run_cutter *r, int spp, uint32_t samples, int output);

/* Cuts tile t into runs, committing each full batch. */
void plrt_runs_cut(plrt_run_cutter *r, gr_ctx *c, const plrt_tile *t);

/* The same a block at a time, for a cutter that leaves some blocks of a tile out: the
 * samples of block (bx, by) of tile t go on in the open run, whose samples (if it has
 * any) must end with the block before it in the tile's order; plrt_runs_end ends the
 * open run, before a block left out and after the tile's last. */
void plrt_runs_cut_block(plrt_run_cutter *r, gr_ctx *c, const plrt_tile *t, int bx, int by);
void plrt_runs_end(plrt_run_cutter *r, gr_ctx *c);

/* Commits the runs still waiting. */
void plrt_runs_flush(plrt_run_cutter *r, gr_ctx *c);

/* The run's r->count samples into out, in its order, for a width x height image: each
 * pixel's centre for spp 1, else positions jittered by a fixed hash of pixel and sample
 * (the same for any worker count). Returns how many it wrote: fewer than r->count when
 * the run goes past its tile (it was cut for another spp), and then only those inside
 * are written; none when its tile or block is not inside the image (callers fail the
 * run when the count falls short). */
uint32_t plrt_run_samples(const plrt_sample_run *r, int width, int height, int spp, plrt_sample *out);

/* The same for a run that came in a packet, into `room` samples: fails the run (named,
 * with what was wrong) and returns 0 unless it has at most `room` samples, lies in the
 * image and gives all r->count of them (a Tiler cut for another spp runs past its tile). */
uint32_t plrt_run_samples_checked(gr_ctx *c, const plrt_sample_run *r, uint32_t room, int width,
                                  int height, int spp, plrt_sample *out);

/* Whether h is the camera ray through its pixel's first sample (as plrt_run_samples
 * places it with f's camera), with a hit: the ray whose hit is the pixel's surface
 * (pipelines/surface.h), one a pixel. A camera ray is one of depth 0 through no blended
 * surface yet, and carries weight 1 / spp (rt.camera, rt.primary, the hybrid's primary
 * hits), which gives the spp. */
bool plrt_surface_ray(const pl_frame *f, const plrt_ray *h);

#endif
