/* Packet traversal for coherent rays: closest hit and any hit (see packet.h).
 *
 * Data flow: rt_ray[n] -> pkt (structure-of-arrays inverse directions, origin*inverse,
 * per-lane t ranges; packet-wide intervals of origins and inverse directions) -> per
 * inner node: one interval test culls the four children for the whole packet, then each
 * surviving child is checked against groups of 4 rays starting at the packet's first
 * active ray until one group enters it (that group becomes the child's first active ray)
 * -> per leaf: the rays from the first active one on are tested against the leaf box 4 at
 * a time, and those inside run the single-ray block test -> rt_hit[].
 *
 * Why this scheme (first-active-ray traversal, Wald et al. 2001, plus the interval
 * arithmetic culling of Wald, Boulos and Shirley 2007): in a coherent packet a node's children are usually entered by the
 * first ray tested, so an inner node costs about one 4-ray slab test per child instead
 * of one per ray, and children the packet misses are rejected by a single interval test.
 * It needs all rays to share direction signs (one near/far plane choice per axis), so
 * packets without that fall back to single-ray traversal.
 *
 * On AVX2 (rt_bvh.isa, isa.h) chunk runs packet8.c's fill and traversal instead: the same
 * scheme 8 lanes and 8 children at a time over the 8-wide nodes, with the same results. */
#include "raytracer/packet.h"

#include <math.h>
#include <string.h>

#include "raytracer/packet_internal.h"

typedef struct cbox {           /* one child's near and far planes, broadcast */
    __m128 n[3], f[3];
} cbox;

static cbox child_box(const pkt *p, const rt_node4 *nd, int c)
{
    cbox b;
    for (int a = 0; a < 3; a++) {
        b.n[a] = _mm_set1_ps(nd->b[p->near[a]][c]);
        b.f[a] = _mm_set1_ps(nd->b[p->near[a] ^ 1][c]);
    }
    return b;
}

/* Slab test of one box against rays 4g..4g+3; returns their 4-bit hit mask. */
RT_INLINE int group_box(const pkt *p, const cbox *b, int g)
{
    const int i = 4 * g;
    const __m128 ix = _mm_load_ps(p->ix + i), iy = _mm_load_ps(p->iy + i),
                 iz = _mm_load_ps(p->iz + i);
    const __m128 ox = _mm_load_ps(p->oix + i), oy = _mm_load_ps(p->oiy + i),
                 oz = _mm_load_ps(p->oiz + i);
    const __m128 tn = _mm_max_ps(
        _mm_max_ps(_mm_sub_ps(_mm_mul_ps(b->n[0], ix), ox),
                   _mm_sub_ps(_mm_mul_ps(b->n[1], iy), oy)),
        _mm_max_ps(_mm_sub_ps(_mm_mul_ps(b->n[2], iz), oz), _mm_load_ps(p->tmin + i)));
    const __m128 tf = _mm_min_ps(
        _mm_min_ps(_mm_sub_ps(_mm_mul_ps(b->f[0], ix), ox),
                   _mm_sub_ps(_mm_mul_ps(b->f[1], iy), oy)),
        _mm_min_ps(_mm_sub_ps(_mm_mul_ps(b->f[2], iz), oz), _mm_load_ps(p->tmax + i)));
    return _mm_movemask_ps(_mm_cmple_ps(tn, tf));
}

/* Interval arithmetic over the whole packet: a child fails only if no ray with origin
 * and inverse direction inside the packet's bounds can enter it. lb gets a lower bound
 * of the packet's entry distance per child (used to order children). */
RT_INLINE int interval_test(const pkt *p, const rt_node4 *nd, float lb[4])
{
    __m128 tn = p->tmin_min, tf = _mm_set1_ps(p->tmax_max);
    for (int a = 0; a < 3; a++) {
        const __m128 dn = _mm_sub_ps(_mm_load_ps(nd->b[p->near[a]]), p->onear[a]);
        const __m128 df = _mm_sub_ps(_mm_load_ps(nd->b[p->near[a] ^ 1]), p->ofar[a]);
        tn = _mm_max_ps(tn, _mm_min_ps(_mm_mul_ps(dn, p->ilo[a]), _mm_mul_ps(dn, p->ihi[a])));
        tf = _mm_min_ps(tf, _mm_max_ps(_mm_mul_ps(df, p->ilo[a]), _mm_mul_ps(df, p->ihi[a])));
    }
    _mm_storeu_ps(lb, tn);
    return _mm_movemask_ps(_mm_cmple_ps(tn, tf));
}

