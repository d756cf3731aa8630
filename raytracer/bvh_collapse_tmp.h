/* Template of the collapse of the binary tree into RT_W-wide nodes (bvh_collapse.c), for
 * RT_W = 4 (rt_node4: rt_bvh.nodes) and 8 (rt_node8: rt_bvh.nodes8). The includer
 * defines NODES, NNODES and ROOT (the rt_bvh fields of the width) and TAG(leaf_ref) (a
 * binary leaf's reference into rt_bvh.tris). Nodes are made depth-first, so a parent
 * precedes its children in memory. */

static void TAG(clear_node)(TAG(rt_node) *nd)
{
    memset(nd, 0, sizeof *nd);
    for (int i = 0; i < RT_W; i++) {
        for (int a = 0; a < 3; a++) {
            nd->b[2 * a][i] = INFINITY;      /* empty box: every slab test fails */
            nd->b[2 * a + 1][i] = -INFINITY;
        }
        nd->child[i] = RT_EMPTY_REF;
    }
}

/* Number of nodes the collapse will make below (and including) one node whose children
 * are kids: the exact allocation. */
static size_t TAG(count_nodes)(const rt_btree *bt, const uint32_t *kids, int nkids)
{
    size_t n = 1;
    for (int i = 0; i < nkids; i++) {
        const rt_bnode *k = &bt->nodes[kids[i]];
        if (k->count) continue;
        uint32_t grand[RT_W];
        const int ng = rt_btree_gather(bt, k, grand, RT_W);
        n += TAG(count_nodes)(bt, grand, ng);
    }
    return n;
}

static uint32_t TAG(collapse_rec)(collapser *c, const uint32_t *kids, int nkids)
{
    const uint32_t node = (uint32_t)c->bvh->NNODES++;
    TAG(clear_node)(&c->bvh->NODES[node]);
    for (int i = 0; i < nkids; i++) {
        const rt_bnode *k = &c->bt->nodes[kids[i]];
        uint32_t ref;
        if (k->count) {
            ref = TAG(leaf_ref)(c, k, kids[i]);
        } else {
            uint32_t grand[RT_W];
            const int ng = rt_btree_gather(c->bt, k, grand, RT_W);
            ref = TAG(collapse_rec)(c, grand, ng);
        }
        TAG(rt_node) *nd = &c->bvh->NODES[node];
        for (int a = 0; a < 3; a++) {
            nd->b[2 * a][i] = k->lo[a] - c->margin;
            nd->b[2 * a + 1][i] = k->hi[a] + c->margin;
        }
        nd->child[i] = ref;
    }
    return node;
}

/* Makes the nodes of the width from the binary root. Returns 0, or -1 out of memory. */
static int TAG(collapse)(collapser *c)
{
    const rt_btree *bt = c->bt;
    const rt_bnode *root = &bt->nodes[bt->root];
    uint32_t kids[RT_W];
    int nkids = 1;
    kids[0] = bt->root;     /* a lone leaf still gets a root node */
    if (!root->count) nkids = rt_btree_gather(bt, root, kids, RT_W);
    const size_t n = TAG(count_nodes)(bt, kids, nkids);
    c->bvh->NODES = rt_alloc_tree_array(n * sizeof *c->bvh->NODES);
    if (!c->bvh->NODES) return -1;
    c->bvh->NNODES = 0;
    c->bvh->ROOT = TAG(collapse_rec)(c, kids, nkids);
    return 0;
}
