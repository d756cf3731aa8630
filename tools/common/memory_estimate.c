/* memory_estimate.c — see memory_estimate.h. Per-item costs are rounded up from the
 * structures: the flattened geometry holds 8 floats a vertex (10 with a texture
 * coordinate set 1) and 4 words a triangle, the raster graphs' vertex buffer 8 floats
 * a vertex more, and the depth-only pass's positions 3 floats a vertex and 3 words a
 * triangle more;
 * the resources' sizes are their types' (the BVH about 100 bytes a triangle with its
 * build's temporaries); queues and pools are bounded by their capacities, a few MiB per
 * worker. */
#include "tools/common/memory_estimate.h"

#include "pipelines/frame.h"
#include "pipelines/surface.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The frame resources' bytes into e: the BVH apart; the image ("color") is the
 * program's, counted as e->image; the raster vertex buffer and the depth-only pass's
 * positions, copies of the vertices, as geometry. */
static void add_resources(io_memory_estimate *e, size_t nvertices, size_t ntriangles,
                          const io_render_size *r)
{
    for (int i = 0; i < r->nneeds; i++) {
        const cp_resource_type *t = r->needs[i].type;
        if (t->extent == CP_PER_SAMPLE && r->samples <= 1) continue;   /* asked for only
                                                                           when multisampling */
        if ((pl_resource_is_hdr(t) || r->needs[i].access & CP_WITH_HDR) && !r->hdr)
            continue;                                                    /* asked for only
                                                                           when read */
        if (t == &pl_surface_resource && !r->surface) continue;
        if (t == &pl_raster_vertices_resource) {
            e->geometry += (double)sh_vertices_bytes(nvertices);
            continue;
        }
        if (t == &pl_depth_positions_resource) {
            e->geometry += (double)sh_position_buffer_bytes(nvertices, ntriangles);
            continue;
        }

        double bytes = pl_resource_bytes(t, r->width, r->height, r->samples, r->tile, ntriangles) *
                       (t->per_copy ? r->needs[i].copies : 1);
        if (!strcmp(t->name, "bvh")) e->bvh += bytes;
        else if (strcmp(t->name, "color")) e->buffers += bytes;
    }
}

io_memory_estimate io_estimate_memory(const sc_scene *s, size_t nvertices, size_t ntriangles,
                                      const io_render_size *r)
{
    io_memory_estimate e = {0};
    e.image = (double)r->width * r->height * 4 * 2;  /* RGBA, and its PNG encoding */
    add_resources(&e, nvertices, ntriangles, r);
    for (size_t i = 0; i < s->ntextures; i++)
        e.textures += (double)sc_texture_bytes(&s->textures[i]);
    bool set1 = false;
    for (size_t i = 0; i < s->nmeshes; i++) set1 |= s->meshes[i].texcoords1 != NULL;
    e.geometry += (double)nvertices * (set1 ? 10 : 8) * 4 + (double)ntriangles * 4 * 4;
    e.queues = (double)(r->threads ? r->threads : 1) * 4 * 1048576.0;
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