static int first_hit_group(const pkt *p, const rt_node4 *nd, int c, int first)
{
    const cbox b = child_box(p, nd, c);
    for (int g = first; g < p->ngroups; g++)
        if (group_box(p, &b, g)) return g;
    return -1;
}

/* Children of an inner node entered by some ray, nearest first. Returns their count. */
static int visit_node(const pkt *p, const rt_node4 *nd, int first, pentry out[4],
                      uint32_t node)
{
    float lb[4];
    int nh = 0;
    for (int m = interval_test(p, nd, lb); m; m &= m - 1) {
        const int c = __builtin_ctz(m);
        const int g = first_hit_group(p, nd, c, first);
        if (g < 0) continue;
        pentry e = {nd->child[c], node, lb[c], (uint8_t)g, (uint8_t)c};
        int j = nh++;
        for (; j > 0 && out[j - 1].dist > e.dist; j--) out[j] = out[j - 1];
        out[j] = e;
    }
    return nh;
}

static void update_tmax_max(pkt *p)
{
    __m128 m = _mm_set1_ps(-INFINITY);
    for (int g = 0; g < p->ngroups; g++) m = _mm_max_ps(m, _mm_load_ps(p->tmax + 4 * g));
    m = _mm_max_ps(m, _mm_shuffle_ps(m, m, _MM_SHUFFLE(1, 0, 3, 2)));
    m = _mm_max_ps(m, _mm_shuffle_ps(m, m, _MM_SHUFFLE(2, 3, 0, 1)));
    p->tmax_max = _mm_cvtss_f32(m);
}

/* Tests the leaf for every ray from the first active one that enters its box. */
static void visit_leaf(const rt_bvh *bvh, pkt *p, const pentry *e, rt_packet_stats *st)
{
    const cbox b = child_box(p, &bvh->nodes[e->parent], e->slot);
    uint64_t mask = 0;
    for (int g = e->first; g < p->ngroups; g++)
        mask |= (uint64_t)group_box(p, &b, g) << (4 * g);
    st->leaf_visits++;
    st->leaf_lanes += (uint64_t)(p->n - 4 * e->first);
    st->leaf_active += (uint64_t)__builtin_popcountll(mask);
    int changed = 0;
    for (; mask; mask &= mask - 1) {
        const int i = __builtin_ctzll(mask);
        if (!(p->wready >> i & 1)) {   /* most camera rays never get here */
            rt_wtray_init(&p->w[i], p->rays[i].org, p->rays[i].dir);
            p->best[i] = (rt_hit){p->rays[i].tmax, 0.0f, 0.0f, RT_NO_HIT};
            p->wready |= (uint64_t)1 << i;
        }
        rt_wtray4 w4;   /* broadcasts: cheaper to redo than to keep 64 of them */
        rt_wtray4_init(&w4, &p->w[i]);
        if (p->occluded) {
            if (rt_leaf_any(bvh, e->ref, &p->w[i], &w4, p->tmin[i], p->tmax[i])) {
                p->occluded[i] = 1;
                p->tmax[i] = -INFINITY;
                p->live &= ~((uint64_t)1 << i);
                changed = 1;
            }
        } else if (rt_leaf_closest(bvh, e->ref, &p->w[i], &w4, p->tmin[i], &p->best[i])) {
            p->tmax[i] = p->best[i].t;
            changed = 1;
        }
    }
    if (changed) update_tmax_max(p);
}

