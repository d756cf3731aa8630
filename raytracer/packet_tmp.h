/* Template of the packet traversal (packet.h) at width RT_W: RT_W = 4 (SSE2 over the
 * rt_node4 tree, lanes 4 at a time) or 8 (AVX2 over the rt_node8 tree, lanes 8 at a
 * time). Included twice by packet.c, which defines pkt, pentry and TAG(load_rays) first.
 *
 * Exactness: box and interval tests only cull, and the box margin (bvh.h) makes them
 * conservative whatever their rounding. Per-lane setup values come from the same IEEE
 * operations as rt_safe_inverse and rt_wtray_init (same division, same dominant-axis rule
 * with ties to the lower axis, same products), and the minima and maxima of the packet
 * bounds do not depend on the order, so both widths give every ray the same constants;
 * its leaf tests (leaf.h) then give t, u, v and the primitive of the single-ray kernels
 * and brute force bit for bit, and the tie rule makes the answer independent of the
 * order in which leaves are reached. */

typedef struct TAG(pktc) {      /* packet-wide constants, broadcast */
    VF ilo[3], ihi[3];          /* inverse direction interval per axis */
    VF onear[3], ofar[3];       /* origin bound that minimises entry / maximises exit */
    VF tmin_min;
    int near[3];                /* near plane per axis, shared by all rays */
    int ngroups;                /* groups of RT_W lanes */
} TAG(pktc);

typedef struct TAG(cbox) {      /* one child's near and far planes, broadcast */
    VF n[3], f[3];
} TAG(cbox);

W_INLINE TAG(cbox) TAG(child_box)(const TAG(pktc) *k, const TAG(rt_node) *nd, int c)
{
    TAG(cbox) b;
    for (int a = 0; a < 3; a++) {
        b.n[a] = V(set1)(nd->b[k->near[a]][c]);
        b.f[a] = V(set1)(nd->b[k->near[a] ^ 1][c]);
    }
    return b;
}

/* Distance along lanes' rays to plane values b: b / dir - org / dir. */
W_INLINE VF TAG(lane_dist)(VF b, const float *inv, const float *oinv)
{
    return V(sub)(V(mul)(b, V(load)(inv)), V(load)(oinv));
}

/* Slab test of one box against the rays of lane group g; returns their hit mask. */
W_INLINE unsigned TAG(group_box)(const pkt *p, const TAG(cbox) *b, int g)
{
    const int i = RT_W * g;
    const VF tn = V(max)(V(max)(TAG(lane_dist)(b->n[0], p->ix + i, p->oix + i),
                                TAG(lane_dist)(b->n[1], p->iy + i, p->oiy + i)),
                         V(max)(TAG(lane_dist)(b->n[2], p->iz + i, p->oiz + i), V(load)(p->tmin + i)));
    const VF tf = V(min)(V(min)(TAG(lane_dist)(b->f[0], p->ix + i, p->oix + i),
                                TAG(lane_dist)(b->f[1], p->iy + i, p->oiy + i)),
                         V(min)(TAG(lane_dist)(b->f[2], p->iz + i, p->oiz + i), V(load)(p->tmax + i)));
    return V(mask)(V(le)(tn, tf));
}

/* Interval arithmetic over the whole packet: a child fails only if no ray with origin
 * and inverse direction inside the packet's bounds can enter it (empty slots hold
 * inverted infinite boxes and always fail). lb gets a lower bound of the packet's entry
 * distance per child (used to order children). */
W_INLINE unsigned TAG(interval_test)(const TAG(pktc) *k, const pkt *p, const TAG(rt_node) *nd,
                                     float lb[RT_W])
{
    VF tn = k->tmin_min, tf = V(set1)(p->tmax_max);
    for (int a = 0; a < 3; a++) {
        const VF dn = V(sub)(V(load)(nd->b[k->near[a]]), k->onear[a]);
        const VF df = V(sub)(V(load)(nd->b[k->near[a] ^ 1]), k->ofar[a]);
        tn = V(max)(tn, V(min)(V(mul)(dn, k->ilo[a]), V(mul)(dn, k->ihi[a])));
        tf = V(min)(tf, V(max)(V(mul)(df, k->ilo[a]), V(mul)(df, k->ihi[a])));
    }
    V(storeu)(lb, tn);
    return V(mask)(V(le)(tn, tf));
}

/* Children of an inner node entered by some ray from lane group `first` on, nearest
 * first, each with the first group that enters it. Returns their count. */
