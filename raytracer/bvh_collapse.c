/* Collapse of the binary SAH tree into the 4-wide and 8-wide BVH nodes, and leaf
 * triangle packing.
 *
 * Data flow: rt_btree (bvh_build.c) + positions/indices -> rt_btree_collapse:
 * rt_bvh.nodes (rt_node4) and rt_bvh.tris (rt_tri4 blocks in leaf order, vertices copied
 * so a leaf test reads one contiguous run instead of chasing indices), recording each
 * binary leaf's reference -> on AVX2 machines rt_btree_collapse8: rt_bvh.nodes8 (rt_node8)
 * over the same blocks. Both are bvh_collapse_tmp.h at their width.
 *
 * Each wide node starts from a binary node's two children and repeatedly replaces the
 * inner child with the largest surface area by its two children (rt_btree_gather): the
 * big boxes are the ones most rays enter, so those are the levels worth testing together.
 * The 8-wide nodes come from the binary tree, not from the 4-wide one, because merging
 * 4-wide nodes could only pull up whole groups of 4. Their leaves are not copied, so they
 * cost only their nodes and one walk (bunny: 4,337 nodes, 1.06 MiB). */
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
    uint32_t *leaf_refs_out;        /* per binary node, written by the 4-wide collapse, or NULL */
    const uint32_t *leaf_refs_in;   /* the same, read by the 8-wide collapse */
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
    if (c->leaf_refs_out) c->leaf_refs_out[bnode] = rt_leaf_ref(first, nb);
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

/* 64-byte aligned, so a node is whole cache lines and a block starts on one. */
void *rt_alloc_tree_array(size_t bytes)
{
    return aligned_alloc(64, (bytes + 63) / 64 * 64);
}

/* 2^-16 of the largest coordinate magnitude: far above the few-ulp error of slab and
 * triangle distances for rays that start within the scene's neighbourhood. */
float rt_box_margin(const float lo[3], const float hi[3])
{
    float m = 0.0f;
    for (int a = 0; a < 3; a++) m = fmaxf(m, fmaxf(fabsf(lo[a]), fabsf(hi[a])));
    return m > 0.0f ? ldexpf(m, -16) : 1e-30f;
}

static size_t count_blocks(const rt_btree *bt)
{
    size_t blocks = 0;
    for (size_t i = 0; i < bt->nnodes; i++)
        if (bt->nodes[i].count) blocks += (bt->nodes[i].count + 3) / 4;
    return blocks;
}

/* The leaf references of each width: the 4-wide collapse packs the binary leaf's
 * triangles into blocks as it reaches it; the 8-wide one reuses those blocks. */
static uint32_t leaf_ref4(collapser *c, const rt_bnode *leaf, uint32_t bnode)
{
    return emit_leaf(c, leaf, bnode);
}

static uint32_t leaf_ref8(collapser *c, const rt_bnode *leaf, uint32_t bnode)
{
    (void)leaf;
    return c->leaf_refs_in[bnode];
}

#define RT_W 4
#define NODES nodes
#define NNODES nnodes
#define ROOT root
#include "raytracer/bvh_collapse_tmp.h"
#undef RT_W
#undef NODES
#undef NNODES
#undef ROOT
#define RT_W 8
#define NODES nodes8
#define NNODES nnodes8
#define ROOT root8
#include "raytracer/bvh_collapse_tmp.h"
#undef RT_W
#undef NODES
#undef NNODES
#undef ROOT

int rt_btree_collapse(const rt_btree *bt, const float *positions, const uint32_t *indices,
                      rt_bvh *bvh, uint32_t *leaf_refs)
{
    bvh->tris = rt_alloc_tree_array(count_blocks(bt) * sizeof *bvh->tris);
    if (!bvh->tris) return -1;
    const rt_bnode *root = &bt->nodes[bt->root];
    collapser c = {bt, positions, indices, bvh, rt_box_margin(root->lo, root->hi), leaf_refs, NULL};
    return collapse4(&c);
}

int rt_btree_collapse8(const rt_btree *bt, const uint32_t *leaf_refs, rt_bvh *bvh)
{
    const rt_bnode *root = &bt->nodes[bt->root];
    collapser c = {bt, NULL, NULL, bvh, rt_box_margin(root->lo, root->hi), NULL, leaf_refs};
    return collapse8(&c);
}
