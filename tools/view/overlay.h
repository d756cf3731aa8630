/* overlay.h — the overlay over the image, after grampsviz (thesis §4.6.1): what runs
 * (pipeline, scheduler, workers, AOV), frame time and rays or fragments per second; one
 * bar per queue (its average depth filled, its peak as a tick, against its capacity over
 * all subqueues); each stage's share of the frame's work; and the last frame's per-worker
 * timeline, one row per worker with a slice per task in its stage's colour. Everything
 * comes from one frame's snapshot: the statistics are the finished frame's. */
#ifndef TOOLS_VIEW_OVERLAY_H
#define TOOLS_VIEW_OVERLAY_H

#include "tools/view/font.h"
#include "tools/view/snapshot.h"

/* Draws the overlay for s in a panel at the window's top left, clipped to w x h. */
void vw_overlay_draw(SDL_Renderer *r, TTF_Font *f, const vw_snapshot *s, int w, int h);

#endif
