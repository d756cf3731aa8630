/* overlay.c — drawing the overlay (see overlay.h). Layout: a panel of rows `lh` high
 * (the font's line skip), a label column then a bar column; sections stop at the
 * window's bottom edge. */
#include "tools/view/overlay.h"

#include <stdio.h>

enum { PAD = 6, LABEL_W = 150, VALUE_W = 80, PANEL_W = 440 };

typedef struct layout {
    SDL_Renderer *r;
    TTF_Font *f;
    int x, y, w, h, lh;            /* panel origin and size, current row, line height */
    int bar_x, bar_w;
} layout;

static const SDL_Color white = {235, 235, 235, 255}, grey = {150, 150, 150, 255};

/* Distinct colours for stages, by stage index. */
static SDL_Color stage_color(int i)
{
    static const SDL_Color palette[] = {
        {230, 97, 80, 255}, {95, 180, 240, 255}, {250, 200, 70, 255}, {120, 210, 120, 255},
        {200, 120, 230, 255}, {250, 150, 60, 255}, {80, 210, 200, 255}, {240, 120, 170, 255},
        {170, 170, 90, 255}, {130, 140, 250, 255}, {200, 200, 200, 255}, {150, 90, 60, 255}};
    return palette[i % (int)(sizeof palette / sizeof *palette)];
}

static void fill(SDL_Renderer *r, int x, int y, int w, int h, SDL_Color c)
{
    SDL_SetRenderDrawColor(r, c.r, c.g, c.b, c.a);
    SDL_RenderFillRect(r, &(SDL_Rect){x, y, w, h});
}

static bool room(const layout *l) { return l->y + l->lh <= l->h; }

static void line(layout *l, SDL_Color c, const char *text)
{
    if (!room(l)) return;
    vw_text(l->r, l->f, l->x + PAD, l->y, c, text);
    l->y += l->lh;
}

/* A bar of bar_w at the current row: `part` of it filled, a tick at `tick`, both
 * fractions clamped to the bar (a backward queue may exceed its capacity). */
static void bar(layout *l, double part, double tick, SDL_Color c)
{
    int y = l->y + l->lh / 4, bh = l->lh / 2;
    part = part < 0 ? 0 : part > 1 ? 1 : part;
    fill(l->r, l->bar_x, y, l->bar_w, bh, (SDL_Color){60, 60, 60, 255});
    fill(l->r, l->bar_x, y, (int)(part * l->bar_w + 0.5), bh, c);
    if (tick >= 0) {
        int tx = l->bar_x + (int)((tick > 1 ? 1 : tick) * (l->bar_w - 1));
        fill(l->r, tx, y - 2, 2, bh + 4, tick > 1 ? (SDL_Color){255, 60, 60, 255} : white);
    }
}

static void header(layout *l, const vw_snapshot *s)
{
    static const char *const aovs[] = SH_AOV_NAMES;
    char t[160];
    snprintf(t, sizeof t, "%s | %s | %u workers | %s", s->pipeline, s->scheduler, s->workers,
             aovs[s->aov]);
    line(l, white, t);
    int n = snprintf(t, sizeof t, "frame %.1f ms", s->frame_ms);
    if (s->rate_unit) snprintf(t + n, sizeof t - (size_t)n, ", %.2f %s", s->rate, s->rate_unit);
    line(l, white, t);
}

static void queues(layout *l, const vw_snapshot *s)
{
    line(l, grey, "queues: average held (bar), peak (tick) / capacity");
    for (int i = 0; i < s->nqueues && room(l); i++) {
        const vw_queue_bar *q = &s->queues[i];
        char v[48];
        snprintf(v, sizeof v, "%llu/%llu", (unsigned long long)q->peak, (unsigned long long)q->capacity);
        vw_text(l->r, l->f, l->x + PAD, l->y, white, q->name);
        double cap = q->capacity ? (double)q->capacity : 1;
        bar(l, q->avg / cap, (double)q->peak / cap, (SDL_Color){90, 190, 110, 255});
        vw_text(l->r, l->f, l->bar_x + l->bar_w + PAD, l->y, white, v);
        l->y += l->lh;
    }
}

static void stages(layout *l, const vw_snapshot *s)
{
    double total = 0;
    for (int i = 0; i < s->nstages; i++) total += s->stages[i].busy_ms;
    char head[80];
    snprintf(head, sizeof head, "stages: share of the frame's work (singletons %.1f%%)",
             s->serial_share * 100);
    line(l, grey, head);
    for (int i = 0; i < s->nstages && room(l); i++) {
        double share = total > 0 ? s->stages[i].busy_ms / total : 0;
        char v[32];
        snprintf(v, sizeof v, "%5.1f%%", share * 100);
        fill(l->r, l->x + PAD, l->y + l->lh / 4, l->lh / 2, l->lh / 2, stage_color(i));
        vw_text(l->r, l->f, l->x + PAD + l->lh, l->y, white, s->stages[i].name);
        bar(l, share, -1, stage_color(i));
        vw_text(l->r, l->f, l->bar_x + l->bar_w + PAD, l->y, white, v);
        l->y += l->lh;
    }
}

/* One row per worker, a text line high so that short tasks stay visible (squeezed, to
 * at least 1 pixel, when the workers do not fit), time across. */
static void timeline(layout *l, const vw_snapshot *s)
{
    char t[80];
    snprintf(t, sizeof t, "workers over the last frame (%.1f ms)", s->wall_ms);
    line(l, grey, t);
    if (!s->workers || !room(l)) return;
    int left = l->h - l->y - PAD, row = left / (int)s->workers;
    row = row > l->lh ? l->lh : row < 1 ? 1 : row;
    int x0 = l->x + PAD, w = l->w - 2 * PAD;
    fill(l->r, x0, l->y, w, row * (int)s->workers, (SDL_Color){40, 40, 40, 255});
    for (size_t i = 0; i < s->nslices && s->wall_ms > 0; i++) {
        const gr_slice *e = &s->slices[i];
        int a = (int)(e->t0_ms / s->wall_ms * w), b = (int)(e->t1_ms / s->wall_ms * w);
        fill(l->r, x0 + a, l->y + (int)e->worker * row, b > a ? b - a : 1, row > 1 ? row - 1 : 1,
             stage_color(e->stage));
    }
    l->y += row * (int)s->workers;
}

/* The panel's height for s (before drawing, to draw its background first). */
static int panel_height(const vw_snapshot *s, int lh)
{
    return (5 + s->nqueues + s->nstages) * lh + (int)s->workers * lh + 2 * PAD;
}

void vw_overlay_draw(SDL_Renderer *r, TTF_Font *f, const vw_snapshot *s, int w, int h)
{
    int pw = w < PANEL_W ? w : PANEL_W, lh = TTF_FontLineSkip(f);
    int bw = pw - LABEL_W - VALUE_W;             /* no bars in a window too narrow */
    layout l = {r, f, 0, PAD, pw, h, lh, LABEL_W, bw > 0 ? bw : 0};
    int ph = panel_height(s, lh);
    SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_BLEND);
    fill(r, 0, 0, pw, ph < h ? ph : h, (SDL_Color){0, 0, 0, 200});
    header(&l, s);
    queues(&l, s);
    stages(&l, s);
    timeline(&l, s);
    SDL_SetRenderDrawBlendMode(r, SDL_BLENDMODE_NONE);
}
