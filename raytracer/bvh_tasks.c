/* bvh_tasks.c — rt_btree_build: the binary BVH built as rounds of independent tasks,
 * which the caller's executor may run at once (the ray tracer makes no threads).
 *
 * A round is a list of ranges of references. A range larger than the caller's share
 * (`subtree_max`: the references over four times the executor's width, and at least
 * RT_BUILD_TASK_MIN, below which a task costs less than handing it out) is split once
 * (rt_build_split) and its two sides join the next round; a smaller one is built whole
 * into nodes of its own (rt_build_subtree). Tasks of a round work on disjoint ranges,
 * so they may run in any order and at once. The first rounds have few tasks (1, 2, 4
 * ...), the last round most of the work in many.
 *
 * Then the tasks are stitched in pre-order (each split's node, then its left side's
 * nodes, then its right side's), which is the order a single recursive build numbers
 * them in: the tree is the same, node for node, whatever the executor and its width.
 * The tasks then copy their nodes into place at once, as one more round. */
#include "raytracer/bvh_split.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define RT_BUILD_TASK_MIN 2048
/* So a range split in a round is never a leaf: it has more references than a leaf may. */
_Static_assert(RT_BUILD_TASK_MIN > 4 * RT_LEAF_MAX_BLOCKS, "split ranges must exceed max_leaf");

typedef struct task {
    size_t begin, end;
    int depth;
    bool whole;                 /* built whole into nodes, else split once */
    rt_bnode node;              /* a split's node */
    size_t nleft;               /* a split's left side */
    uint32_t side[2];           /* a split's two sides, as task indices */
    rt_bnode *nodes;            /* a whole subtree, root first */
    size_t nnodes;
    uint32_t at;                /* where its first node goes in the tree */
} task;

typedef struct job {
    rt_build_refs *refs;
    const rt_build_opts *o;
    task *tasks;
    size_t ntasks, cap;
    size_t first;               /* this round: tasks [first, ntasks) */
    size_t subtree_max;
    rt_bnode *out;              /* the tree's nodes, once placed */
    _Atomic(int) depth;
    _Atomic(bool) failed;
} job;

static void note_depth(job *j, int depth)
{
    int d = atomic_load(&j->depth);
    while (depth > d && !atomic_compare_exchange_weak(&j->depth, &d, depth)) {}
}

static bool build_whole(job *j, task *t)
{
    size_t n = t->end - t->begin;
    if (!(t->nodes = malloc((2 * n - 1) * sizeof *t->nodes))) return false;
    int depth;
    t->nnodes = rt_build_subtree(j->refs, j->o, t->begin, t->end, t->depth, t->nodes, &depth);
    t->whole = true;
    note_depth(j, depth);
    return true;
}

static void run_task(void *arg, size_t i)
{
    job *j = arg;
    task *t = &j->tasks[j->first + i];
    if (t->end - t->begin <= j->subtree_max) {
        if (!build_whole(j, t)) atomic_store(&j->failed, true);
        return;
    }
    note_depth(j, t->depth);
    t->nleft = rt_build_split(j->refs, j->o, t->begin, t->end, t->depth, &t->node);
}

static bool add_task(job *j, size_t begin, size_t end, int depth)
{
    if (j->ntasks == j->cap) {
        size_t cap = j->cap ? 2 * j->cap : 64;
        task *t = realloc(j->tasks, cap * sizeof *t);
        if (!t) return false;
        j->tasks = t;
        j->cap = cap;
    }
    j->tasks[j->ntasks++] = (task){.begin = begin, .end = end, .depth = depth};
    return true;
}

/* The sides of this round's splits become the next round. */
static bool next_round(job *j)
{
    size_t end = j->ntasks;
    for (size_t i = j->first; i < end; i++) {
        if (j->tasks[i].whole) continue;
        const task t = j->tasks[i];
        j->tasks[i].side[0] = (uint32_t)j->ntasks;
        j->tasks[i].side[1] = (uint32_t)j->ntasks + 1;
        if (!add_task(j, t.begin, t.begin + t.nleft, t.depth + 1) ||
            !add_task(j, t.begin + t.nleft, t.end, t.depth + 1))
            return false;
    }
    j->first = end;
    return true;
}

