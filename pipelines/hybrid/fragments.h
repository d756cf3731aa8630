/* fragments.h — the Extended Direct3D graph's fragments with multisampling (msaa > 1):
 * from the depth pass's visibility per sample (raster.ztile's), one fragment per pixel
 * per visible triangle, as the raster graphs shade once per pixel per triangle.
 *
 * A pixel's samples are grouped by what they see (a primitive, or the background); each
 * group is a fragment, named by its first sample k: its rays and contributions carry
 * the index pixel * msaa + k (a "slot"), so the Output Merger sums each fragment apart
 * and resolves the pixel as the raster graphs do, from its samples' bytes (rt.blend with
 * msaa). A fragment is shaded at the pixel centre, as Direct3D shades without
 * `centroid`: the camera ray through the centre against the fragment's triangle with the
 * ray tracer's watertight test where it hits (the hit -p hybrid shades without
 * multisampling), else on the triangle's plane with its weights extrapolated (the centre
 * lies outside the triangle, on an edge pixel). Internal to the hybrid stages. */
#ifndef PIPELINES_HYBRID_FRAGMENTS_H
#define PIPELINES_HYBRID_FRAGMENTS_H

#include "pipelines/hybrid/primary_hits.h"
#include "rasterizer/samples.h"

/* The fragments of `pixel`, for a depth pass of msaa samples per pixel, into
 * out[0..n) in the order of their first samples; returns n (at least 1). A background
 * fragment's ray is not made (a miss: only its weight, pixel and hit are set). c: the
 * task counting them. */
int plh_pixel_fragments(const gr_ctx *c, const plh_primary *p, int msaa, uint32_t pixel,
                        plrt_ray out[RS_MAX_SAMPLES]);

/* The samples of `pixel` that see what its sample k sees (a mask, bit k set). */
uint32_t plh_fragment_samples(const plh_primary *p, int msaa, uint32_t pixel, int k);

/* The camera ray through sample k of `pixel` (the depth pass's sample position; k < 0:
 * the pixel centre) with its hit on primitive prim, found as a fragment's (above), into
 * r; its slot pixel * msaa + max(k, 0), weight 1, the camera's cone. */
void plh_camera_hit(const plh_primary *p, int msaa, uint32_t pixel, int k, uint32_t prim, plrt_ray *r);

#endif
