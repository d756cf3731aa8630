/* tile_stager.c — see tile_stager.h. */
#include "pipelines/raster/tile_stager.h"

#include <stdlib.h>
#include <string.h>

static void copy_whole(void *dst, const void *src, size_t bytes) { memcpy(dst, src, bytes); }

bool plr_stager_init(plr_stager *s, uint32_t ntiles, int max_open, size_t packet_bytes,
                     plr_packet_copy copy, int output)
{
    memset(s, 0, sizeof *s);
    s->packet_bytes = packet_bytes;
    s->copy = copy ? copy : copy_whole;
    s->output = output;
    s->ntiles = ntiles;
    s->max_open = max_open;
    s->slot_of = malloc(ntiles * sizeof *s->slot_of);
    s->tile_of = malloc((size_t)max_open * sizeof *s->tile_of);
    s->buf = malloc((size_t)max_open * packet_bytes);
    if (!s->slot_of || !s->tile_of || !s->buf) {
        plr_stager_free(s);
        return false;
    }
    for (uint32_t t = 0; t < ntiles; t++) s->slot_of[t] = -1;
    return true;
}

void plr_stager_free(plr_stager *s)
{
    free(s->slot_of);
    free(s->tile_of);
    free(s->buf);
    memset(s, 0, sizeof *s);
}

static unsigned char *slot_packet(plr_stager *s, int slot)
{
    return s->buf + (size_t)slot * s->packet_bytes;
}

static uint32_t packet_count(const unsigned char *p)
{
    uint32_t n;
    memcpy(&n, p, sizeof n);
    return n;
}

static void send_slot(plr_stager *s, gr_ctx *c, int slot)
{
    unsigned char *p = slot_packet(s, slot);
    if (packet_count(p) == 0) return;
    gr_window w;
    gr_reserve_out_key(c, s->output, 1, s->tile_of[slot], &w);
    s->copy(w.mem, p, s->packet_bytes);
    gr_commit_out(c, s->output, 1);
    memset(p, 0, sizeof(uint32_t));
}

void *plr_stager_packet(plr_stager *s, gr_ctx *c, uint32_t tile)
{
    int slot = s->slot_of[tile];
    if (slot >= 0) return slot_packet(s, slot);
    if (s->nopen == s->max_open) plr_stager_flush(s, c);
    slot = s->nopen++;
    gr_state_bytes(c, (size_t)s->nopen * s->packet_bytes);   /* what follows the instance */
    s->slot_of[tile] = (int16_t)slot;
    s->tile_of[slot] = tile;
    unsigned char *p = slot_packet(s, slot);
    memset(p, 0, sizeof(uint32_t));
    return p;
}

void plr_stager_send(plr_stager *s, gr_ctx *c, uint32_t tile)
{
    if (s->slot_of[tile] >= 0) send_slot(s, c, s->slot_of[tile]);
}

void plr_stager_flush(plr_stager *s, gr_ctx *c)
{
    for (int slot = 0; slot < s->nopen; slot++) {
        send_slot(s, c, slot);
        s->slot_of[s->tile_of[slot]] = -1;
    }
    s->nopen = 0;
    gr_state_bytes(c, 0);
}
