/* Collapse of the binary SAH tree into the 4-wide BVH, and leaf triangle packing.
 *
 * Data flow: rt_btree (bvh_build.c) + positions/indices -> rt_bvh.nodes (rt_node4, in
 * depth-first order so a parent precedes its children in memory) and rt_bvh.tris
 * (rt_tri4 blocks in leaf order, vertices copied so a leaf test reads one contiguous run
 * instead of chasing indices).
 *
 * Each 4-wide node starts from a binary node's two children and repeatedly replaces the
 * inner child with the largest surface area by its two children: the big boxes are the
 * ones most rays enter, so those are the levels worth testing together. That rule
 * (rt_btree_gather), the box margin and the leaf references recorded here are shared
 * with the 8-wide collapse (bvh8_collapse.c), so both trees end in the same blocks. */
#include "raytracer/bvh_binary.h"
#include "raytracer/ray.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct collapser {
    const rt_btree *bt;
    const float *pos;
    const uint32_t *idx;
    rt_bvh *bvh;
    float margin;           /* box widening, see bvh.h */
    uint32_t *leaf_refs;    /* per binary node, or NULL */
} collapser;

static void fill_block(const collapser *c, rt_tri4 *blk, const uint32_t *prims, uint32_t n)
{
    for (uint32_t k = 0; k < 4; k++) {
        const int used = k < n;
        blk->prim[k] = used ? prims[k] : RT_NO_HIT;
        for (int v = 0; v < 3; v++) {
            const float *p = used ? c->pos + 3 * (size_t)c->idx[3 * (size_t)prims[k] + v] : NULL;
            for (int a = 0; a < 3; a++) blk->v[v][a][k] = used ? p[a] : NAN;
        }
    }
}

static uint32_t emit_leaf(collapser *c, const rt_bnode *leaf, uint32_t bnode)
{
    const uint32_t nb = (leaf->count + 3) / 4;
    const uint32_t first = (uint32_t)c->bvh->nblocks;
    for (uint32_t b = 0; b < nb; b++) {
        const uint32_t done = 4 * b;
        const uint32_t left = leaf->count - done;
        fill_block(c, &c->bvh->tris[first + b], c->bt->prims + leaf->first + done,
                   left < 4 ? left : 4);
    }
    c->bvh->nblocks += nb;
    if (c->leaf_refs) c->leaf_refs[bnode] = rt_leaf_ref(first, nb);
    return rt_leaf_ref(first, nb);
}

/* Picks up to max binary nodes to become the children of one wide node. */
int rt_btree_gather(const rt_btree *bt, const rt_bnode *bn, uint32_t *kids, int max)
{
    int n = 2;
    kids[0] = bn->left;
    kids[1] = bn->right;
    while (n < max) {
        int best = -1;
        float best_area = -1.0f;
        for (int i = 0; i < n; i++) {
            const rt_bnode *k = &bt->nodes[kids[i]];
            const float area = rt_half_area(k->lo, k->hi);
            if (k->count == 0 && area > best_area) {
                best = i;
                best_area = area;
            }
        }
        if (best < 0) break;
        const rt_bnode *open = &bt->nodes[kids[best]];
        memmove(&kids[best + 2], &kids[best + 1], (size_t)(n - best - 1) * sizeof kids[0]);
        kids[best] = open->left;
        kids[best + 1] = open->right;
        n++;
    }
    return n;
}

static void set_child_box(rt_node4 *nd, int i, const float lo[3], const float hi[3],
                          float margin)
{
    for (int a = 0; a < 3; a++) {
        nd->b[2 * a][i] = lo[a] - margin;
        nd->b[2 * a + 1][i] = hi[a] + margin;
    }
}

static void clear_node(rt_node4 *nd)
{
    memset(nd, 0, sizeof *nd);
    for (int i = 0; i < 4; i++) {
        for (int a = 0; a < 3; a++) {
            nd->b[2 * a][i] = INFINITY;      /* empty box: every slab test fails */
            nd->b[2 * a + 1][i] = -INFINITY;
        }
        nd->child[i] = RT_EMPTY_REF;
    }
}

/* 64-byte aligned, so a node is whole cache lines and a block starts on one. */
void *rt_alloc_tree_array(size_t bytes)
{
    return aligned_alloc(64, (bytes + 63) / 64 * 64);
}

static uint32_t collapse_rec(collapser *c, const uint32_t *kids, int nkids)
{
    const uint32_t node = (uint32_t)c->bvh->nnodes++;
    clear_node(&c->bvh->nodes[node]);
    for (int i = 0; i < nkids; i++) {
        const rt_bnode *k = &c->bt->nodes[kids[i]];
        uint32_t ref;
        if (k->count) {
            ref = emit_leaf(c, k, kids[i]);
        } else {
            uint32_t grand[4];
            const int ng = rt_btree_gather(c->bt, k, grand, 4);
            ref = collapse_rec(c, grand, ng);
        }
        rt_node4 *nd = &c->bvh->nodes[node];
        set_child_box(nd, i, k->lo, k->hi, c->margin);
        nd->child[i] = ref;
    }
    return node;
}

/* 2^-16 of the largest coordinate magnitude: far above the few-ulp error of slab and
 * triangle distances for rays that start within the scene's neighbourhood. */
float rt_box_margin(const float lo[3], const float hi[3])
{
    float m = 0.0f;
    for (int a = 0; a < 3; a++) m = fmaxf(m, fmaxf(fabsf(lo[a]), fabsf(hi[a])));
    return m > 0.0f ? ldexpf(m, -16) : 1e-30f;
}

static size_t count_blocks(const rt_btree *bt, size_t *inner)
{
    size_t blocks = 0;
    *inner = 0;
    for (size_t i = 0; i < bt->nnodes; i++) {
        if (bt->nodes[i].count) blocks += (bt->nodes[i].count + 3) / 4;
        else (*inner)++;
    }
    return blocks;
}

int rt_btree_collapse(const rt_btree *bt, const float *positions, const uint32_t *indices,
                      rt_bvh *bvh, uint32_t *leaf_refs)
{
    size_t inner;
    const size_t blocks = count_blocks(bt, &inner);
    const size_t max_nodes = inner ? inner : 1;   /* a lone leaf still gets a root node */
    bvh->nodes = rt_alloc_tree_array(max_nodes * sizeof *bvh->nodes);
    bvh->tris = rt_alloc_tree_array(blocks * sizeof *bvh->tris);
    if (!bvh->nodes || !bvh->tris) return -1;
    const rt_bnode *root = &bt->nodes[bt->root];
    collapser c = {bt, positions, indices, bvh, rt_box_margin(root->lo, root->hi), leaf_refs};
    uint32_t kids[4];
    int nkids = 1;
    kids[0] = bt->root;
    if (!root->count) nkids = rt_btree_gather(bt, root, kids, 4);
    bvh->root = collapse_rec(&c, kids, nkids);
    return 0;
}
