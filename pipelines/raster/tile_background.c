/* tile_background.c — the sort-middle graph writes the image's background itself, so the
 * frame clears no colour buffer before its run (docs/frame-resources.md):
 *
 * - a Tile-Shade instance writes every pixel of its tile: it fills the tile with the
 *   background before shading it (tile_shade.c, tile_shade_msaa.c), which also brings
 *   the lines its shaded pixels go to into its cache;
 * - each Bin copy, once its input is done, writes the background of its share of the
 *   tiles (the tile rows whose number modulo the copies is its copy; a run of such tiles
 *   in a row as one rectangle) that it sent no triangle to, and marks them in the
 *   frame resource "cleared-tiles". Tile-Shade writes nothing before every Bin is done
 *   (its subqueue closes when the last one ends), so a Bin's background never lands on
 *   a shaded pixel, and a tile no Bin sent anything to gets its background in parallel,
 *   inside the run;
 * - Tile-Shade's finish hook writes the background of any tile that neither had an
 *   instance nor was marked (a graph whose binner is not raster.bin), so the image is
 *   whole whatever feeds it; the frame counter "tiles_filled_after_run" counts them
 *   (serial work after the run: 0 in the built-in graphs). */
#include "pipelines/raster/internal.h"

#include <stdlib.h>
#include <wchar.h>

void *plr_cleared_tiles_create(void *frame, const char *owner)
{
    (void)frame, (void)owner;
    return calloc(1, sizeof(plr_cleared_tiles));   /* marks: plr_cleared_tiles_reserve */
}

void plr_cleared_tiles_destroy(void *data)
{
    plr_cleared_tiles *c = data;
    if (c) free(c->mark);
    free(c);
}

bool plr_cleared_tiles_reserve(plr_cleared_tiles *c, size_t tiles)
{
    if (!c->mark) c->mark = calloc(tiles, sizeof *c->mark);
    return c->mark != NULL;
}

_Static_assert(sizeof(wchar_t) == sizeof(uint32_t), "wmemset fills 32-bit pixels");

/* The C library's fill of wide characters: 32-bit words, as the pixels are (an int and
 * an unsigned int may alias), with the stores of its memset. */
void plr_fill_background(const plr_state *s, const tile_rect *r)
{
    for (int y = r->y0; y < r->y1; y++)
        wmemset((wchar_t *)&s->color[(size_t)y * (size_t)s->width + (size_t)r->x0], (wchar_t)s->clear_color,
                (size_t)(r->x1 - r->x0));
}

/* Tiles [tx0, tx1) of tile row ty, all rendered: their background as one rectangle (a
 * run of them is written row by row, as wide as it is), marked. */
static void clear_span(const plr_state *s, int ty, int tx0, int tx1)
{
    tile_rect first, last;
    plr_tile_rect_at(&s->rc, tx0, ty, &first);
    plr_tile_rect_at(&s->rc, tx1 - 1, ty, &last);
    plr_fill_background(s, &(tile_rect){first.ox, first.oy, first.x0, first.y0, last.x1, last.y1});
    for (int tx = tx0; tx < tx1; tx++) s->cleared->mark[ty * s->tiles_x + tx] = s->cleared->run;
}

void plr_bin_clear_unsent(const plr_state *s, const uint8_t *sent)
{
    if (!s->cleared) return;
    for (int ty = (int)s->replica; ty < s->tiles_y; ty += (int)s->replicas)
        for (int tx = 0; tx < s->tiles_x;) {
            tile_rect r;
            const bool clear = !sent[ty * s->tiles_x + tx] && plr_tile_rect_at(&s->rc, tx, ty, &r);
            int end = tx + 1;
            while (clear && end < s->tiles_x && !sent[ty * s->tiles_x + end] && plr_tile_rect_at(&s->rc, end, ty, &r))
                end++;
            if (clear) clear_span(s, ty, tx, end);
            tx = end;
        }
}

void plr_tile_shade_finish(void *state, void *frame)
{
    (void)frame;
    plr_state *s = state;
    const uint32_t tiles = (uint32_t)(s->tiles_x * s->tiles_y);
    for (uint32_t t = 0; t < tiles; t++) {
        tile_rect r;
        if (s->visited[t] || !plr_tile_rect(&s->rc, t, &r) || s->cleared->mark[t] == s->cleared->run) continue;
        plr_fill_background(s, &r);
        atomic_fetch_add_explicit(s->filled_late, 1, memory_order_relaxed);
    }
}
