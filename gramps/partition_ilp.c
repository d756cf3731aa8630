/* partition_ilp.c — gr_partition_ilp: the Static scheduler's stage assignment as an
 * integer linear program solved by GLPK's branch and bound (Debian libglpk-dev), as
 * Kudlur and Mahlke's SGMS assigns filters to cores:
 *
 *     minimise L  subject to  sum_p x[i][p] = 1           for every stage i
 *                             sum_i load[i] x[i][p] <= L  for every part p
 *                             x[i][p] in {0, 1}
 *
 * Communication is not in the objective (SGMS balances load only; METIS weighs it).
 * Parts are interchangeable, so the k-th heaviest stage may only go to parts 0..k:
 * every assignment has a relabelling that obeys this, and the search skips the
 * nparts! copies of each one. GLPK prints nothing (its terminal output is off), and its
 * per-thread environment is freed before returning, so a program that holds GLPK objects
 * of its own on the launching thread must not launch a Static graph with the ILP. */
#include "gramps/partition.h"

#include <glpk.h>
#include <limits.h>
#include <stdlib.h>

/* Stage indices, heaviest first (ties: lower index): the symmetry breaking's order. */
static int *heaviest_first(int n, const int64_t *load)
{
    int *order = malloc((size_t)n * sizeof *order);
    if (!order) return NULL;
    for (int i = 0; i < n; i++) order[i] = i;
    for (int i = 1; i < n; i++)                 /* insertion sort: a few dozen stages */
        for (int j = i; j > 0 && load[order[j]] > load[order[j - 1]]; j--) {
            int t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
        }
    return order;
}

/* Column of x[i][p]: 1-based, after L in column 1. */
static int xcol(int i, int p, int nparts) { return 2 + i * nparts + p; }

/* Rows 1..n: each stage in one part; rows n+1..n+nparts: part p's load minus L <= 0. */
static void build(glp_prob *lp, int n, const int64_t *load, int nparts, const int *order)
{
    glp_set_obj_dir(lp, GLP_MIN);
    glp_add_cols(lp, 1 + n * nparts);
    glp_set_col_bnds(lp, 1, GLP_LO, 0, 0);
    glp_set_obj_coef(lp, 1, 1);
    for (int k = 0; k < n; k++)
        for (int p = 0; p < nparts; p++) {
            int c = xcol(order[k], p, nparts);
            glp_set_col_kind(lp, c, GLP_BV);
            if (p > k) glp_set_col_bnds(lp, c, GLP_FX, 0, 0);     /* symmetry breaking */
        }
    glp_add_rows(lp, n + nparts);
    int ind[2 + GR_PARTITION_ILP_MAX_STAGES];
    double val[2 + GR_PARTITION_ILP_MAX_STAGES];
    for (int i = 0; i < n; i++) {
        for (int p = 0; p < nparts; p++) { ind[1 + p] = xcol(i, p, nparts); val[1 + p] = 1; }
        glp_set_row_bnds(lp, 1 + i, GLP_FX, 1, 1);
        glp_set_mat_row(lp, 1 + i, nparts, ind, val);
    }
    for (int p = 0; p < nparts; p++) {
        ind[1] = 1; val[1] = -1;
        for (int i = 0; i < n; i++) { ind[2 + i] = xcol(i, p, nparts); val[2 + i] = (double)load[i]; }
        glp_set_row_bnds(lp, 1 + n + p, GLP_UP, 0, 0);
        glp_set_mat_row(lp, 1 + n + p, n + 1, ind, val);
    }
}

/* Each stage's part from an integer solution: the x[i][p] closest to 1. */
static void read_parts(glp_prob *lp, int n, int nparts, int *part)
{
    for (int i = 0; i < n; i++) {
        int best = 0;
        for (int p = 1; p < nparts; p++)
            if (glp_mip_col_val(lp, xcol(i, p, nparts)) > glp_mip_col_val(lp, xcol(i, best, nparts)))
                best = p;
        part[i] = best;
    }
}

int gr_partition_ilp(int n, const int64_t *load, int nparts, int time_limit_ms, int *part)
{
    if (n <= 0 || nparts <= 0 || n > GR_PARTITION_ILP_MAX_STAGES || nparts > GR_PARTITION_ILP_MAX_STAGES)
        return GR_ILP_FAILED;
    if (time_limit_ms <= 0) return GR_ILP_NO_SOLUTION;
    int *order = heaviest_first(n, load);
    if (!order) return GR_ILP_FAILED;
    glp_term_out(GLP_OFF);
    glp_prob *lp = glp_create_prob();
    build(lp, n, load, nparts, order);
    glp_iocp parm;
    glp_init_iocp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = GLP_ON;                   /* solves the LP relaxation itself */
    parm.tm_lim = time_limit_ms;
    int rc = glp_intopt(lp, &parm), status = glp_mip_status(lp);
    int result = GR_ILP_NO_SOLUTION;
    if ((rc == 0 || rc == GLP_ETMLIM) && (status == GLP_OPT || status == GLP_FEAS)) {
        read_parts(lp, n, nparts, part);
        result = status == GLP_OPT ? GR_ILP_OPTIMAL : GR_ILP_FEASIBLE;
    }
    glp_delete_prob(lp);
    glp_free_env();         /* GLPK's per-thread state: nothing of GLPK outlives the call */
    free(order);
    return result;
}
