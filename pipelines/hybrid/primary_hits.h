/* primary_hits.h — camera rays with their hits taken from the visibility buffer of a
 * depth-only raster pass (raster.ztile's), for the hybrid stages that start from a run
 * of samples: hybrid.visible (hybrid-visibility.graph) and hybrid.ps (hybrid.graph).
 *
 * For a pixel the raster pass saw primitive P, the camera ray is tested against P alone
 * with the ray tracer's own watertight triangle test, whose answer is bit-identical to
 * the BVH traversal's for that triangle (tri_intersect.h): wherever rasterization and ray
 * casting agree on visibility, the hit is the ray tracer's exactly (and its u, v are the
 * perspective-correct weights at the sample). A ray that misses P (a jittered sample off
 * the pixel centre, an edge the two methods resolve differently) is traced through the
 * BVH. With more than one sample per pixel a sample lies off its pixel's centre, where
 * a nearer surface than P may cover it: it is tested against P (or taken for a miss
 * where the centre saw nothing) only where the pixel's eight neighbours, all in its
 * tile, saw the same as its centre, else traced through the BVH with the other such
 * samples of its run as one packet (so where an edge passes through the pixel its
 * samples are the ray tracer's). With one sample per pixel, where nothing was
 * rasterized the ray is not made (a miss: only its weight and pixel are set). Internal
 * to the hybrid stages. */
#ifndef PIPELINES_HYBRID_PRIMARY_HITS_H
#define PIPELINES_HYBRID_PRIMARY_HITS_H

#include "pipelines/stages.h"
#include "pipelines/raytrace/packets.h"
#include "pipelines/hybrid/tally.h"

typedef struct plh_primary {
    const pl_frame *frame;
    const uint32_t *vis;                  /* visible primitive + 1 per pixel, or per sample
                                             with msaa > 1 (0: none) */
    const sc_geometry *geo;
    const rt_bvh *bvh;
    int spp;
    float weight, spread;                 /* spread: the camera rays' cone (plrt_camera_spread) */
    uint32_t packet;                      /* the stage's rays per output packet */
    plh_tally from_raster, traced;        /* primary hits taken from the depth pass, traced */
} plh_primary;

/* For stage i (its `spp` parameter, its output `port`'s packet size) after a depth pass
 * of msaa samples per pixel: false with a message in err when a counter, the visibility
 * buffer or the BVH cannot be had. */
bool plh_primary_init(plh_primary *p, const cp_stage_init *i, const char *port, int msaa,
                      char err[CP_ERR_MAX]);
/* Its counters into the frame's after a run (the stage's finish hook); their memory freed
 * (also after a failed plh_primary_init). */
void plh_primary_fold(plh_primary *p);
void plh_primary_free(plh_primary *p);

/* A stage that adds the background of the samples the raster pass saw nothing at to
 * their pixels' sums itself (sums.h's misses: one sample per pixel, after a cutter that
 * clears the sums, which only this task's sample adds to before the sums are encoded):
 * the frame's sums, NULL where it may not, and what such a sample adds (its weight times
 * the background in fixed point; nothing for an AOV). */
typedef struct plh_miss_sums {
    int64_t *sums;
    int64_t add[3];
} plh_miss_sums;

/* For stage i after plh_primary_init, `asked` by its parameter: false with a message in
 * err when the sums cannot be had. */
bool plh_miss_sums_init(plh_miss_sums *m, const cp_stage_init *i, const plh_primary *p, bool asked,
                        char err[CP_ERR_MAX]);

/* The rays of a run's samples (sample_runs.h) with their hits, into rays[0..n) in the
 * run's order; returns n. With `misses` (its sums not NULL) a sample the raster pass saw
 * nothing at is summed there and makes no ray. A run longer than the packet or than its
 * tile fails the task's assertion. */
uint32_t plh_primary_hits(gr_ctx *c, const plh_primary *p, const plrt_sample_run *run,
                          const plh_miss_sums *misses, plrt_ray *rays);

#endif