static void traverse(const rt_bvh *bvh, pkt *p, rt_packet_stats *st)
{
    pentry stack[RT_STACK_SIZE];
    int sp = 0;
    pentry cur = {bvh->root, 0, 0.0f, 0, 0};
    for (;;) {
        if (!rt_ref_is_leaf(cur.ref)) {
            pentry kids[4];
            st->node_visits++;
            st->node_lanes += (uint64_t)(p->n - 4 * cur.first);
            const int nh = visit_node(p, &bvh->nodes[cur.ref], cur.first, kids, cur.ref);
            if (nh) {
                for (int k = nh - 1; k > 0; k--) stack[sp++] = kids[k];
                cur = kids[0];
                continue;
            }
        } else {
            visit_leaf(bvh, p, &cur, st);
            if (p->occluded && !p->live) return;
        }
        do {                /* pop, skipping boxes beyond every ray's current hit */
            if (sp == 0) return;
            cur = stack[--sp];
        } while (cur.dist > p->tmax_max);
    }
}

/* SSE2 select: mask ? a : b. */
RT_INLINE __m128 select4(__m128 mask, __m128 a, __m128 b)
{
    return _mm_or_ps(_mm_and_ps(mask, a), _mm_andnot_ps(mask, b));
}

/* rt_safe_inverse on 4 lanes (same results: the same division of the same values). */
RT_INLINE __m128 safe_inverse4(__m128 d)
{
    const __m128 sign = _mm_set1_ps(-0.0f);
    const __m128 tiny = _mm_or_ps(_mm_and_ps(d, sign), _mm_set1_ps(1e-18f));
    const __m128 small = _mm_cmplt_ps(_mm_andnot_ps(sign, d), _mm_set1_ps(1e-18f));
    return _mm_div_ps(_mm_set1_ps(1.0f), select4(small, tiny, d));
}

/* Running packet-wide bounds while the lanes are filled. */
typedef struct bounds4 {
    __m128 olo[3], ohi[3], ilo[3], ihi[3], tmin_min, tmax_max;
    int neg[3], pos[3];         /* lanes (of valid rays) with negative / positive 1/dir */
} bounds4;

static void bounds4_init(bounds4 *b)
{
    const __m128 inf = _mm_set1_ps(INFINITY), ninf = _mm_set1_ps(-INFINITY);
    for (int a = 0; a < 3; a++) {
        b->olo[a] = b->ilo[a] = inf;
        b->ohi[a] = b->ihi[a] = ninf;
        b->neg[a] = b->pos[a] = 0;
    }
    b->tmin_min = inf;
    b->tmax_max = ninf;
}

/* Four rays as structure of arrays: o[3], tmin, d[3], tmax. Lanes past n are copies of
 * an invalid ray (tmin > tmax), so reading never leaves the caller's array. */
static void load4(const rt_ray *rays, int i, int n, __m128 o[4], __m128 d[4])
{
    static const rt_ray pad = {{0, 0, 0}, INFINITY, {1, 1, 1}, -INFINITY};
    const rt_ray *r[4];
    for (int k = 0; k < 4; k++) r[k] = i + k < n ? &rays[i + k] : &pad;
    for (int k = 0; k < 4; k++) {
        o[k] = _mm_loadu_ps(r[k]->org);   /* org[0..2], tmin */
        d[k] = _mm_loadu_ps(r[k]->dir);   /* dir[0..2], tmax */
    }
    _MM_TRANSPOSE4_PS(o[0], o[1], o[2], o[3]);
    _MM_TRANSPOSE4_PS(d[0], d[1], d[2], d[3]);
}

/* rt_ray_traceable for four rays in SoA form: a lane that fails it is dead from the
 * start (it misses), so NaN never reaches the interval or slab arithmetic. x - x == 0
 * holds exactly for finite x; ordered compares are false for NaN. */
RT_INLINE __m128 traceable4(const __m128 o[4], const __m128 d[4])
{
    const __m128 zero = _mm_setzero_ps();
    __m128 ok = _mm_cmple_ps(o[3], d[3]);
    __m128 nonzero = zero;
    for (int a = 0; a < 3; a++) {
        ok = _mm_and_ps(ok, _mm_cmpeq_ps(_mm_sub_ps(o[a], o[a]), zero));
        ok = _mm_and_ps(ok, _mm_cmpeq_ps(_mm_sub_ps(d[a], d[a]), zero));
        nonzero = _mm_or_ps(nonzero, _mm_cmpneq_ps(d[a], zero));
    }
    return _mm_and_ps(ok, nonzero);
}