W_INLINE int TAG(visit_node)(const TAG(pktc) *k, const pkt *p, const TAG(rt_node) *nd,
                             int first, pentry out[RT_W], uint32_t node)
{
    float lb[RT_W];
    int nh = 0;
    for (unsigned m = TAG(interval_test)(k, p, nd, lb); m; m &= m - 1) {
        const int c = __builtin_ctz(m);
        const TAG(cbox) b = TAG(child_box)(k, nd, c);
        int g = first;
        while (g < k->ngroups && !TAG(group_box)(p, &b, g)) g++;
        if (g == k->ngroups) continue;
        const pentry e = {nd->child[c], node, lb[c], (uint8_t)g, (uint8_t)c};
        int j = nh++;
        for (; j > 0 && out[j - 1].dist > e.dist; j--) out[j] = out[j - 1];
        out[j] = e;
    }
    return nh;
}

W_INLINE void TAG(update_tmax_max)(pkt *p, int ngroups)
{
    VF m = V(set1)(-INFINITY);
    for (int g = 0; g < ngroups; g++) m = V(max)(m, V(load)(p->tmax + RT_W * g));
    p->tmax_max = V(hmax)(m);
}

/* rt_wtray_init (tri_intersect.c) and the initial best hit for the lanes in need, the
 * arithmetic RT_W lanes at a time: the same comparisons (false for NaN), the same
 * division and products per lane, so the same constants bit for bit. Axis numbers are
 * selected as integer bit patterns in float lanes. */
W_FN void TAG(lanes_ready)(pkt *p, uint64_t need)
{
    p->wready |= need;
    while (need) {
        const int g = __builtin_ctzll(need) / RT_W, i0 = RT_W * g;
        unsigned lanes = (unsigned)(need >> i0) & ((1u << RT_W) - 1);
        need &= ~((uint64_t)((1u << RT_W) - 1) << i0);
        const VF sign = V(set1)(-0.0f);
        const VF dx = V(load)(p->dx + i0), dy = V(load)(p->dy + i0), dz = V(load)(p->dz + i0);
        const VF ax = V(andnot)(sign, dx), ay = V(andnot)(sign, dy), az = V(andnot)(sign, dz);
        /* kz = 0, then 1 where |dy| > |dx|, then 2 where |dz| beats that axis; kx and ky
         * follow it, (kz + 1) % 3 and (kz + 2) % 3, and swap where dir[kz] < 0. */
        const VF y = V(gt)(ay, ax);
        const VF z = V(gt)(az, V(select)(y, ay, ax));
        const VF dkz = V(select)(z, dz, V(select)(y, dy, dx));
        const VF dkx = V(select)(z, dx, V(select)(y, dz, dy));
        const VF dky = V(select)(z, dy, V(select)(y, dx, dz));
        const VF neg = V(lt)(dkz, V(zero)());
        const VF c0 = V(set1_bits)(0), c1 = V(set1_bits)(1), c2 = V(set1_bits)(2);
        const VF kz = V(select)(z, c2, V(select)(y, c1, c0));
        const VF kx = V(select)(z, c0, V(select)(y, c2, c1));
        const VF ky = V(select)(z, c1, V(select)(y, c0, c2));
        const VF sz = V(div)(V(set1)(1.0f), dkz);
        float sx[RT_W], sy[RT_W], szs[RT_W];
        int32_t kxs[RT_W], kys[RT_W], kzs[RT_W];
        V(storeu)(sx, V(mul)(V(select)(neg, dky, dkx), sz));
        V(storeu)(sy, V(mul)(V(select)(neg, dkx, dky), sz));
        V(storeu)(szs, sz);
        V(store_bits)(kxs, V(select)(neg, ky, kx));
        V(store_bits)(kys, V(select)(neg, kx, ky));
        V(store_bits)(kzs, kz);
        for (; lanes; lanes &= lanes - 1) {
            const int l = __builtin_ctz(lanes), i = i0 + l;
            const rt_ray *r = ray_at(&p->src, i);
            p->w[i] = (rt_wtray){kxs[l], kys[l], kzs[l], sx[l], sy[l], szs[l],
                                 {r->org[0], r->org[1], r->org[2]}};
            p->best[i] = (rt_hit){r->tmax, 0.0f, 0.0f, RT_NO_HIT};
        }
    }
}

/* One ray's leaf test; returns 1 when its tmax changed (a hit, or occluded). */
W_INLINE int TAG(lane_leaf)(const rt_bvh *bvh, pkt *p, uint32_t ref, int i)
{
    TAG(rt_wtray) wv;   /* broadcasts: cheaper to redo than to keep 64 of them */
    TAG(rt_wtray_init)(&wv, &p->w[i]);
    if (p->occluded) {
        if (!TAG(rt_leaf_any)(bvh, ref, &p->w[i], &wv, p->tmin[i], p->tmax[i])) return 0;
        p->occluded[i] = 1;
        p->tmax[i] = -INFINITY;
        p->live &= ~((uint64_t)1 << i);
        return 1;
    }
    if (!TAG(rt_leaf_closest)(bvh, ref, &p->w[i], &wv, p->tmin[i], &p->best[i])) return 0;
    p->tmax[i] = p->best[i].t;
    return 1;
}

