/* contribs.c — the hybrid's contributions pushed to their Output Merger instance (see
 * internal.h). */
#include "pipelines/hybrid/internal.h"

bool plh_tile_keys_of(const cp_stage_init *i, const char *port, plh_tile_keys *k, char err[CP_ERR_MAX])
{
    const pl_frame *f = i->frame;
    const uint32_t tile = (uint32_t)cp_int(i, "tile"), msaa = (uint32_t)cp_int(i, "msaa");
    const uint32_t tiles_x = ((uint32_t)f->width + tile - 1) / tile, tiles_y = ((uint32_t)f->height + tile - 1) / tile;
    *k = (plh_tile_keys){(uint32_t)f->width, tile, tiles_x, (uint32_t)__builtin_ctz(msaa ? msaa : 1),
                         tile & (tile - 1) ? -1 : __builtin_ctz(tile)};
    const uint32_t subqueues = cp_port_subqueues(i, port);
    if (subqueues == tiles_x * tiles_y) return true;
    snprintf(err, CP_ERR_MAX, "port '%s': the contributions queue set needs one subqueue per %ux%u "
             "framebuffer tile (subqueues = $tiles: %u at %dx%d), not %u", port, tile, tile, tiles_x * tiles_y,
             f->width, f->height, subqueues);
    return false;
}

void plh_push_contribs(gr_ctx *c, int output, plh_contribs *b)
{
    uint32_t from = 0;
    plh_tile_span span = {0, 0, 0};
    uint64_t key = b->n ? plh_span_key(&span, b->k[0].index, &b->keys) : 0;
    for (uint32_t i = 1; i <= b->n; i++) {
        const uint64_t next = i < b->n ? plh_span_key(&span, b->k[i].index, &b->keys) : key + 1;
        if (next == key) continue;
        gr_push_key_n(c, output, key, &b->k[from], i - from);
        from = i;
        key = next;
    }
    b->n = 0;
}
