/* position_buffer.c — a scene's positions in first-use order (see the header). */
#include "shaders/position_buffer.h"

#include <stdlib.h>
#include <string.h>

#define UNUSED_VERTEX UINT32_MAX

size_t sh_position_buffer_bytes(size_t nvertices, size_t ntriangles)
{
    return sizeof(sh_position_buffer) + nvertices * 3 * sizeof(float) + ntriangles * 3 * sizeof(uint32_t);
}

/* Renumbers g's indices into b->indices by first use, copying each vertex's position
 * to its new place as it is first met. renumber: nvertices words, UNUSED_VERTEX each. */
static void renumber(const sc_geometry *g, uint32_t *renumber, sh_position_buffer *b)
{
    uint32_t next = 0;
    for (size_t i = 0; i < 3 * g->ntriangles; i++) {
        const uint32_t v = g->indices[i];
        if (renumber[v] == UNUSED_VERTEX) {
            renumber[v] = next;
            memcpy(&b->positions[3 * (size_t)next], &g->positions[3 * (size_t)v], 3 * sizeof(float));
            next++;
        }
        b->indices[i] = renumber[v];
    }
}

sh_position_buffer *sh_position_buffer_of(const sc_geometry *g)
{
    if (g->nvertices >= UNUSED_VERTEX || g->ntriangles > SIZE_MAX / (3 * sizeof(uint32_t)) ||
        g->nvertices > SIZE_MAX / (3 * sizeof(float)))
        return NULL;
    sh_position_buffer *b = calloc(1, sizeof *b);
    uint32_t *map = malloc((g->nvertices ? g->nvertices : 1) * sizeof *map);
    if (b) {
        b->positions = malloc((g->nvertices ? g->nvertices : 1) * 3 * sizeof(float));
        b->indices = malloc((g->ntriangles ? g->ntriangles : 1) * 3 * sizeof(uint32_t));
    }
    if (!b || !map || !b->positions || !b->indices) {
        free(map);
        sh_position_buffer_free(b);
        return NULL;
    }
    memset(map, 0xff, g->nvertices * sizeof *map);
    renumber(g, map, b);
    free(map);
    return b;
}

void sh_position_buffer_free(sh_position_buffer *b)
{
    if (!b) return;
    free(b->positions);
    free(b->indices);
    free(b);
}
