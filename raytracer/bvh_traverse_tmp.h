/* Template of the single-ray traversal (bvh_traverse.h) at width RT_W: closest hit and
 * any hit over the rt_node4 tree (RT_W = 4, SSE2) or the rt_node8 tree (RT_W = 8, AVX2).
 * Included twice by bvh_traverse.c; simd.h has the naming macros.
 *
 * Shape: the near/far planes of each axis are picked once per ray from the direction's
 * sign, so a node test is 6 loads, 6 mul/sub and 6 min/max with no per-child branching;
 * children are visited nearest first so the first hits shrink tmax early and later boxes
 * are culled; stack entries keep their entry distance so popped boxes beyond the current
 * hit are skipped without touching memory. The node test only culls, and the box margin
 * (bvh.h) makes it conservative whatever its rounding; the leaf tests (leaf.h) give the
 * same bits at both widths. */

typedef struct TAG(node_ray) {
    VF ix, iy, iz;              /* 1/dir, zero components replaced by tiny ones */
    VF oix, oiy, oiz;           /* org/dir, so a plane distance is one mul and one sub */
    int nx, ny, nz;             /* near plane per axis (RT_LO_* or RT_HI_*) */
} TAG(node_ray);

/* The slab constants broadcast, one lane per child. */
W_INLINE TAG(node_ray) TAG(node_ray_of)(const rt_slab_ray *s)
{
    return (TAG(node_ray)){V(set1)(s->inv[0]), V(set1)(s->inv[1]), V(set1)(s->inv[2]),
                           V(set1)(s->oinv[0]), V(set1)(s->oinv[1]), V(set1)(s->oinv[2]),
                           s->near[0], s->near[1], s->near[2]};
}

W_INLINE void TAG(node_ray_init)(TAG(node_ray) *r, const rt_ray *ray)
{
    const rt_slab_ray s = rt_slab_ray_of(ray);
    *r = TAG(node_ray_of)(&s);
}

/* Distance to plane values b along one axis: b / dir - org / dir. */
W_INLINE VF TAG(plane_dist)(const float *b, VF inv, VF oinv)
{
    return V(sub)(V(mul)(V(load)(b), inv), oinv);
}

/* Slab test of the node's children: all ones in the lanes of the children the ray
 * enters, and their entry distances. */
W_INLINE VF TAG(node_hits)(const TAG(rt_node) *n, const TAG(node_ray) *r, VF tmin, VF tmax,
                           VF *tnear)
{
    const VF tnx = TAG(plane_dist)(n->b[r->nx], r->ix, r->oix);
    const VF tny = TAG(plane_dist)(n->b[r->ny], r->iy, r->oiy);
    const VF tnz = TAG(plane_dist)(n->b[r->nz], r->iz, r->oiz);
    const VF tfx = TAG(plane_dist)(n->b[r->nx ^ 1], r->ix, r->oix);
    const VF tfy = TAG(plane_dist)(n->b[r->ny ^ 1], r->iy, r->oiy);
    const VF tfz = TAG(plane_dist)(n->b[r->nz ^ 1], r->iz, r->oiz);
    const VF tn = V(max)(V(max)(tnx, tny), V(max)(tnz, tmin));
    const VF tf = V(min)(V(min)(tfx, tfy), V(min)(tfz, tmax));
    *tnear = tn;
    return V(le)(tn, tf);
}

/* node_hits as a mask of children. */
W_INLINE unsigned TAG(node_test)(const TAG(rt_node) *n, const TAG(node_ray) *r, VF tmin,
                                 VF tmax, VF *tnear)
{
    return V(mask)(TAG(node_hits)(n, r, tmin, tmax, tnear));
}

/* Starts fetching a box that will be visited after the current subtree: random rays
 * spend most of their time waiting for nodes and triangles. */
