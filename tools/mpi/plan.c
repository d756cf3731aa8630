/* plan.c — chunks of frames and the order ranks get them (see plan.h). */
#include "tools/mpi/plan.h"

#include <stdlib.h>

mp_plan mp_plan_make(int width, int height, int frames, int rows)
{
    if (rows > height) rows = height;
    return (mp_plan){width, height, frames, rows, (height + rows - 1) / rows};
}

long mp_plan_chunks(const mp_plan *p) { return (long)p->frames * p->per_frame; }

mp_chunk mp_plan_chunk(const mp_plan *p, long k)
{
    int band = (int)(k % p->per_frame), y0 = band * p->rows;
    int y1 = y0 + p->rows < p->height ? y0 + p->rows : p->height;
    return (mp_chunk){(int)(k / p->per_frame), {0, y0, p->width, y1}};
}

size_t mp_chunk_bytes(const mp_chunk *c)
{
    const pl_region *r = &c->region;
    return (size_t)(r->x1 - r->x0) * (size_t)(r->y1 - r->y0) * 4;
}

int mp_default_rows(int height, int nranks, bool raster_front_end)
{
    if (!raster_front_end) return 32;
    int bands = 2 * nranks;
    return (height + bands - 1) / bands;
}

bool mp_dispenser_init(mp_dispenser *d, const mp_plan *p, mp_handout mode, int nranks)
{
    *d = (mp_dispenser){.plan = *p, .mode = mode, .nranks = nranks};
    d->next_of = calloc((size_t)nranks, sizeof *d->next_of);
    if (!d->next_of) return false;
    for (int r = 0; r < nranks; r++) d->next_of[r] = r;
    return true;
}

void mp_dispenser_free(mp_dispenser *d)
{
    free(d->next_of);
    d->next_of = NULL;
}

bool mp_dispenser_take(mp_dispenser *d, int rank, mp_chunk *c)
{
    long *next = d->mode == MP_DYNAMIC ? &d->next : &d->next_of[rank];
    if (d->stopped || *next >= mp_plan_chunks(&d->plan)) return false;
    *c = mp_plan_chunk(&d->plan, *next);
    *next += d->mode == MP_DYNAMIC ? 1 : d->nranks;
    return true;
}

void mp_dispenser_stop(mp_dispenser *d) { d->stopped = true; }
