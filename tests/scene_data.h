/* scene_data.h — for render tests that run the pipelines' graphs directly: a scene, its
 * flattened geometry and the pipelines' scene data, made ready and freed in one place,
 * and a material looked up by name. Include once per test program. */
#ifndef TESTS_SCENE_DATA_H
#define TESTS_SCENE_DATA_H

#include "pipelines/frame.h"
#include "scenes/scene.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

typedef struct loaded { sc_scene *s; sc_geometry g; pl_scene_data data; } loaded;

/* Flattens l->s (loaded, and changed as the test needs) and prepares its scene data; false,
 * with the message on stderr and l->s freed, when it cannot be flattened. */
static inline bool loaded_ready(loaded *l)
{
    char err[SC_ERR_MAX];
    if (sc_flatten(l->s, &l->g, err) != 0) {
        fprintf(stderr, "  %s\n", err);
        sc_free(l->s);
        return false;
    }
    pl_scene_data_init(&l->data, l->s, &l->g);
    return true;
}

static inline void unload(loaded *l)
{
    pl_scene_data_free(&l->data);
    sc_geometry_free(&l->g);
    sc_free(l->s);
}

/* The material called `name`, or NULL. */
static inline sc_material *material(sc_scene *s, const char *name)
{
    for (size_t m = 0; m < s->nmaterials; m++)
        if (!strcmp(s->materials[m].name, name)) return &s->materials[m];
    return NULL;
}

#endif
