/* loaded_scene.h — for render tests: a scene loaded, flattened and given a BVH, and freed
 * again. Include once per test program. */
#ifndef TESTS_LOADED_SCENE_H
#define TESTS_LOADED_SCENE_H

#include "raytracer/bvh.h"
#include "scenes/scene.h"

#include <stdbool.h>
#include <stdio.h>

typedef struct loaded { sc_scene *s; sc_geometry g; rt_bvh *bvh; } loaded;

/* false, with the message on stderr, when the scene cannot be loaded. */
static inline bool load(const char *name, loaded *l)
{
    char err[SC_ERR_MAX];
    if (sc_load(name, &l->s, err) != 0) { fprintf(stderr, "  %s\n", err); return false; }
    if (sc_flatten(l->s, &l->g, err) != 0) {
        fprintf(stderr, "  %s\n", err);
        sc_free(l->s);
        return false;
    }
    l->bvh = rt_bvh_build(l->g.positions, l->g.indices, l->g.ntriangles, NULL);
    return l->bvh != NULL;
}

static inline void unload(loaded *l)
{
    rt_bvh_free(l->bvh);
    sc_geometry_free(&l->g);
    sc_free(l->s);
}

#endif
