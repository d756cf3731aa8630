/* digest.c — see digest.h. */
#include "scenes/digest.h"

#include <string.h>

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

static uint64_t mix(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * FNV_PRIME;
    return h;
}

static uint64_t mix_material(uint64_t h, const sc_material *m)
{
    h = mix(h, m->name, strnlen(m->name, sizeof m->name));
    h = mix(h, m->albedo, sizeof m->albedo);
    h = mix(h, &m->alpha, sizeof m->alpha);
    h = mix(h, &m->albedo_map.texture, sizeof m->albedo_map.texture);
    h = mix(h, &m->reflectivity, sizeof m->reflectivity);
    h = mix(h, &m->specular, sizeof m->specular);
    return mix(h, &m->specular_exponent, sizeof m->specular_exponent);
}

uint64_t sc_digest(const sc_scene *s, const sc_geometry *g)
{
    uint64_t h = FNV_OFFSET;
    h = mix(h, &g->nvertices, sizeof g->nvertices);
    h = mix(h, &g->ntriangles, sizeof g->ntriangles);
    h = mix(h, g->positions, 3 * g->nvertices * sizeof(float));
    h = mix(h, g->indices, 3 * g->ntriangles * sizeof(uint32_t));
    if (g->texcoords) h = mix(h, g->texcoords, 2 * g->nvertices * sizeof(float));
    if (g->texcoords1) h = mix(h, g->texcoords1, 2 * g->nvertices * sizeof(float));
    if (g->materials) h = mix(h, g->materials, g->ntriangles * sizeof(uint32_t));
    h = mix(h, &s->camera, sizeof s->camera);
    h = mix(h, s->lights, s->nlights * sizeof *s->lights);
    for (size_t i = 0; i < s->nmaterials; i++) h = mix_material(h, &s->materials[i]);
    for (size_t i = 0; i < s->ntextures; i++) {
        const sc_mip_level *l = &s->textures[i].levels[0];
        h = mix(h, &l->width, sizeof l->width);
        h = mix(h, &l->height, sizeof l->height);
        h = mix(h, l->rgba, (size_t)l->width * l->height * 4);
    }
    return h;
}