W_INLINE void TAG(prefetch_ref)(const rt_bvh *bvh, uint32_t ref)
{
    const int leaf = rt_ref_is_leaf(ref);
    const char *p = leaf ? (const char *)(bvh->tris + rt_leaf_first(ref))
                         : (const char *)(TAG(rt_nodes)(bvh) + ref);
    _mm_prefetch(p, _MM_HINT_T0);
    _mm_prefetch(p + 64, _MM_HINT_T0);
    for (size_t line = 2; !leaf && line < sizeof(TAG(rt_node)) / 64; line++)
        _mm_prefetch(p + 64 * line, _MM_HINT_T0);
}

/* Picks the next node among the hit children: returns the nearest and pushes the rest
 * so that they pop nearest first. */
W_INLINE uint32_t TAG(order_children)(const rt_bvh *bvh, const TAG(rt_node) *n, unsigned mask,
                                      VF tnear, rt_stack_entry *stack, int *sp)
{
    const int c0 = __builtin_ctz(mask);
    mask &= mask - 1;
    if (!mask) return n->child[c0];
    float d[RT_W];
    V(storeu)(d, tnear);
    const int c1 = __builtin_ctz(mask);
    mask &= mask - 1;
    if (!mask) {
        const int near = d[c0] <= d[c1] ? c0 : c1, far = c0 + c1 - near;
        TAG(prefetch_ref)(bvh, n->child[far]);
        stack[*sp] = (rt_stack_entry){n->child[far], d[far]};
        ++*sp;
        return n->child[near];
    }
    /* Three or more: insertion sort into the stack, farthest at the bottom. */
    rt_stack_entry *top = stack + *sp;
    top[0] = (rt_stack_entry){n->child[c0], d[c0]};
    int k = 1;
    for (int c = c1;; c = __builtin_ctz(mask), mask &= mask - 1) {
        const rt_stack_entry e = {n->child[c], d[c]};
        int j = k++;
        for (; j > 0 && top[j - 1].dist < e.dist; j--) top[j] = top[j - 1];
        top[j] = e;
        if (!mask) break;
    }
    for (int i = 0; i < k - 1; i++) TAG(prefetch_ref)(bvh, top[i].ref);
    *sp += k - 1;
    return top[k - 1].ref;
}

/* The ray's watertight-test constants, made on the first leaf it reaches: most rays of
 * a typical frame (background, rays leaving the scene) never reach one. */
typedef struct TAG(tri_ray) {
    rt_wtray w;
    TAG(rt_wtray) wv;
    int ready;
} TAG(tri_ray);

W_INLINE const TAG(tri_ray) *TAG(tri_ray_get)(TAG(tri_ray) *tr, const rt_ray *ray)
{
    if (__builtin_expect(!tr->ready, 0)) {
        rt_wtray_init(&tr->w, ray->org, ray->dir);
        TAG(rt_wtray_init)(&tr->wv, &tr->w);
        tr->ready = 1;
    }
    return tr;
}

/* Closest-hit search from the root; best->t acts as the ray's current tmax and only
 * ever drops. The tree must not be empty. */
W_FN void TAG(closest)(const rt_bvh *bvh, const rt_ray *ray, rt_hit *best)
{
    TAG(node_ray) nr;
    TAG(node_ray_init)(&nr, ray);
    TAG(tri_ray) tr;
    tr.ready = 0;
    const VF tmin = V(set1)(ray->tmin);
    VF tmax = V(set1)(best->t);
    rt_stack_entry stack[TAG(RT_STACK)];
    int sp = 0;
    uint32_t ref = TAG(rt_root)(bvh);
    for (;;) {
        if (!rt_ref_is_leaf(ref)) {
            const TAG(rt_node) *n = &TAG(rt_nodes)(bvh)[ref];
            VF tn;
            const unsigned mask = TAG(node_test)(n, &nr, tmin, tmax, &tn);
            if (mask) {
                ref = TAG(order_children)(bvh, n, mask, tn, stack, &sp);
                continue;
            }
        } else {
            const TAG(tri_ray) *t = TAG(tri_ray_get)(&tr, ray);
            if (TAG(rt_leaf_closest)(bvh, ref, &t->w, &t->wv, ray->tmin, best))
                tmax = V(set1)(best->t);
        }
        do {                /* pop, skipping boxes that start beyond the best hit */
            if (sp == 0) return;
            --sp;
        } while (stack[sp].dist > best->t);
        ref = stack[sp].ref;
    }
}

