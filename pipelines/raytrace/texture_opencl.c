/* texture_opencl.c — the scene's textures on the OpenCL device for rt.shade's kernel:
 * every mip level of every texture copied once per scene into one texel buffer, and a
 * table of where each level starts, which shade.cl samples as shaders/texture_sample.c
 * does (shade_opencl.h). */
#include "pipelines/raytrace/shade_opencl.h"

#include <stdlib.h>
#include <string.h>

void plrt_device_textures_free(plrt_device_textures *t)
{
    ac_buffer_free(t->texels);
    ac_buffer_free(t->table);
    t->texels = t->table = NULL;
}

/* The table for s's textures, and how many texels they have in all; -1 past 4G. */
static int64_t table_of(const sc_scene *s, plrt_shade_texture *table)
{
    uint64_t at = 0;
    for (size_t i = 0; i < s->ntextures; i++) {
        const sc_texture *t = &s->textures[i];
        table[i] = (plrt_shade_texture){.nlevels = (uint32_t)t->nlevels};
        for (int l = 0; l < t->nlevels && l < SC_MAX_MIP_LEVELS; l++) {
            table[i].offset[l] = (uint32_t)at;
            table[i].width[l] = (uint32_t)t->levels[l].width;
            table[i].height[l] = (uint32_t)t->levels[l].height;
            at += (uint64_t)t->levels[l].width * (uint64_t)t->levels[l].height;
            if (at > UINT32_MAX) return -1;
        }
    }
    return (int64_t)at;
}

/* Every level's texels side by side, in table order. */
static unsigned char *texels_of(const sc_scene *s, size_t texels)
{
    unsigned char *all = malloc(4 * texels + 4), *at = all;
    for (size_t i = 0; all && i < s->ntextures; i++)
        for (int l = 0; l < s->textures[i].nlevels && l < SC_MAX_MIP_LEVELS; l++) {
            const sc_mip_level *m = &s->textures[i].levels[l];
            const size_t bytes = 4 * (size_t)m->width * (size_t)m->height;
            memcpy(at, m->rgba, bytes);
            at += bytes;
        }
    return all;
}

int plrt_device_textures_make(plrt_device_textures *t, ac_device *dev, const sc_scene *s,
                              char err[AC_ERR_MAX])
{
    *t = (plrt_device_textures){0};
    plrt_shade_texture *table = calloc(s->ntextures + 1, sizeof *table);
    const int64_t texels = table ? table_of(s, table) : 0;
    unsigned char *all = table && texels >= 0 ? texels_of(s, (size_t)texels) : NULL;
    if (!all) {
        snprintf(err, AC_ERR_MAX, texels < 0 ? "the scene's textures have more than 4G texels, more "
                 "than the OpenCL kernel addresses" : "out of memory");
        free(table);
        return -1;
    }
    t->texels = ac_upload(dev, all, 4 * (size_t)texels + 4, err);
    t->table = t->texels ? ac_upload(dev, table, (s->ntextures + 1) * sizeof *table, err) : NULL;
    free(all);
    free(table);
    if (t->table) return 0;
    plrt_device_textures_free(t);
    return -1;
}
