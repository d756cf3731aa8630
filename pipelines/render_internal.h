/* render_internal.h — what pl_render_frame (stages.c) and the kept graph (kept_graph.c)
 * share (not installed). */
#ifndef PIPELINES_RENDER_INTERNAL_H
#define PIPELINES_RENDER_INTERNAL_H

#include "pipelines/stages.h"

/* The worker count a graph's $workers stands for: a simulated run's virtual workers. */
unsigned pl_launch_workers(const gr_launch_opts *launch);

/* The graph's instance for the frame. When it has image-space stages and the frame
 * renders part of the image, the instance is for that part widened by their halo: the
 * frame's region is then the wider one and *widened the part asked for. NULL with a
 * message. */
cp_instance *pl_instantiate(cp_graph *g, pl_frame *frame, const cp_vars *vars,
                            pl_region *widened, char err[CP_ERR_MAX]);

/* One run of the instance on the frame: the frame's clears, the graph (launched, or
 * relaunched when it ran before), its finish hooks and image-space stages. false with
 * a message. */
bool pl_instance_render(cp_instance *in, cp_graph *g, pl_frame *frame, const gr_launch_opts *launch,
                        char err[CP_ERR_MAX]);

#endif