/* Any-hit search from the root; the tree must not be empty. */
W_FN int TAG(occluded)(const rt_bvh *bvh, const rt_ray *ray)
{
    TAG(node_ray) nr;
    TAG(node_ray_init)(&nr, ray);
    TAG(tri_ray) tr;
    tr.ready = 0;
    const VF tmin = V(set1)(ray->tmin), tmax = V(set1)(ray->tmax);
    rt_stack_entry stack[TAG(RT_STACK)];
    int sp = 0;
    uint32_t ref = TAG(rt_root)(bvh);
    for (;;) {
        if (!rt_ref_is_leaf(ref)) {
            const TAG(rt_node) *n = &TAG(rt_nodes)(bvh)[ref];
            VF tn;
            const unsigned mask = TAG(node_test)(n, &nr, tmin, tmax, &tn);
            if (mask) {
                ref = TAG(order_children)(bvh, n, mask, tn, stack, &sp);
                continue;
            }
        } else {
            const TAG(tri_ray) *t = TAG(tri_ray_get)(&tr, ray);
            if (TAG(rt_leaf_any)(bvh, ref, &t->w, &t->wv, ray->tmin, ray->tmax)) return 1;
        }
        if (sp == 0) return 0;
        ref = stack[--sp].ref;
    }
}

/* ---- streams: many rays at once, each tested alone ------------------------------------ */

/* A stream's rays: per-ray slab constants (broadcast at each test), t ranges, and
 * watertight constants made at a ray's first leaf. */
typedef struct TAG(stream) {
    rt_slab_ray slab[RT_STREAM_MAX];
    float tmin[RT_STREAM_MAX], tmax[RT_STREAM_MAX];   /* tmax: the best hit so far */
    rt_wtray w[RT_STREAM_MAX];
    uint64_t wready;
    const rt_ray *rays;
} TAG(stream);

W_INLINE void TAG(stream_init)(TAG(stream) *s, const rt_ray *rays, int n)
{
    s->rays = rays;
    s->wready = 0;
    for (int i = 0; i < n; i++) {
        s->slab[i] = rt_slab_ray_of(&rays[i]);
        s->tmin[i] = rays[i].tmin;
        s->tmax[i] = rays[i].tmax;
    }
}

/* For rays `m` of the stream (bit b: ray base + b), adds each ray that enters a child of
 * n to that child's lane of *acc (no branch per child), and lowers each child's lane of
 * *dist to the nearest entry. node_hits' arithmetic, so the same boxes as one ray alone. */
W_INLINE unsigned TAG(stream_node_rays)(const TAG(rt_node) *n, const TAG(stream) *s, uint32_t m,
                                        int base, VF *acc, VF *dist)
{
    unsigned entered = 0;
    for (; m; m &= m - 1) {
        const int b = __builtin_ctz(m), i = base + b;
        const TAG(node_ray) r = TAG(node_ray_of)(&s->slab[i]);
        VF tn;
        const VF hit = TAG(node_hits)(n, &r, V(set1)(s->tmin[i]), V(set1)(s->tmax[i]), &tn);
        *acc = V(or)(*acc, V(and)(hit, V(set1_bits)((int)(1u << b))));
        *dist = V(min)(*dist, V(select)(hit, tn, V(set1)(INFINITY)));
        entered |= V(mask)(hit);
    }
    return entered;
}

typedef struct TAG(stream_entry) {
    uint32_t ref;
    float dist;                 /* the nearest entry of its rays into ref's box */
    uint64_t rays;              /* the stream's rays that entered ref's box */
} TAG(stream_entry);

/* The children of node n that rays enter, each with those rays; returns their count and
 * leaves them in kids nearest first. */