/* Tests the leaf for every ray from the first active group on that enters its box. */
W_FN void TAG(visit_leaf)(const rt_bvh *bvh, pkt *p, const TAG(pktc) *k, const pentry *e,
                          rt_packet_stats *st)
{
    const TAG(cbox) b = TAG(child_box)(k, &TAG(rt_nodes)(bvh)[e->parent], e->slot);
    uint64_t mask = 0;
    for (int g = e->first; g < k->ngroups; g++)
        mask |= (uint64_t)TAG(group_box)(p, &b, g) << (RT_W * g);
    st->leaf_visits++;
    st->leaf_lanes += (uint64_t)(p->n - RT_W * e->first);
    st->leaf_active += (uint64_t)__builtin_popcountll(mask);
    if (mask & ~p->wready) TAG(lanes_ready)(p, mask & ~p->wready);   /* first leaf of a lane */
    int changed = 0;
    for (; mask; mask &= mask - 1) changed |= TAG(lane_leaf)(bvh, p, e->ref, __builtin_ctzll(mask));
    if (changed) TAG(update_tmax_max)(p, k->ngroups);
}

W_FN void TAG(traverse)(const rt_bvh *bvh, pkt *p, const TAG(pktc) *k, rt_packet_stats *st)
{
    pentry stack[TAG(RT_STACK)];
    int sp = 0;
    pentry cur = {TAG(rt_root)(bvh), 0, 0.0f, 0, 0};
    for (;;) {
        if (!rt_ref_is_leaf(cur.ref)) {
            pentry kids[RT_W];
            st->node_visits++;
            st->node_lanes += (uint64_t)(p->n - RT_W * cur.first);
            const int nh = TAG(visit_node)(k, p, &TAG(rt_nodes)(bvh)[cur.ref], cur.first, kids, cur.ref);
            if (nh) {
                for (int j = nh - 1; j > 0; j--) stack[sp++] = kids[j];
                cur = kids[0];
                continue;
            }
        } else {
            TAG(visit_leaf)(bvh, p, k, &cur, st);
            if (p->occluded && !p->live) return;
        }
        do {                /* pop, skipping boxes beyond every ray's current hit */
            if (sp == 0) return;
            cur = stack[--sp];
        } while (cur.dist > p->tmax_max);
    }
}

/* ---- packet setup ------------------------------------------------------------------ */

/* rt_ray_traceable for RT_W rays in SoA form (c as TAG(load_rays) fills it): lanes that
 * fail it are dead from the start (they miss), so NaN never reaches the interval or slab
 * arithmetic. x - x == 0 holds exactly for finite x; ordered compares are false for NaN. */
W_INLINE VF TAG(traceable)(const VF c[8])
{
    const VF zero = V(zero)();
    VF ok = V(le)(c[3], c[7]);
    VF nonzero = zero;
    for (int a = 0; a < 3; a++) {
        ok = V(and)(ok, V(eq)(V(sub)(c[a], c[a]), zero));
        ok = V(and)(ok, V(eq)(V(sub)(c[4 + a], c[4 + a]), zero));
        nonzero = V(or)(nonzero, V(neq)(c[4 + a], zero));
    }
    return V(and)(ok, nonzero);
}

/* rt_safe_inverse on RT_W lanes (the same division of the same values). */
W_INLINE VF TAG(safe_inverse)(VF d)
{
    const VF sign = V(set1)(-0.0f), tiny = V(set1)(1e-18f);
    const VF small = V(lt)(V(andnot)(sign, d), tiny);
    return V(div)(V(set1)(1.0f), V(select)(small, V(or)(V(and)(d, sign), tiny), d));
}

/* Running packet-wide bounds while the lanes are filled. */
typedef struct TAG(bounds) {
    VF olo[3], ohi[3], ilo[3], ihi[3], tmin_min, tmax_max;
    unsigned neg[3], pos[3];    /* lanes (of valid rays) with negative / positive 1/dir */
} TAG(bounds);

/* Fills lane group g of p (inverse directions, origin * inverse, directions, t range)
 * and folds it into the bounds. */
