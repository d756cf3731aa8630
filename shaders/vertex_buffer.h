/* vertex_buffer.h — the raster vertex buffer: a scene's vertex attributes interleaved
 * per vertex (position, normal, uv: 32 bytes, one vertex never straddles a cache line),
 * built once per scene (the frame resource "raster-vertices", pipelines/frame.h).
 *
 * Data flow: sc_geometry (separate position, normal and uv arrays) -> sh_vertices_interleave
 * -> the vertex shader (sh_vs_vertices_of, sh_vs_attrs). The index stream visits the
 * vertices in no useful order, so each vertex the VS reads costs a cache miss per array it
 * touches: interleaved, a vertex is one miss, and the attribute copies after the
 * position gather hit the lines it brought in. Vertex numbers are the geometry's, so
 * sc_geometry.indices index both. */
#ifndef SHADERS_VERTEX_BUFFER_H
#define SHADERS_VERTEX_BUFFER_H

#include "gramps/api.h"
#include "rasterizer/raster.h"
#include "scenes/scene.h"

#include <string.h>

/* The VS's attributes of a vertex, in the order of rs_vertex.attr (RS_ATTRS floats). */
typedef struct sh_vertex {
    float position[3], normal[3], uv[2];
} sh_vertex;

_Static_assert(sizeof(sh_vertex) == 32, "two vertices per 64-byte line, none straddling one");
_Static_assert(sizeof(sh_vertex) == RS_ATTRS * sizeof(float), "an sh_vertex is a corner's attributes");

/* g's vertices interleaved (uv 0 where g has no texcoords), 64-byte aligned; NULL when
 * out of memory. Free with sh_vertices_free. */
GR_API sh_vertex *sh_vertices_interleave(const sc_geometry *g);
GR_API void sh_vertices_free(sh_vertex *v);
/* The bytes sh_vertices_interleave allocates for nvertices vertices. */
GR_API size_t sh_vertices_bytes(size_t nvertices);

/* Vertex v's attributes: world position, normal and uv (inline: the VS copies them per
 * triangle corner). */
static inline void sh_vs_attrs(const sh_vertex *vertices, uint32_t v, float attr[RS_ATTRS])
{
    memcpy(attr, &vertices[v], sizeof vertices[v]);
}

/* The same read from g's separate arrays, for a single vertex (a ray hit's corners) where
 * no buffer is at hand; uv 0 where g has no texcoords. */
GR_API void sh_vertex_of(const sc_geometry *g, uint32_t v, float attr[RS_ATTRS]);

#endif
