/* contribs.c — the hybrid's contributions pushed to their Output Merger instance (see
 * internal.h). */
#include "pipelines/hybrid/internal.h"

void plh_push_contribs(gr_ctx *c, int output, plh_contribs *b)
{
    for (uint32_t i = 0, j; i < b->n; i = j) {
        uint64_t key = plrt_blend_key(b->k[i].index, &b->keys);
        for (j = i + 1; j < b->n && plrt_blend_key(b->k[j].index, &b->keys) == key; j++) {}
        gr_push_key_n(c, output, key, &b->k[i], j - i);
    }
    b->n = 0;
}