W_INLINE int TAG(stream_node)(const TAG(rt_node) *n, const TAG(stream) *s, uint64_t rays,
                              int ordered, TAG(stream_entry) kids[RT_W])
{
    VF lo = V(zero)(), hi = V(zero)(), dist = V(set1)(INFINITY);
    unsigned entered = TAG(stream_node_rays)(n, s, (uint32_t)rays, 0, &lo, &dist);
    entered |= TAG(stream_node_rays)(n, s, (uint32_t)(rays >> 32), 32, &hi, &dist);
    int32_t lo_bits[RT_W], hi_bits[RT_W];
    float d[RT_W];
    V(store_bits)(lo_bits, lo);
    V(store_bits)(hi_bits, hi);
    V(storeu)(d, dist);
    int k = 0;
    for (; entered; entered &= entered - 1) {
        const int c = __builtin_ctz(entered);
        const uint64_t cr = (uint32_t)lo_bits[c] | (uint64_t)(uint32_t)hi_bits[c] << 32;
        const TAG(stream_entry) e = {n->child[c], d[c], cr};
        int j = k++;
        for (; ordered && j > 0 && kids[j - 1].dist > e.dist; j--) kids[j] = kids[j - 1];
        kids[j] = e;
    }
    return k;
}

/* Ray i's watertight constants, made on its first leaf. */
W_INLINE const rt_wtray *TAG(stream_wtray)(TAG(stream) *s, int i)
{
    if (!(s->wready >> i & 1)) rt_wtray_init(&s->w[i], s->rays[i].org, s->rays[i].dir);
    s->wready |= (uint64_t)1 << i;
    return &s->w[i];
}

/* Walks the tree for the stream's rays in `live` (n <= RT_STREAM_MAX): a stack entry
 * carries the rays that entered its box, each node is fetched once for all of them and
 * tested ray by ray (so rays that share few nodes cost about what they cost alone, less
 * the node fetches), nearest child first. Closest hit (best != NULL): best[i] must hold
 * ray i's miss; leaves lower it. Any hit: occluded[i] is set at ray i's first hit, which
 * takes it out of the stream. Results are those of one ray alone, whatever the order. */
W_INLINE void TAG(walk_stream)(const rt_bvh *bvh, const rt_ray *rays, int n, uint64_t live,
                               rt_hit *best, uint8_t *occluded)
{
    TAG(stream) st, *s = &st;
    TAG(stream_init)(s, rays, n);
    TAG(stream_entry) stack[TAG(RT_STACK)];
    int sp = 0;
    TAG(stream_entry) cur = {TAG(rt_root)(bvh), 0.0f, live};
    for (;;) {
        cur.rays &= live;
        if (cur.rays && !rt_ref_is_leaf(cur.ref)) {
            TAG(stream_entry) kids[RT_W];
            const int k = TAG(stream_node)(&TAG(rt_nodes)(bvh)[cur.ref], s, cur.rays, best != NULL, kids);
            if (k) {
                for (int j = k - 1; j > 0; j--) stack[sp++] = kids[j];
                cur = kids[0];
                continue;
            }
        } else if (cur.rays) {
            for (uint64_t m = cur.rays; m; m &= m - 1) {
                const int i = __builtin_ctzll(m);
                const rt_wtray *w = TAG(stream_wtray)(s, i);
                TAG(rt_wtray) wv;
                TAG(rt_wtray_init)(&wv, w);
                if (best) {
                    if (TAG(rt_leaf_closest)(bvh, cur.ref, w, &wv, s->tmin[i], &best[i]))
                        s->tmax[i] = best[i].t;
                } else if (TAG(rt_leaf_any)(bvh, cur.ref, w, &wv, s->tmin[i], s->tmax[i])) {
                    occluded[i] = 1;
                    live &= ~((uint64_t)1 << i);
                }
            }
            if (!live) return;
        }
        if (sp == 0) return;
        cur = stack[--sp];
    }
}

/* walk_stream made twice, so each kind of search compiles without the other's tests. */
W_FN void TAG(closest_stream)(const rt_bvh *bvh, const rt_ray *rays, int n, uint64_t live,
                              rt_hit *best)
{
    TAG(walk_stream)(bvh, rays, n, live, best, NULL);
}

W_FN void TAG(occluded_stream)(const rt_bvh *bvh, const rt_ray *rays, int n, uint64_t live,
                               uint8_t *occluded)
{
    TAG(walk_stream)(bvh, rays, n, live, NULL, occluded);
}
