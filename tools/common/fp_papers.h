/* fp_papers.h — the papers' footprint figures, printed beside the study's own in its
 * Markdown: Sanchez et al. 2011 Table III (the ray tracer without and with one bounce,
 * ray-0 and ray-1, average and maximum footprint under each of the four schedulers,
 * 24 threads on a 12-core Xeon) and Sugerman 2010 Table 4.2 (peak queue footprint and
 * thread-slot occupancy of D3D, extended D3D and the ray tracer per scene, simulated
 * CPU-like and GPU-like machines, GRAMPS scheduler). Copied from the papers in
 * /work/shared/papers; never measured here. */
#ifndef TOOLS_FP_PAPERS_H
#define TOOLS_FP_PAPERS_H

#include "tools/common/fp_study.h"

#include <stdio.h>

/* The two reference sections, each table with ours beside it where the study has the
 * same pipeline ("raytrace"; thesis D3D / Ext. D3D / Ray Tracer as raster / hybrid /
 * raytrace) and scene; "-" where it has not. */
void fp_papers_markdown(FILE *out, const fp_study *s);

#endif