/* Where task ti's nodes go, in pre-order from *next on (t->at); a split's node gets its
 * sides' roots. Returns the index of the task's root. */
static uint32_t place(job *j, uint32_t ti, size_t *next)
{
    task *t = &j->tasks[ti];
    t->at = (uint32_t)*next;
    if (t->whole) {
        *next += t->nnodes;
        return t->at;
    }
    (*next)++;
    t->node.left = place(j, t->side[0], next);
    t->node.right = place(j, t->side[1], next);
    return t->at;
}

/* Task i's nodes into the tree, their child indices moved by where they went. */
static void copy_task(void *arg, size_t i)
{
    job *j = arg;
    const task *t = &j->tasks[i];
    rt_bnode *out = j->out + t->at;
    if (!t->whole) {
        *out = t->node;
        return;
    }
    memcpy(out, t->nodes, t->nnodes * sizeof *out);
    for (size_t k = 0; k < t->nnodes; k++)
        if (out[k].count == 0) {
            out[k].left += t->at;
            out[k].right += t->at;
        }
}

static void run_round(job *j, const rt_executor *ex, size_t n, void (*fn)(void *, size_t))
{
    if (ex && ex->for_each && n > 1) ex->for_each(ex->ctx, n, fn, j);
    else
        for (size_t i = 0; i < n; i++) fn(j, i);
}

static bool run_rounds(job *j, const rt_executor *ex)
{
    while (j->first < j->ntasks && !atomic_load(&j->failed)) {
        run_round(j, ex, j->ntasks - j->first, run_task);
        if (atomic_load(&j->failed) || !next_round(j)) return false;
    }
    return !atomic_load(&j->failed);
}

/* The tasks' nodes as one array in pre-order. A tree built whole as one task keeps its
 * array; otherwise every task copies its part, all at once (a last round). */
static bool stitch(job *j, rt_btree *bt, size_t n, const rt_executor *ex)
{
    if (!(bt->prims = malloc(n * sizeof *bt->prims))) return false;
    rt_build_refs_prims(j->refs, bt->prims);
    bt->depth = atomic_load(&j->depth);
    size_t next = 0;
    bt->root = place(j, 0, &next);
    bt->nnodes = next;
    if (j->ntasks == 1) {
        bt->nodes = j->tasks[0].nodes;
        j->tasks[0].nodes = NULL;
        return true;
    }
    if (!(bt->nodes = j->out = malloc(next * sizeof *bt->nodes))) return false;
    j->first = 0;
    run_round(j, ex, j->ntasks, copy_task);
    return true;
}

int rt_btree_build(rt_btree *bt, const float *positions, const uint32_t *indices, size_t n,
                   const rt_build_opts *o, const rt_executor *ex)
{
    memset(bt, 0, sizeof *bt);
    unsigned width = ex && ex->for_each && ex->width > 1 ? ex->width : 1;
    size_t share = n / (4 * (size_t)width);
    job j = {.refs = rt_build_refs_new(positions, indices, n), .o = o,
             .subtree_max = width == 1 ? n : share > RT_BUILD_TASK_MIN ? share : RT_BUILD_TASK_MIN};
    atomic_init(&j.depth, 0);
    atomic_init(&j.failed, false);
    bool ok = j.refs && add_task(&j, 0, n, 1) && run_rounds(&j, ex) && stitch(&j, bt, n, ex);
    for (size_t i = 0; i < j.ntasks; i++) free(j.tasks[i].nodes);
    free(j.tasks);
    rt_build_refs_free(j.refs);
    if (!ok) rt_btree_free(bt);
    return ok ? 0 : -1;
}

void rt_btree_free(rt_btree *bt)
{
    free(bt->nodes);
    free(bt->prims);
    bt->nodes = NULL;
    bt->prims = NULL;
}
