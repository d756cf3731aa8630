/* float_aovs.h — the float channels gramps-render writes to an OpenEXR file (-o
 * FILE.exr): the rendered image's colour as linear floats, and per pixel the depth and
 * normal of the surface that a ray through the pixel centre hits first.
 *
 *   R, G, B, A    the sinks' linear colour (frame resource "hdr-color", pipelines/frame.h)
 *                 when the graph's sinks wrote it: the colour output, full float
 *                 precision, values above 1 kept; else (another AOV, a plugin's sink)
 *                 the image's bytes decoded, the exact inverse of the sinks' sRGB encode
 *                 (pipelines/image/image.h), A as byte / 255
 *   Z             the hit's distance along the camera's view axis, (p - eye) . forward,
 *                 in scene units; +infinity where the ray hits nothing
 *   N.X, N.Y, N.Z the hit's unit world-space shading normal; 0 where nothing is hit
 *
 * Z and N come from the scene's BVH (one ray a pixel, as the ray tracer's primary rays
 * with one sample), not from the graph. */
#ifndef TOOLS_COMMON_FLOAT_AOVS_H
#define TOOLS_COMMON_FLOAT_AOVS_H

#include "output/exr_encode.h"
#include "pipelines/frame.h"

#define FA_CHANNELS 8

/* The channels of a width x height render of d's scene (its camera) whose RGBA bytes are
 * rgba and whose linear colour is hdr (4 floats a pixel; NULL: decode rgba), into
 * ch[FA_CHANNELS] (names and malloc'ed data: fa_free). false when out of memory. */
bool fa_make(pl_scene_data *d, int width, int height, const uint8_t *rgba, const float *hdr,
             io_exr_channel ch[FA_CHANNELS]);
void fa_free(io_exr_channel ch[FA_CHANNELS]);

#endif
