/* float_aovs.h — the float channels gramps-render writes to an OpenEXR file (-o
 * FILE.exr): the rendered image's colour as linear floats, and per pixel the depth and
 * normal of the visible surface, all from the graph's run.
 *
 *   R, G, B, A    the sinks' linear colour (frame resource "hdr-color", pipelines/frame.h)
 *                 when the graph's sinks wrote it: the colour output, full float
 *                 precision, values above 1 kept; else (another AOV, a plugin's sink)
 *                 the image's bytes decoded, the exact inverse of the sinks' sRGB encode
 *                 (pipelines/image/image.h), A as byte / 255
 *   Z             the visible surface's distance along the camera's view axis,
 *                 (p - eye) . forward, in scene units; +infinity where nothing is seen
 *   N.X, N.Y, N.Z its unit world-space shading normal, turned to the viewer; 0 where
 *                 nothing is seen
 *
 * Z and N are the frame resource "surface" (pipelines/surface.h) that the graph's
 * visibility stages wrote; a graph none of whose stages writes it gives R, G, B, A only. */
#ifndef TOOLS_COMMON_FLOAT_AOVS_H
#define TOOLS_COMMON_FLOAT_AOVS_H

#include "output/exr_encode.h"
#include "pipelines/surface.h"

#define FA_CHANNELS 8

/* The channels of a width x height render whose RGBA bytes are rgba, whose linear colour
 * is hdr (4 floats a pixel; NULL: decode rgba) and whose surfaces are surface (NULL:
 * none written), into ch[FA_CHANNELS] (names and malloc'ed data: fa_free); returns how
 * many (8, or 4 without surfaces), 0 when out of memory. */
int fa_make(int width, int height, const uint8_t *rgba, const float *hdr, const pl_surface *surface,
            io_exr_channel ch[FA_CHANNELS]);
void fa_free(io_exr_channel ch[FA_CHANNELS]);

#endif
