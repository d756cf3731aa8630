/* raytrace.h — the packet ray tracer as a GRAMPS graph (thesis Fig. 4.2):
 *
 *   Tiler -> Primary -> Intersect -> Shade -> Shadow Intersect -> Blend
 *                          ^-----------'  (reflection rays: the cycle)
 *
 * The Tiler (a Thread stage) cuts tiles into runs of samples; Primary (the thesis'
 * Sampler and Camera in one task per run), Intersect, Shade and Shadow are Shader
 * stages; all five run in a copy per worker group (pipelines/graphs/raytrace.graph),
 * each Tiler copy taking its own pixel bands. Blend is a Thread stage with an instance
 * per subqueue of the contributions set. Primary packets cover 8x8-pixel blocks; Intersect writes hits into its input packet (in
 * place). Shade pushes shadow rays and reflection rays, which the runtime coalesces
 * into full packets, and each ray's direct contribution to its pixel's Blend instance;
 * Shadow Intersect pushes the unoccluded lights' terms likewise. Contributions are
 * converted to 64-bit fixed point where they are made, and Blend adds integers, so the
 * image is bit-identical whatever order they arrive in and whichever instance adds
 * them (any worker count, any run). */
#ifndef PIPELINES_RAYTRACE_H
#define PIPELINES_RAYTRACE_H

#include "gramps/gramps.h"
#include "scenes/camera.h"
#include "shaders/color.h"
#include "raytracer/trace.h"

typedef struct plrt_config {
    int width, height;
    int spp;                       /* jittered samples per pixel (1 = pixel centres) */
    int bounces;                   /* reflection depth (default 1) */
    int packet_rays;               /* rays per packet, 1..64 (default 64) */
    int tile;                      /* Tiler's tile edge in pixels (default 32) */
    uint32_t runs_capacity;        /* Tiler -> Primary queue capacity in runs (default 64) */
    float min_weight;              /* drop rays whose weight falls below (default 0.01) */
    sh_aov aov;
    unsigned workers;              /* 0: all hardware threads */
    /* Runtime options besides the worker count (scheduler, journal, profile...): copied
     * into gr_launch with `workers` set from above. Zero: the runtime's defaults. */
    gr_launch_opts launch;
} plrt_config;

typedef struct plrt_counts {
    uint64_t primary, shadow, secondary;
} plrt_counts;

GR_API void plrt_config_default(plrt_config *c);

/* Renders into rgba (width*height*4). Returns the finished graph (for statistics; the
 * caller destroys it) or NULL with a message in err. */
GR_API gr_graph *plrt_render(const sc_scene *scene, const sc_geometry *geo, const rt_bvh *bvh,
                     const plrt_config *cfg, uint8_t *rgba, plrt_counts *counts,
                     char err[SC_ERR_MAX]);
/* The same frame after frame, the graph kept in `keep` (see plr_render_kept). */
typedef struct pl_kept_builtin pl_kept_builtin;
GR_API const gr_graph *plrt_render_kept(pl_kept_builtin *keep, const sc_scene *scene,
                                        const sc_geometry *geo, const rt_bvh *bvh,
                                        const plrt_config *cfg, uint8_t *rgba, plrt_counts *counts,
                                        char err[SC_ERR_MAX]);

#endif
