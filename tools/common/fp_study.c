/* fp_study.c — finding a configuration in the footprint study's matrix by name. */
#include "tools/common/fp_study.h"

#include <string.h>

static int index_of(const char *const *names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], name)) return i;
    return -1;
}

const fp_summary *fp_study_find(const fp_study *s, const char *scene, const char *pipeline,
                                const char *scheduler, unsigned workers)
{
    int sc = index_of(s->scenes, s->nscenes, scene);
    int p = index_of(s->pipelines, s->npipelines, pipeline);
    int k = index_of(s->schedulers, s->nschedulers, scheduler), w = -1;
    for (int i = 0; i < s->nworkers; i++)
        if (s->workers[i] == workers) w = i;
    if (sc < 0 || p < 0 || k < 0 || w < 0) return NULL;
    return &s->cells[fp_cell_index(s, sc, p, w, k)];
}