/* Fills lanes 4g..4g+3 and folds them into the packet bounds. */
static void set_group(pkt *p, const rt_ray *rays, int g, bounds4 *b)
{
    __m128 o[4], d[4];
    const int i = 4 * g;
    load4(rays, i, p->n, o, d);
    const __m128 valid = traceable4(o, d);
    const int vm = _mm_movemask_ps(valid);
    float *inv_out[3] = {p->ix + i, p->iy + i, p->iz + i};
    float *oi_out[3] = {p->oix + i, p->oiy + i, p->oiz + i};
    const __m128 inf = _mm_set1_ps(INFINITY), ninf = _mm_set1_ps(-INFINITY);
    for (int a = 0; a < 3; a++) {
        const __m128 inv = safe_inverse4(d[a]);
        _mm_store_ps(inv_out[a], inv);
        _mm_store_ps(oi_out[a], _mm_mul_ps(o[a], inv));
        const int neg = _mm_movemask_ps(_mm_cmplt_ps(inv, _mm_setzero_ps())) & vm;
        b->neg[a] |= neg;
        b->pos[a] |= vm & ~neg;
        b->olo[a] = _mm_min_ps(b->olo[a], select4(valid, o[a], inf));
        b->ohi[a] = _mm_max_ps(b->ohi[a], select4(valid, o[a], ninf));
        b->ilo[a] = _mm_min_ps(b->ilo[a], select4(valid, inv, inf));
        b->ihi[a] = _mm_max_ps(b->ihi[a], select4(valid, inv, ninf));
    }
    const __m128 tmin = select4(valid, o[3], inf), tmax = select4(valid, d[3], ninf);
    _mm_store_ps(p->tmin + i, tmin);
    _mm_store_ps(p->tmax + i, tmax);
    b->tmin_min = _mm_min_ps(b->tmin_min, tmin);
    b->tmax_max = _mm_max_ps(b->tmax_max, tmax);
    p->live |= (uint64_t)vm << i;
}

