/* tile_stager.c — see tile_stager.h. */
#include "pipelines/raster/tile_stager.h"

#include <stdlib.h>
#include <string.h>

static void copy_whole(void *dst, const void *src, size_t bytes) { memcpy(dst, src, bytes); }

/* Every chunk free, chunk 0 taken first (so without runs a tile keeps the chunk of its
 * place in the opening order). */
static void free_all(plr_stager *s)
{
    for (int k = 0; k < s->max_open; k++) s->free_chunks[k] = (int16_t)(s->max_open - 1 - k);
    s->nfree = s->max_open;
}

bool plr_stager_init(plr_stager *s, uint32_t ntiles, int max_open, size_t packet_bytes,
                     plr_packet_copy copy, int output, bool runs)
{
    memset(s, 0, sizeof *s);
    s->packet_bytes = packet_bytes;
    s->copy = copy ? copy : copy_whole;
    s->output = output;
    s->runs = runs;
    s->ntiles = ntiles;
    s->max_open = max_open;
    s->first = malloc(ntiles * sizeof *s->first);
    s->last = malloc(ntiles * sizeof *s->last);
    s->held = calloc(ntiles, sizeof *s->held);
    s->sent = calloc(ntiles, sizeof *s->sent);
    s->next = malloc((size_t)max_open * sizeof *s->next);
    s->free_chunks = malloc((size_t)max_open * sizeof *s->free_chunks);
    s->open = malloc((size_t)max_open * sizeof *s->open);
    s->buf = malloc((size_t)max_open * packet_bytes);
    if (!s->first || !s->last || !s->held || !s->sent || !s->next || !s->free_chunks || !s->open || !s->buf) {
        plr_stager_free(s);
        return false;
    }
    for (uint32_t t = 0; t < ntiles; t++) s->first[t] = s->last[t] = -1;
    free_all(s);
    return true;
}

void plr_stager_free(plr_stager *s)
{
    free(s->first);
    free(s->last);
    free(s->held);
    free(s->sent);
    free(s->next);
    free(s->free_chunks);
    free(s->open);
    free(s->buf);
    memset(s, 0, sizeof *s);
}

static unsigned char *chunk_packet(plr_stager *s, int chunk)
{
    return s->buf + (size_t)chunk * s->packet_bytes;
}

static uint32_t packet_count(const unsigned char *p)
{
    uint32_t n;
    memcpy(&n, p, sizeof n);
    return n;
}

/* What follows the instance if it moves: the most chunks in use since the last flush
 * (declared only when that grows: gr_state_bytes also stores to the stage's shared
 * keeps_state flag, which a chunk taken per packet would write thousands of times a
 * frame). */
static void declare_state(plr_stager *s, gr_ctx *c)
{
    int used = s->max_open - s->nfree;
    if (used <= s->declared) return;
    s->declared = used;
    gr_state_bytes(c, (size_t)used * s->packet_bytes);
}

void plr_stager_touched(plr_stager *s, gr_ctx *c)
{
    if (s->touched) gr_state_touched(c, s->touched);
    s->touched = 0;
}

/* Sends the chunk's packet to its tile unless it is empty, and empties it. The commit
 * may hand the worker to another task (Task-Stealing), so what was touched is told
 * first. */
static void send_chunk(plr_stager *s, gr_ctx *c, int chunk, uint32_t tile)
{
    unsigned char *p = chunk_packet(s, chunk);
    if (packet_count(p) == 0) return;
    s->touched += s->packet_bytes;
    plr_stager_touched(s, c);
    gr_window w;
    gr_reserve_out_key(c, s->output, 1, tile, &w);
    s->copy(w.mem, p, s->packet_bytes);
    gr_commit_out(c, s->output, 1);
    s->sent[tile] = 1;
    memset(p, 0, sizeof(uint32_t));
}

/* A free chunk (there is one), its packet empty. */
static int take_chunk(plr_stager *s, gr_ctx *c)
{
    int chunk = s->free_chunks[--s->nfree];
    memset(chunk_packet(s, chunk), 0, sizeof(uint32_t));
    declare_state(s, c);
    return chunk;
}

/* The open tile holding the most full chunks (the first opened of equals). */
static uint32_t fullest_tile(const plr_stager *s)
{
    uint32_t best = s->open[0];
    for (int i = 1; i < s->nopen; i++)
        if (s->held[s->open[i]] > s->held[best]) best = s->open[i];
    return best;
}

/* Sends the tile's full chunks, oldest first, and frees them; its last stays. */
static void send_run(plr_stager *s, gr_ctx *c, uint32_t tile)
{
    for (; s->held[tile]; s->held[tile]--) {
        int chunk = s->first[tile];
        send_chunk(s, c, chunk, tile);
        s->first[tile] = s->next[chunk];
        s->free_chunks[s->nfree++] = (int16_t)chunk;
    }
}

/* Frees a chunk: the fullest tile's run, or everything when no tile holds a full one
 * (more tiles open than the pool has chunks to spare) or without runs. */
static void make_room(plr_stager *s, gr_ctx *c)
{
    uint32_t tile = s->runs ? fullest_tile(s) : 0;
    if (s->runs && s->held[tile]) send_run(s, c, tile);
    else plr_stager_flush(s, c);
}

void *plr_stager_packet(plr_stager *s, gr_ctx *c, uint32_t tile)
{
    int chunk = s->last[tile];
    if (chunk >= 0) return chunk_packet(s, chunk);
    if (!s->nfree) make_room(s, c);
    chunk = take_chunk(s, c);
    s->first[tile] = s->last[tile] = (int16_t)chunk;
    s->held[tile] = 0;
    s->open[s->nopen++] = tile;
    return chunk_packet(s, chunk);
}

void plr_stager_send(plr_stager *s, gr_ctx *c, uint32_t tile)
{
    if (s->last[tile] < 0) return;
    if (!s->runs) {
        send_chunk(s, c, s->last[tile], tile);
        return;
    }
    if (!s->nfree) make_room(s, c);
    if (s->last[tile] < 0) return;               /* make_room sent everything */
    int chunk = take_chunk(s, c);
    s->next[s->last[tile]] = (int16_t)chunk;
    s->last[tile] = (int16_t)chunk;
    s->held[tile]++;
}

/* One round of plr_stager_flush: each open tile's oldest chunk; false when none had one. */
static bool flush_round(plr_stager *s, gr_ctx *c)
{
    bool sent = false;
    for (int i = 0; i < s->nopen; i++) {
        uint32_t tile = s->open[i];
        int chunk = s->first[tile];
        if (chunk < 0) continue;
        send_chunk(s, c, chunk, tile);
        s->first[tile] = chunk == s->last[tile] ? -1 : s->next[chunk];
        sent = true;
    }
    return sent;
}

void plr_stager_flush(plr_stager *s, gr_ctx *c)
{
    while (flush_round(s, c)) {}
    for (int i = 0; i < s->nopen; i++) {
        s->last[s->open[i]] = -1;
        s->held[s->open[i]] = 0;
    }
    s->nopen = 0;
    free_all(s);
    s->declared = 0;
    gr_state_bytes(c, 0);
}
