/* vertex_buffer.c — interleaving a scene's vertex attributes (see the header). */
#include "shaders/vertex_buffer.h"

#include <stdlib.h>

/* A multiple of the line size, as aligned_alloc requires of the size. */
size_t sh_vertices_bytes(size_t nvertices)
{
    size_t bytes = (nvertices ? nvertices : 1) * sizeof(sh_vertex);
    return (bytes + 63) & ~(size_t)63;
}

sh_vertex *sh_vertices_interleave(const sc_geometry *g)
{
    if (g->nvertices > SIZE_MAX / sizeof(sh_vertex) - 64) return NULL;
    sh_vertex *v = aligned_alloc(64, sh_vertices_bytes(g->nvertices));
    if (!v) return NULL;
    for (size_t i = 0; i < g->nvertices; i++) {
        float attr[RS_ATTRS];
        sh_vertex_of(g, (uint32_t)i, attr);
        memcpy(&v[i], attr, sizeof v[i]);
    }
    return v;
}

void sh_vertex_of(const sc_geometry *g, uint32_t v, float attr[RS_ATTRS])
{
    memcpy(attr, g->positions + 3 * (size_t)v, 3 * sizeof(float));
    memcpy(attr + 3, g->normals + 3 * (size_t)v, 3 * sizeof(float));
    if (g->texcoords) memcpy(attr + 6, g->texcoords + 2 * (size_t)v, 2 * sizeof(float));
    else attr[6] = attr[7] = 0.0f;
}

void sh_vertices_free(sh_vertex *v)
{
    free(v);
}
