/* Collapse of the binary SAH tree into the 8-wide nodes of the AVX2 kernels.
 *
 * Data flow: rt_btree (bvh_build.c) + the leaf references rt_btree_collapse recorded per
 * binary leaf (bvh_collapse.c, which also wrote the rt_tri4 blocks) -> rt_bvh.nodes8
 * (rt_node8, depth-first so a parent precedes its children in memory) -> bvh8_traverse.c.
 *
 * Why a second collapse of the binary tree rather than of the 4-wide one: the 8-wide node
 * should hold the 8 boxes that most rays enter, which the binary tree tells directly with
 * the same rule as the 4-wide collapse (open the inner child with the largest surface area,
 * rt_btree_gather), whereas merging 4-wide nodes could only pull up whole groups of 4.
 * The leaves are not copied: both trees point at the same blocks, so the 8-wide tree
 * costs only its nodes and one walk (bunny: 4,337 nodes, 1.06 MiB next to the 3.58 MiB of
 * 4-wide nodes and blocks; 1-5 ms next to a 40-60 ms build). Nodes average about 4 of 8
 * children: subtrees with few leaves stay small nodes, as in any top-down collapse. */
#include "raytracer/bvh_binary.h"

#include <math.h>
#include <string.h>

typedef struct collapser8 {
    const rt_btree *bt;
    const uint32_t *leaf_refs;
    rt_bvh *bvh;
    float margin;           /* box widening, the same as the 4-wide nodes' (bvh.h) */
} collapser8;

static void clear_node8(rt_node8 *nd)
{
    memset(nd, 0, sizeof *nd);
    for (int i = 0; i < 8; i++) {
        for (int a = 0; a < 3; a++) {
            nd->b[2 * a][i] = INFINITY;      /* empty box: every slab test fails */
            nd->b[2 * a + 1][i] = -INFINITY;
        }
        nd->child[i] = RT_EMPTY_REF;
    }
}

/* Number of 8-wide nodes the collapse will make below (and including) one node whose
 * children are kids: the exact allocation. */
static size_t count_rec(const rt_btree *bt, const uint32_t *kids, int nkids)
{
    size_t n = 1;
    for (int i = 0; i < nkids; i++) {
        const rt_bnode *k = &bt->nodes[kids[i]];
        if (k->count) continue;
        uint32_t grand[8];
        const int ng = rt_btree_gather(bt, k, grand, 8);
        n += count_rec(bt, grand, ng);
    }
    return n;
}

static uint32_t collapse_rec(collapser8 *c, const uint32_t *kids, int nkids)
{
    const uint32_t node = (uint32_t)c->bvh->nnodes8++;
    clear_node8(&c->bvh->nodes8[node]);
    for (int i = 0; i < nkids; i++) {
        const rt_bnode *k = &c->bt->nodes[kids[i]];
        uint32_t ref;
        if (k->count) {
            ref = c->leaf_refs[kids[i]];
        } else {
            uint32_t grand[8];
            const int ng = rt_btree_gather(c->bt, k, grand, 8);
            ref = collapse_rec(c, grand, ng);
        }
        rt_node8 *nd = &c->bvh->nodes8[node];
        for (int a = 0; a < 3; a++) {
            nd->b[2 * a][i] = k->lo[a] - c->margin;
            nd->b[2 * a + 1][i] = k->hi[a] + c->margin;
        }
        nd->child[i] = ref;
    }
    return node;
}

int rt_btree_collapse8(const rt_btree *bt, const uint32_t *leaf_refs, rt_bvh *bvh)
{
    const rt_bnode *root = &bt->nodes[bt->root];
    uint32_t kids[8];
    int nkids = 1;
    kids[0] = bt->root;     /* a lone leaf still gets a root node */
    if (!root->count) nkids = rt_btree_gather(bt, root, kids, 8);
    const size_t n = count_rec(bt, kids, nkids);
    bvh->nodes8 = rt_alloc_tree_array(n * sizeof *bvh->nodes8);
    if (!bvh->nodes8) return -1;
    bvh->nnodes8 = 0;
    collapser8 c = {bt, leaf_refs, bvh, rt_box_margin(root->lo, root->hi)};
    bvh->root8 = collapse_rec(&c, kids, nkids);
    return 0;
}