static float hmin(__m128 v)
{
    v = _mm_min_ps(v, _mm_shuffle_ps(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm_cvtss_f32(_mm_min_ps(v, _mm_shuffle_ps(v, v, _MM_SHUFFLE(2, 3, 0, 1))));
}

static float hmax(__m128 v)
{
    v = _mm_max_ps(v, _mm_shuffle_ps(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm_cvtss_f32(_mm_max_ps(v, _mm_shuffle_ps(v, v, _MM_SHUFFLE(2, 3, 0, 1))));
}

/* Packet-wide intervals for interval_test; 0 when direction signs differ. */
static int set_intervals(pkt *p, const bounds4 *b)
{
    for (int a = 0; a < 3; a++) {
        if (b->neg[a] && b->pos[a]) return 0;
        const int pos = !b->neg[a];
        const float olo = hmin(b->olo[a]), ohi = hmax(b->ohi[a]);
        p->near[a] = 2 * a + (pos ? 0 : 1);
        p->ilo[a] = _mm_set1_ps(hmin(b->ilo[a]));
        p->ihi[a] = _mm_set1_ps(hmax(b->ihi[a]));
        p->onear[a] = _mm_set1_ps(pos ? ohi : olo);
        p->ofar[a] = _mm_set1_ps(pos ? olo : ohi);
    }
    p->tmin_min = _mm_set1_ps(hmin(b->tmin_min));
    p->tmax_max = hmax(b->tmax_max);
    return 1;
}

/* Returns 0 when the packet must be traced ray by ray instead. */
static int pkt_init(pkt *p, const rt_ray *rays, int n, uint8_t *occluded)
{
    bounds4 b;
    bounds4_init(&b);
    p->n = n;
    p->ngroups = (n + 3) / 4;
    p->live = 0;
    p->wready = 0;
    p->occluded = occluded;
    p->rays = rays;
    for (int g = 0; g < p->ngroups; g++) set_group(p, rays, g, &b);
    return set_intervals(p, &b);
}

static void chunk(const rt_bvh *bvh, const rt_ray *rays, int n, rt_hit *hits,
                  uint8_t *occluded, rt_packet_stats *st)
{
    pkt p;
    st->packets++;
    st->rays += (uint64_t)n;
    if (occluded) memset(occluded, 0, (size_t)n);
    if (bvh->root == RT_EMPTY_REF) {
        for (int i = 0; hits && i < n; i++)
            hits[i] = (rt_hit){rays[i].tmax, 0.0f, 0.0f, RT_NO_HIT};
        return;
    }
    /* The kernels of bvh->isa (isa.h): SSE here, or AVX2 over the 8-wide nodes (packet8.c). */
    const int wide = bvh->isa == RT_ISA_AVX2;
    if (!(wide ? rt_packet_init8(&p, rays, n, occluded) : pkt_init(&p, rays, n, occluded))) {
        st->fallback_packets++;
        for (int i = 0; i < n; i++) {
            if (occluded) occluded[i] = (uint8_t)rt_occluded1(bvh, &rays[i]);
            else rt_intersect1(bvh, &rays[i], &hits[i]);
        }
        return;
    }
    if (p.live) {
        if (wide) rt_packet_traverse8(bvh, &p, st);
        else traverse(bvh, &p, st);
    }
    for (int i = 0; !occluded && i < n; i++)
        hits[i] = p.wready >> i & 1 ? p.best[i] : (rt_hit){rays[i].tmax, 0.0f, 0.0f, RT_NO_HIT};
}

void rt_intersect_packet(const rt_bvh *bvh, const rt_ray *rays, int n, rt_hit *hits,
                         rt_packet_stats *stats)
{
    rt_packet_stats local = {0};
    rt_packet_stats *st = stats ? stats : &local;
    for (int i = 0; i < n; i += RT_PACKET_MAX) {
        const int m = n - i < RT_PACKET_MAX ? n - i : RT_PACKET_MAX;
        chunk(bvh, rays + i, m, hits + i, NULL, st);
    }
}

void rt_occluded_packet(const rt_bvh *bvh, const rt_ray *rays, int n, uint8_t *occluded,
                        rt_packet_stats *stats)
{
    rt_packet_stats local = {0};
    rt_packet_stats *st = stats ? stats : &local;
    for (int i = 0; i < n; i += RT_PACKET_MAX) {
        const int m = n - i < RT_PACKET_MAX ? n - i : RT_PACKET_MAX;
        chunk(bvh, rays + i, m, NULL, occluded + i, st);
    }
}

void rt_packet_stats_add(rt_packet_stats *a, const rt_packet_stats *b)
{
    a->packets += b->packets;
    a->rays += b->rays;
    a->fallback_packets += b->fallback_packets;
    a->node_visits += b->node_visits;
    a->node_lanes += b->node_lanes;
    a->leaf_visits += b->leaf_visits;
    a->leaf_lanes += b->leaf_lanes;
    a->leaf_active += b->leaf_active;
}

void rt_packet_stats_print(const rt_packet_stats *s, const char *name, FILE *out)
{
    const double pk = s->packets ? (double)s->packets : 1.0;
    const double nv = s->node_visits ? (double)s->node_visits : 1.0;
    const double lv = s->leaf_visits ? (double)s->leaf_visits : 1.0;
    fprintf(out,
            "packets %s: %llu packets of %.1f rays, %.1f%% ray by ray; per packet %.1f node "
            "and %.1f leaf visits; lanes from first active: %.1f at nodes, %.1f at leaves; "
            "rays entering a visited leaf: %.1f (%.0f%% of those lanes)\n",
            name ? name : "", (unsigned long long)s->packets, (double)s->rays / pk,
            100.0 * (double)s->fallback_packets / pk, (double)s->node_visits / pk,
            (double)s->leaf_visits / pk, (double)s->node_lanes / nv,
            (double)s->leaf_lanes / lv, (double)s->leaf_active / lv,
            s->leaf_lanes ? 100.0 * (double)s->leaf_active / (double)s->leaf_lanes : 0.0);
}
