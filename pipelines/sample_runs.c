/* sample_runs.c — see sample_runs.h. */
#include "pipelines/sample_runs.h"

#include <string.h>

void rtp_runs_init(rtp_run_cutter *r, int spp, uint32_t samples, int output)
{
    memset(r, 0, sizeof *r);
    r->spp = spp;
    r->samples = samples;
    r->output = output;
}

void rtp_runs_flush(rtp_run_cutter *r, gr_ctx *c)
{
    if (r->n == 0) return;
    gr_window w;
    gr_reserve_out(c, r->output, (uint32_t)r->n, &w);
    memcpy(w.mem, r->run, (size_t)r->n * sizeof *r->run);
    gr_commit_out(c, r->output, (uint32_t)r->n);
    r->n = 0;
}

/* Ends the open run if it has samples and opens an empty one; a full batch is sent. */
static void close_run(rtp_run_cutter *r, gr_ctx *c)
{
    if (r->run[r->n].count == 0) return;
    if (++r->n == RTP_RUN_BATCH) rtp_runs_flush(r, c);
    r->run[r->n].count = 0;
}

void rtp_runs_cut(rtp_run_cutter *r, gr_ctx *c, const rtp_tile *t)
{
    for (int by = t->y0; by < t->y1; by += RTP_BLOCK)
        for (int bx = t->x0; bx < t->x1; bx += RTP_BLOCK) {
            int w = bx + RTP_BLOCK < t->x1 ? RTP_BLOCK : t->x1 - bx;
            int h = by + RTP_BLOCK < t->y1 ? RTP_BLOCK : t->y1 - by;
            uint32_t left = (uint32_t)(w * h * r->spp), first = 0;
            while (left) {
                rtp_sample_run *run = &r->run[r->n];
                if (run->count == 0) *run = (rtp_sample_run){*t, bx, by, first, 0};
                uint32_t take = r->samples - run->count < left ? r->samples - run->count : left;
                run->count += take;
                first += take;
                left -= take;
                if (run->count == r->samples) close_run(r, c);
            }
        }
    close_run(r, c);
}
