/* partition.c — gr_partition over METIS_PartGraphRecursive (better than k-way for the
 * few parts a worker count makes, per the METIS manual), on the undirected graph METIS
 * wants: symmetric adjacency in CSR form, no self-loops, one edge per vertex pair.
 *
 * With few vertices per part, recursive bisection breaks down: measured on the raster
 * graph at 16 workers (49 stages, one of them a quarter of the load), it left 11 parts
 * empty, put 37 stages on one worker and printed "Cannot bisect a graph with 0
 * vertices" on the program's stdout. There, and whenever METIS's heaviest part is
 * clearly worse, the partition is Graham's longest-processing-time rule instead
 * (heaviest part within 4/3 of the optimum), which breaks ties by communication. */
#include "gramps/partition.h"

#include <metis.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Adds w to the edge a-b in a dense n x n matrix (the graphs are a few dozen stages). */
static void add_edge(int64_t *m, int n, int a, int b, int64_t w)
{
    m[(size_t)a * n + b] += w;
    m[(size_t)b * n + a] += w;
}

static idx_t clamp_idx(int64_t v)
{
    if (v < 1) return 1;
    return v > (int64_t)1 << 30 ? (idx_t)1 << 30 : (idx_t)v;
}

/* CSR arrays for METIS from the weight matrix. */
static void to_csr(const int64_t *m, int n, idx_t *xadj, idx_t *adj, idx_t *adjw)
{
    idx_t k = 0;
    for (int a = 0; a < n; a++) {
        xadj[a] = k;
        for (int b = 0; b < n; b++)
            if (a != b && m[(size_t)a * n + b] > 0) {
                adj[k] = b;
                adjw[k++] = clamp_idx(m[(size_t)a * n + b]);
            }
    }
    xadj[n] = k;
}

static int run_metis(int n, const int64_t *load, const int64_t *m, int nparts, int *part)
{
    idx_t nv = n, ncon = 1, np = nparts, cut = 0;
    idx_t *xadj = malloc(((size_t)n + 1) * sizeof *xadj);
    idx_t *adj = malloc(((size_t)n * n + 1) * sizeof *adj);
    idx_t *adjw = malloc(((size_t)n * n + 1) * sizeof *adjw);
    idx_t *vw = malloc((size_t)n * sizeof *vw), *out = malloc((size_t)n * sizeof *out);
    int rc = -1;
    if (xadj && adj && adjw && vw && out) {
        to_csr(m, n, xadj, adj, adjw);
        for (int i = 0; i < n; i++) vw[i] = clamp_idx(load[i]);
        idx_t opt[METIS_NOPTIONS];
        METIS_SetDefaultOptions(opt);
        opt[METIS_OPTION_SEED] = 1;
        opt[METIS_OPTION_NUMBERING] = 0;
        opt[METIS_OPTION_UFACTOR] = 30;         /* parts within 3% of the average load */
        if (METIS_PartGraphRecursive(&nv, &ncon, xadj, adj, vw, NULL, adjw, &np, NULL, NULL,
                                     opt, &cut, out) == METIS_OK) {
            for (int i = 0; i < n; i++) part[i] = (int)out[i];
            rc = 0;
        }
    }
    free(xadj); free(adj); free(adjw); free(vw); free(out);
    return rc;
}

/* Longest processing time first: vertices, heaviest first (ties: lower index), each to
 * the part with the least load so far; among equally loaded parts, the one it sends
 * most to (m), then the lowest. */
static void lpt(int n, const int64_t *load, const int64_t *m, int nparts, int *part)
{
    int *order = malloc((size_t)n * sizeof *order);
    int64_t *sum = calloc((size_t)nparts, sizeof *sum), *pull = calloc((size_t)nparts, sizeof *pull);
    for (int i = 0; i < n; i++) part[i] = -1;
    if (!order || !sum || !pull) {              /* no memory: round-robin still balances counts */
        for (int i = 0; i < n; i++) part[i] = i % nparts;
        free(order); free(sum); free(pull);
        return;
    }
    for (int i = 0; i < n; i++) order[i] = i;
    for (int i = 1; i < n; i++)                 /* insertion sort: a few dozen stages */
        for (int j = i; j > 0 && load[order[j]] > load[order[j - 1]]; j--) {
            int t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
        }
    for (int k = 0; k < n; k++) {
        int v = order[k], best = 0;
        for (int p = 0; p < nparts; p++) pull[p] = 0;
        for (int u = 0; u < n; u++) if (part[u] >= 0) pull[part[u]] += m[(size_t)v * n + u];
        for (int p = 1; p < nparts; p++)
            if (sum[p] < sum[best] || (sum[p] == sum[best] && pull[p] > pull[best])) best = p;
        part[v] = best;
        sum[best] += load[v];
    }
    free(order); free(sum); free(pull);
}

/* METIS when each part gets several vertices and its heaviest part is within 10% of
 * LPT's; LPT otherwise (see the top of the file). */
#define METIS_MIN_PER_PART 4

int gr_partition(int n, const int64_t *load, const gr_part_edge *edges, int nedges,
                 int nparts, int *part)
{
    return gr_partition_by(n, load, edges, nedges, nparts, part, NULL);
}

int gr_partition_by(int n, const int64_t *load, const gr_part_edge *edges, int nedges,
                    int nparts, int *part, const char **method)
{
    if (n <= 0 || nparts <= 0) return -1;
    if (method) *method = "lpt";           /* also the trivial cases: one stage per part */
    if (nparts == 1 || n <= nparts) {
        for (int i = 0; i < n; i++) part[i] = nparts == 1 ? 0 : i;
        return 0;
    }
    int64_t *m = calloc((size_t)n * n, sizeof *m);
    if (!m) return -1;
    for (int e = 0; e < nedges; e++)
        if (edges[e].a != edges[e].b) add_edge(m, n, edges[e].a, edges[e].b, edges[e].weight);
    int *by_lpt = malloc((size_t)n * sizeof *by_lpt);
    if (!by_lpt) { free(m); return -1; }
    lpt(n, load, m, nparts, by_lpt);
    bool metis = n >= METIS_MIN_PER_PART * nparts && run_metis(n, load, m, nparts, part) == 0 &&
                 10 * gr_partition_max_load(n, load, part, nparts) <=
                     11 * gr_partition_max_load(n, load, by_lpt, nparts);
    if (!metis) memcpy(part, by_lpt, (size_t)n * sizeof *part);
    else if (method) *method = "metis";
    free(by_lpt);
    free(m);
    return 0;
}

int64_t gr_partition_max_load(int n, const int64_t *load, const int *part, int nparts)
{
    int64_t *sum = calloc((size_t)nparts, sizeof *sum), best = 0;
    if (!sum) return -1;
    for (int i = 0; i < n; i++) sum[part[i]] += load[i];
    for (int p = 0; p < nparts; p++) if (sum[p] > best) best = sum[p];
    free(sum);
    return best;
}
