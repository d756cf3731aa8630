/* close_wake.c — the order in which a queue's close wakes its blocked consumers
 * (gr_close_queue, queue.c): the one whose subqueue received the most packets first.
 *
 * Why: a sort-middle sink (the raster graph's Tile-Shade, one instance per tile) does
 * its heaviest work, shading the tile, only once its subqueue closes, so a close makes
 * dozens of long activations runnable at once, all on the closing worker's deque, at the
 * end of the frame. Thieves take a deque's oldest task and its owner its newest (dq.c),
 * so pushing the heaviest first hands them to the thieves first and leaves the lightest
 * for the end, longest-processing-time first: the last round of a frame is then
 * made of short activations and the workers finish closer together. Packets received
 * (the subqueue's appended slots this run) stand for the work left: Tile-Shade's shading
 * follows the triangles it resolved. The order changes no result (instances of a stage
 * are independent), only when each runs; tie order is the subqueues' index order. */
#include "gramps/internal.h"

#include <stdlib.h>

typedef struct woken {
    gr_inst *inst;
    uint64_t received;
    uint32_t index;
} woken;

void gr_close_wake_init(gr_close_wake *cw, uint32_t nsubs)
{
    cw->n = 0;
    cw->cap = nsubs;
    cw->list = nsubs ? malloc((size_t)nsubs * sizeof(woken)) : NULL;
}

void gr_close_wake_add(gr_close_wake *cw, gr_worker *w, gr_inst *inst, uint64_t received)
{
    if (!cw->list || cw->n == cw->cap) {   /* no room: woken at once, in index order */
        gr_make_runnable(w, inst);
        return;
    }
    woken *l = cw->list;
    l[cw->n] = (woken){inst, received, cw->n};
    cw->n++;
}

static int heaviest_first(const void *a, const void *b)
{
    const woken *x = a, *y = b;
    if (x->received != y->received) return x->received > y->received ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

void gr_close_wake_run(gr_close_wake *cw, gr_worker *w)
{
    woken *l = cw->list;
    if (cw->n > 1) qsort(l, cw->n, sizeof *l, heaviest_first);
    for (uint32_t i = 0; i < cw->n; i++) gr_make_runnable(w, l[i].inst);
    free(l);
    cw->list = NULL;
    cw->n = cw->cap = 0;
}