W_INLINE void TAG(fill_group)(pkt *p, const rt_ray_src *s, int n, int g, TAG(bounds) *b, int strided)
{
    const VF inf = V(set1)(INFINITY), ninf = V(set1)(-INFINITY);
    float *const inv_out[3] = {p->ix, p->iy, p->iz}, *const oi_out[3] = {p->oix, p->oiy, p->oiz},
                 *const d_out[3] = {p->dx, p->dy, p->dz};
    const int i = RT_W * g;
    VF c[8];
    TAG(load_rays)(s, i, n, c, strided);
    const VF valid = TAG(traceable)(c);
    const unsigned vm = V(mask)(valid);
    for (int a = 0; a < 3; a++) {
        const VF o = c[a], d = c[4 + a], inv = TAG(safe_inverse)(d);
        V(store)(inv_out[a] + i, inv);
        V(store)(oi_out[a] + i, V(mul)(o, inv));
        V(store)(d_out[a] + i, d);
        const unsigned ng = V(mask)(V(lt)(inv, V(zero)())) & vm;
        b->neg[a] |= ng;
        b->pos[a] |= vm & ~ng;
        b->olo[a] = V(min)(b->olo[a], V(select)(valid, o, inf));
        b->ohi[a] = V(max)(b->ohi[a], V(select)(valid, o, ninf));
        b->ilo[a] = V(min)(b->ilo[a], V(select)(valid, inv, inf));
        b->ihi[a] = V(max)(b->ihi[a], V(select)(valid, inv, ninf));
    }
    const VF tmin = V(select)(valid, c[3], inf), tmax = V(select)(valid, c[7], ninf);
    V(store)(p->tmin + i, tmin);
    V(store)(p->tmax + i, tmax);
    b->tmin_min = V(min)(b->tmin_min, tmin);
    b->tmax_max = V(max)(b->tmax_max, tmax);
    p->live |= (uint64_t)vm << i;
}

/* The packet-wide constants from the bounds; 0 when the packet is incoherent: its
 * direction signs differ, or its origins spread further than p->max_spread. */
W_INLINE int TAG(set_intervals)(pkt *p, TAG(pktc) *k, const TAG(bounds) *b)
{
    float spread2 = 0.0f;
    for (int a = 0; a < 3; a++) {
        if (b->neg[a] && b->pos[a]) return 0;
        const int positive = !b->neg[a];
        const float lo = V(hmin)(b->olo[a]), hi = V(hmax)(b->ohi[a]);
        if (hi > lo) spread2 += (hi - lo) * (hi - lo);   /* lo > hi: no traceable ray */
        k->near[a] = 2 * a + (positive ? 0 : 1);
        k->ilo[a] = V(set1)(V(hmin)(b->ilo[a]));
        k->ihi[a] = V(set1)(V(hmax)(b->ihi[a]));
        k->onear[a] = V(set1)(positive ? hi : lo);
        k->ofar[a] = V(set1)(positive ? lo : hi);
    }
    if (spread2 > p->max_spread * p->max_spread) return 0;
    k->tmin_min = V(set1)(V(hmin)(b->tmin_min));
    p->tmax_max = V(hmax)(b->tmax_max);
    return 1;
}

/* Fills p and k from s's rays [0, n); 0 when the packet must be traced as a stream
 * instead (set_intervals). */
W_INLINE int TAG(pkt_init)(pkt *p, TAG(pktc) *k, const rt_ray_src *s, int n, uint8_t *occluded,
                            int strided)
{
    TAG(bounds) b;
    const VF inf = V(set1)(INFINITY), ninf = V(set1)(-INFINITY);
    for (int a = 0; a < 3; a++) {
        b.olo[a] = b.ilo[a] = inf;
        b.ohi[a] = b.ihi[a] = ninf;
        b.neg[a] = b.pos[a] = 0;
    }
    b.tmin_min = inf;
    b.tmax_max = ninf;
    p->n = n;
    p->live = 0;
    p->wready = 0;
    p->occluded = occluded;
    p->src = *s;
    k->ngroups = (n + RT_W - 1) / RT_W;
    for (int g = 0; g < k->ngroups; g++) TAG(fill_group)(p, s, n, g, &b, strided);
    return TAG(set_intervals)(p, k, &b);
}

/* Traces the packet of s's rays [0, n) into p->best / occluded; returns 0 (having
 * traced nothing) when it must be traced as a stream instead. `strided` (a constant:
 * packet_trace for rt_ray arrays, packet_trace_strided for a caller's records) picks
 * how the rays are loaded. */
W_INLINE int TAG(packet_run)(const rt_bvh *bvh, pkt *p, const rt_ray_src *s, int n,
                             uint8_t *occluded, rt_packet_stats *st, int strided)
{
    TAG(pktc) k;
    if (!TAG(pkt_init)(p, &k, s, n, occluded, strided)) return 0;
    if (p->live) TAG(traverse)(bvh, p, &k, st);
    return 1;
}

W_FN int TAG(packet_trace)(const rt_bvh *bvh, pkt *p, const rt_ray_src *s, int n,
                           uint8_t *occluded, rt_packet_stats *st)
{
    return TAG(packet_run)(bvh, p, s, n, occluded, st, 0);
}

W_FN int TAG(packet_trace_strided)(const rt_bvh *bvh, pkt *p, const rt_ray_src *s, int n,
                                   uint8_t *occluded, rt_packet_stats *st)
{
    return TAG(packet_run)(bvh, p, s, n, occluded, st, 1);
}
