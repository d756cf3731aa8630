/* memory_estimate.c — see memory_estimate.h. Per-item costs are rounded up from the
 * structures: the flattened geometry holds 8 floats a vertex and 4 words a triangle;
 * the BVH about 2 triangle blocks (96 B each, 4 lanes) and 1.5 nodes of both widths per 4
 * triangles plus the build's temporaries (~100 B a triangle in all); the raster pipeline
 * keeps colour and depth per pixel, the ray tracer three int64 sums; queues and pools are
 * bounded by their capacities, a few MiB per worker. */
#include "tools/common/memory_estimate.h"

#include <errno.h>
#include <stdlib.h>

io_memory_estimate io_estimate_memory(const sc_scene *s, size_t nvertices, size_t ntriangles,
                                      int width, int height, bool raytrace, unsigned threads,
                                      unsigned depth_layers)
{
    io_memory_estimate e = {0};
    const double pixels = (double)width * height;
    e.image = pixels * 4 * 2;                         /* RGBA, and its PNG encoding */
    e.buffers = pixels * (raytrace ? 3 * 8 : 4 + 4);
    if (depth_layers) e.buffers += pixels * (8.0 * depth_layers + 4);
    for (size_t i = 0; i < s->ntextures; i++)
        e.textures += (double)s->textures[i].width * s->textures[i].height * 4;
    e.geometry = (double)nvertices * 8 * 4 + (double)ntriangles * 4 * 4;
    e.bvh = raytrace ? (double)ntriangles * 100 : 0;
    e.queues = (double)(threads ? threads : 1) * 4 * 1048576.0;
    e.total = e.image + e.buffers + e.textures + e.geometry + e.bvh + e.queues;
    return e;
}

bool io_parse_bytes(const char *text, size_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    int shift = 0;
    switch (*end) {
    case 'K': case 'k': shift = 10; end++; break;
    case 'M': case 'm': shift = 20; end++; break;
    case 'G': case 'g': shift = 30; end++; break;
    case 'T': case 't': shift = 40; end++; break;
    }
    double bytes = v * (double)(1ull << shift);
    if (errno || end == text || *end || !(bytes >= 1 && bytes <= 0x1p60)) return false;
    *out = (size_t)bytes;
    return true;
}
