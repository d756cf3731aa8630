/* counters.c — work counters summed over chunks and ranks (see counters.h). */
#include "tools/mpi/counters.h"

#include "tools/common/json_out.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

void mp_counters_add(mp_counters *c, const char *name, uint64_t value)
{
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->name[i], name)) { c->value[i] += value; return; }
    if (c->n == PL_MAX_COUNTERS) return;          /* as pl_frame_counter: no room, not counted */
    snprintf(c->name[c->n], PL_COUNTER_NAME, "%s", name);
    c->value[c->n++] = value;
}

void mp_counters_add_frame(mp_counters *c, const pl_frame *f)
{
    for (int i = 0; i < f->ncounters; i++)
        mp_counters_add(c, f->counters[i].name, atomic_load(&f->counters[i].value));
}

void mp_counters_gather(mp_counters *c, int rank, int nranks)
{
    mp_counters *all = rank == 0 ? malloc((size_t)nranks * sizeof *all) : NULL;
    if (rank == 0 && !all) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Gather(c, (int)sizeof *c, MPI_BYTE, all, (int)sizeof *c, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (rank != 0) return;
    for (int r = 1; r < nranks; r++)
        for (int i = 0; i < all[r].n && i < PL_MAX_COUNTERS; i++)
            mp_counters_add(c, all[r].name[i], all[r].value[i]);
    free(all);
}

static bool is_ray(const char *name) { return !strncmp(name, "rays.", 5); }

void mp_counters_write_json(const mp_counters *c, FILE *f)
{
    int rays = 0;
    for (int i = 0; i < c->n; i++) {
        if (is_ray(c->name[i])) { rays++; continue; }
        io_json_string(f, c->name[i]);
        fprintf(f, ": %llu,\n", (unsigned long long)c->value[i]);
    }
    if (!rays) return;
    fprintf(f, "\"rays\": {");
    for (int i = 0, k = 0; i < c->n; i++) {
        if (!is_ray(c->name[i])) continue;
        fprintf(f, "%s", k++ ? ", " : "");
        io_json_string(f, c->name[i] + 5);
        fprintf(f, ": %llu", (unsigned long long)c->value[i]);
    }
    fprintf(f, "},\n");
}
