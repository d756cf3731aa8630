/* Packet traversal with AVX2 over the 8-wide nodes: closest hit and any hit (packet.h).
 *
 * Data flow: rt_ray[n] -> rt_packet_init8 (8 rays per load and transpose: the same pkt
 * lanes and packet-wide intervals as packet.c's pkt_init, in whole groups of 8, plus the
 * directions) -> rt_packet_traverse8: the intervals broadcast to 8 lanes -> per rt_node8
 * (bvh8_collapse.c): one 8-wide interval test culls the eight children for the whole
 * packet, then each surviving child is checked against groups of 8 rays starting at the
 * packet's first active group until one group enters it -> per leaf: the rays from the
 * first active group on are tested against the leaf box 8 at a time; the watertight
 * constants of rays reaching their first leaf are made 8 at a time (lanes_ready8); each
 * ray inside runs the AVX2 leaf test (bvh8_leaf.h: the leaf's blocks two at a time) ->
 * best[] / occluded[]. packet.c's chunk runs these instead of its SSE fill and traversal
 * when rt_bvh.isa is RT_ISA_AVX2 (isa.h).
 *
 * Why: the scheme is packet.c's (first-active-ray traversal with interval culling), with
 * every step twice as wide for about the same cost: one interval test covers a node of
 * up to 8 children and the tree has a third fewer levels, a box test covers 8 rays, a
 * leaf of two blocks is one triangle test per ray instead of two, and the per-ray setup
 * (transpose, inverse directions, watertight constants) runs 8 lanes at a time; that
 * setup was about half of a shadow packet's cost on the courtyard.
 *
 * Exactness: box and interval tests only cull, and the box margin (bvh.h) makes them
 * conservative whatever their rounding; the 8-wide boxes are the binary tree's boxes with
 * the same margin. Per-lane setup values come from the same IEEE operations as packet.c's
 * and tri_intersect.c's (same inverse, same dominant-axis rule with ties to the lower
 * axis, same division and products); minima and maxima of the packet bounds do not depend
 * on the order. Each ray's leaf tests keep the watertight test's operations (no FMA), so
 * t, u, v and the primitive equal the SSE packet path, the single-ray kernels and brute
 * force bit for bit, and the tie rule (smaller primitive at equal t) makes the answer
 * independent of the order in which leaves are reached.
 *
 * Compiled for AVX2 with function attributes (simd.h), not -mavx2 for the file. */
#include "raytracer/packet_internal.h"

#include <immintrin.h>
#include <math.h>
#include <stddef.h>

#include "raytracer/bvh8_leaf.h"

/* The lane arrays are read and written with aligned 8-lane loads and stores. */
_Static_assert(_Alignof(pkt) % 32 == 0 && offsetof(pkt, ix) % 32 == 0 &&
                   offsetof(pkt, iy) % 32 == 0 && offsetof(pkt, iz) % 32 == 0 &&
                   offsetof(pkt, oix) % 32 == 0 && offsetof(pkt, oiy) % 32 == 0 &&
                   offsetof(pkt, oiz) % 32 == 0 && offsetof(pkt, dx) % 32 == 0 &&
                   offsetof(pkt, dy) % 32 == 0 && offsetof(pkt, dz) % 32 == 0 &&
                   offsetof(pkt, tmin) % 32 == 0 && offsetof(pkt, tmax) % 32 == 0,
               "pkt lane arrays must be 32-byte aligned");
/* load8 reads a ray as one 8-float vector. */
_Static_assert(sizeof(rt_ray) == 8 * sizeof(float) && offsetof(rt_ray, tmin) == 12 &&
                   offsetof(rt_ray, dir) == 16 && offsetof(rt_ray, tmax) == 28,
               "rt_ray must be org, tmin, dir, tmax");

typedef struct pkt8 {           /* the packet-wide constants as 8-lane broadcasts */
    __m256 ilo[3], ihi[3];      /* inverse direction interval per axis */
    __m256 onear[3], ofar[3];   /* origin bound that minimises entry / maximises exit */
    __m256 tmin_min;
    int near[3];                /* near plane per axis */
    int ngroups;                /* groups of 8 lanes */
} pkt8;

typedef struct cbox8 {          /* one child's near and far planes, broadcast */
    __m256 n[3], f[3];
} cbox8;

RT_AVX2_INLINE cbox8 child_box8(const pkt8 *k, const rt_node8 *nd, int c)
{
    cbox8 b;
    for (int a = 0; a < 3; a++) {
        b.n[a] = _mm256_broadcast_ss(&nd->b[k->near[a]][c]);
        b.f[a] = _mm256_broadcast_ss(&nd->b[k->near[a] ^ 1][c]);
    }
    return b;
}

/* Slab test of one box against rays 8g..8g+7; returns their 8-bit hit mask. */
RT_AVX2_INLINE unsigned group_box8(const pkt *p, const cbox8 *b, int g)
{
    const int i = 8 * g;
    const __m256 ix = _mm256_load_ps(p->ix + i), iy = _mm256_load_ps(p->iy + i),
                 iz = _mm256_load_ps(p->iz + i);
    const __m256 ox = _mm256_load_ps(p->oix + i), oy = _mm256_load_ps(p->oiy + i),
                 oz = _mm256_load_ps(p->oiz + i);
    const __m256 tn = _mm256_max_ps(
        _mm256_max_ps(_mm256_sub_ps(_mm256_mul_ps(b->n[0], ix), ox),
                      _mm256_sub_ps(_mm256_mul_ps(b->n[1], iy), oy)),
        _mm256_max_ps(_mm256_sub_ps(_mm256_mul_ps(b->n[2], iz), oz),
                      _mm256_load_ps(p->tmin + i)));
    const __m256 tf = _mm256_min_ps(
        _mm256_min_ps(_mm256_sub_ps(_mm256_mul_ps(b->f[0], ix), ox),
                      _mm256_sub_ps(_mm256_mul_ps(b->f[1], iy), oy)),
        _mm256_min_ps(_mm256_sub_ps(_mm256_mul_ps(b->f[2], iz), oz),
                      _mm256_load_ps(p->tmax + i)));
    return (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(tn, tf, _CMP_LE_OQ));
}

/* Interval arithmetic over the whole packet for the eight children (empty slots hold
 * inverted infinite boxes and always fail). lb gets a lower bound of the packet's entry
 * distance per child. */
RT_AVX2_INLINE unsigned interval_test8(const pkt8 *k, const pkt *p, const rt_node8 *nd,
                                       float lb[8])
{
    __m256 tn = k->tmin_min, tf = _mm256_set1_ps(p->tmax_max);
    for (int a = 0; a < 3; a++) {
        const __m256 dn = _mm256_sub_ps(_mm256_load_ps(nd->b[k->near[a]]), k->onear[a]);
        const __m256 df = _mm256_sub_ps(_mm256_load_ps(nd->b[k->near[a] ^ 1]), k->ofar[a]);
        tn = _mm256_max_ps(tn, _mm256_min_ps(_mm256_mul_ps(dn, k->ilo[a]),
                                             _mm256_mul_ps(dn, k->ihi[a])));
        tf = _mm256_min_ps(tf, _mm256_max_ps(_mm256_mul_ps(df, k->ilo[a]),
                                             _mm256_mul_ps(df, k->ihi[a])));
    }
    _mm256_storeu_ps(lb, tn);
    return (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(tn, tf, _CMP_LE_OQ));
}

/* Children of an inner node entered by some ray, nearest first. Returns their count. */
RT_AVX2_INLINE int visit_node8(const pkt8 *k, const pkt *p, const rt_node8 *nd, int first,
                               pentry out[8], uint32_t node)
{
    float lb[8];
    int nh = 0;
    for (unsigned m = interval_test8(k, p, nd, lb); m; m &= m - 1) {
        const int c = __builtin_ctz(m);
        const cbox8 b = child_box8(k, nd, c);
        int g = first;
        while (g < k->ngroups && !group_box8(p, &b, g)) g++;
        if (g == k->ngroups) continue;
        const pentry e = {nd->child[c], node, lb[c], (uint8_t)g, (uint8_t)c};
        int j = nh++;
        for (; j > 0 && out[j - 1].dist > e.dist; j--) out[j] = out[j - 1];
        out[j] = e;
    }
    return nh;
}

RT_AVX2_INLINE void update_tmax_max8(pkt *p, int ngroups)
{
    __m256 m = _mm256_set1_ps(-INFINITY);
    for (int g = 0; g < ngroups; g++) m = _mm256_max_ps(m, _mm256_load_ps(p->tmax + 8 * g));
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_shuffle_ps(h, h, _MM_SHUFFLE(1, 0, 3, 2)));
    h = _mm_max_ps(h, _mm_shuffle_ps(h, h, _MM_SHUFFLE(2, 3, 0, 1)));
    p->tmax_max = _mm_cvtss_f32(h);
}

/* rt_wtray_init (tri_intersect.c) and the initial best hit for the lanes in need, the
 * arithmetic 8 lanes at a time: the same comparisons (false for NaN), the same division
 * and products per lane, so the same constants bit for bit. */
static RT_AVX2 void lanes_ready8(pkt *p, uint64_t need)
{
    p->wready |= need;
    while (need) {
        const int g = __builtin_ctzll(need) >> 3;
        unsigned lanes = (unsigned)(need >> (8 * g)) & 0xffu;
        need &= ~((uint64_t)0xff << (8 * g));
        const __m256 sign = _mm256_set1_ps(-0.0f);
        const __m256 dx = _mm256_load_ps(p->dx + 8 * g), dy = _mm256_load_ps(p->dy + 8 * g),
                     dz = _mm256_load_ps(p->dz + 8 * g);
        const __m256 ax = _mm256_andnot_ps(sign, dx), ay = _mm256_andnot_ps(sign, dy),
                     az = _mm256_andnot_ps(sign, dz);
        /* kz = 0, then 1 where |dy| > |dx|, then 2 where |dz| beats that axis; kx and ky
         * follow it, (kz + 1) % 3 and (kz + 2) % 3, and swap where dir[kz] < 0. */
        const __m256 y = _mm256_cmp_ps(ay, ax, _CMP_GT_OQ);
        const __m256 z = _mm256_cmp_ps(az, _mm256_blendv_ps(ax, ay, y), _CMP_GT_OQ);
        const __m256 dkz = _mm256_blendv_ps(_mm256_blendv_ps(dx, dy, y), dz, z);
        const __m256 dkx = _mm256_blendv_ps(_mm256_blendv_ps(dy, dz, y), dx, z);
        const __m256 dky = _mm256_blendv_ps(_mm256_blendv_ps(dz, dx, y), dy, z);
        const __m256 neg = _mm256_cmp_ps(dkz, _mm256_setzero_ps(), _CMP_LT_OQ);
        const __m256i iy = _mm256_castps_si256(y), iz = _mm256_castps_si256(z),
                      in = _mm256_castps_si256(neg);
        const __m256i c0 = _mm256_setzero_si256(), c1 = _mm256_set1_epi32(1),
                      c2 = _mm256_set1_epi32(2);
        const __m256i kz = _mm256_blendv_epi8(_mm256_blendv_epi8(c0, c1, iy), c2, iz);
        const __m256i kx = _mm256_blendv_epi8(_mm256_blendv_epi8(c1, c2, iy), c0, iz);
        const __m256i ky = _mm256_blendv_epi8(_mm256_blendv_epi8(c2, c0, iy), c1, iz);
        const __m256 sz = _mm256_div_ps(_mm256_set1_ps(1.0f), dkz);
        float sx[8], sy[8], szs[8];
        int32_t kxs[8], kys[8], kzs[8];
        _mm256_storeu_ps(sx, _mm256_mul_ps(_mm256_blendv_ps(dkx, dky, neg), sz));
        _mm256_storeu_ps(sy, _mm256_mul_ps(_mm256_blendv_ps(dky, dkx, neg), sz));
        _mm256_storeu_ps(szs, sz);
        _mm256_storeu_si256((__m256i *)kxs, _mm256_blendv_epi8(kx, ky, in));
        _mm256_storeu_si256((__m256i *)kys, _mm256_blendv_epi8(ky, kx, in));
        _mm256_storeu_si256((__m256i *)kzs, kz);
        for (; lanes; lanes &= lanes - 1) {
            const int l = __builtin_ctz(lanes), i = 8 * g + l;
            rt_wtray *w = &p->w[i];
            const rt_ray *r = &p->rays[i];
            w->kx = kxs[l];
            w->ky = kys[l];
            w->kz = kzs[l];
            w->sx = sx[l];
            w->sy = sy[l];
            w->sz = szs[l];
            w->org[0] = r->org[0];
            w->org[1] = r->org[1];
            w->org[2] = r->org[2];
            p->best[i] = (rt_hit){r->tmax, 0.0f, 0.0f, RT_NO_HIT};
        }
    }
}

/* Tests the leaf for every ray from the first active group on that enters its box. */
static RT_AVX2 void visit_leaf8(const rt_bvh *bvh, pkt *p, const pkt8 *k, const pentry *e,
                                rt_packet_stats *st)
{
    const cbox8 b = child_box8(k, &bvh->nodes8[e->parent], e->slot);
    uint64_t mask = 0;
    for (int g = e->first; g < k->ngroups; g++)
        mask |= (uint64_t)group_box8(p, &b, g) << (8 * g);
    st->leaf_visits++;
    st->leaf_lanes += (uint64_t)(p->n - 8 * e->first);
    st->leaf_active += (uint64_t)__builtin_popcountll(mask);
    if (mask & ~p->wready) lanes_ready8(p, mask & ~p->wready);   /* first leaf of a lane */
    int changed = 0;
    for (; mask; mask &= mask - 1) {
        const int i = __builtin_ctzll(mask);
        rt_wtray8 w8;   /* broadcasts: cheaper to redo than to keep 64 of them */
        rt_wtray8_init(&w8, &p->w[i]);
        rt_wtray4 w4;
        rt_wtray4_from8(&w4, &w8);
        if (p->occluded) {
            if (rt_leaf_any8(bvh, e->ref, &p->w[i], &w4, &w8, p->tmin[i], p->tmax[i])) {
                p->occluded[i] = 1;
                p->tmax[i] = -INFINITY;
                p->live &= ~((uint64_t)1 << i);
                changed = 1;
            }
        } else if (rt_leaf_closest8(bvh, e->ref, &p->w[i], &w4, &w8, p->tmin[i],
                                    &p->best[i])) {
            p->tmax[i] = p->best[i].t;
            changed = 1;
        }
    }
    if (changed) update_tmax_max8(p, k->ngroups);
}

/* ---- packet setup ---------------------------------------------------------------- */

/* rt_ray_traceable for eight rays in SoA form (c as load8 fills it): lanes that fail it
 * are dead from the start. x - x == 0 holds exactly for finite x; ordered compares are
 * false for NaN. */
RT_AVX2_INLINE __m256 traceable8(const __m256 c[8])
{
    const __m256 zero = _mm256_setzero_ps();
    __m256 ok = _mm256_cmp_ps(c[3], c[7], _CMP_LE_OQ);
    __m256 nonzero = zero;
    for (int a = 0; a < 3; a++) {
        ok = _mm256_and_ps(ok, _mm256_cmp_ps(_mm256_sub_ps(c[a], c[a]), zero, _CMP_EQ_OQ));
        ok = _mm256_and_ps(ok, _mm256_cmp_ps(_mm256_sub_ps(c[4 + a], c[4 + a]), zero, _CMP_EQ_OQ));
        nonzero = _mm256_or_ps(nonzero, _mm256_cmp_ps(c[4 + a], zero, _CMP_NEQ_OQ));
    }
    return _mm256_and_ps(ok, nonzero);
}

/* Eight rays as structure of arrays: c[0..2] origin, c[3] tmin, c[4..6] direction,
 * c[7] tmax (an rt_ray is those 8 floats). Lanes past n are copies of an invalid ray
 * (tmin > tmax), so reading never leaves the caller's array. */
RT_AVX2_INLINE void load8(const rt_ray *rays, int i, int n, __m256 c[8])
{
    static const rt_ray pad = {{0, 0, 0}, INFINITY, {1, 1, 1}, -INFINITY};
    __m256 r[8];
    for (int k = 0; k < 8; k++)
        r[k] = _mm256_loadu_ps((const float *)(i + k < n ? &rays[i + k] : &pad));
    __m256 t[8], u[8];
    for (int k = 0; k < 8; k += 2) {
        t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
        t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
    }
    for (int k = 0; k < 8; k += 4) {
        u[k] = _mm256_shuffle_ps(t[k], t[k + 2], 0x44);
        u[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], 0xee);
        u[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0x44);
        u[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], 0xee);
    }
    for (int k = 0; k < 4; k++) {
        c[k] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x20);
        c[k + 4] = _mm256_permute2f128_ps(u[k], u[k + 4], 0x31);
    }
}

/* rt_safe_inverse on 8 lanes (the same division of the same values). */
RT_AVX2_INLINE __m256 safe_inverse8(__m256 d)
{
    const __m256 sign = _mm256_set1_ps(-0.0f), tiny = _mm256_set1_ps(1e-18f);
    const __m256 small = _mm256_cmp_ps(_mm256_andnot_ps(sign, d), tiny, _CMP_LT_OQ);
    const __m256 safe = _mm256_blendv_ps(d, _mm256_or_ps(_mm256_and_ps(d, sign), tiny), small);
    return _mm256_div_ps(_mm256_set1_ps(1.0f), safe);
}

RT_AVX2_INLINE float hmin8(__m256 v)
{
    __m128 h = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_min_ps(h, _mm_shuffle_ps(h, h, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm_cvtss_f32(_mm_min_ps(h, _mm_shuffle_ps(h, h, _MM_SHUFFLE(2, 3, 0, 1))));
}

RT_AVX2_INLINE float hmax8(__m256 v)
{
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_max_ps(h, _mm_shuffle_ps(h, h, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm_cvtss_f32(_mm_max_ps(h, _mm_shuffle_ps(h, h, _MM_SHUFFLE(2, 3, 0, 1))));
}

/* pkt_init of packet.c 8 lanes at a time: the same lane values (the same operations per
 * lane) and the same packet bounds (minima and maxima do not depend on the order). */
RT_AVX2 int rt_packet_init8(pkt *p, const rt_ray *rays, int n, uint8_t *occluded)
{
    const __m256 inf = _mm256_set1_ps(INFINITY), ninf = _mm256_set1_ps(-INFINITY);
    __m256 olo[3], ohi[3], ilo[3], ihi[3], tmin_min = inf, tmax_max = ninf;
    unsigned neg[3] = {0, 0, 0}, pos[3] = {0, 0, 0};
    for (int a = 0; a < 3; a++) {
        olo[a] = ilo[a] = inf;
        ohi[a] = ihi[a] = ninf;
    }
    const int ngroups = (n + 7) / 8;
    float *const inv_out[3] = {p->ix, p->iy, p->iz}, *const oi_out[3] = {p->oix, p->oiy, p->oiz},
                 *const d_out[3] = {p->dx, p->dy, p->dz};
    p->live = 0;
    for (int g = 0; g < ngroups; g++) {
        const int i = 8 * g;
        __m256 c[8];
        load8(rays, i, n, c);
        const __m256 valid = traceable8(c);
        const unsigned vm = (unsigned)_mm256_movemask_ps(valid);
        for (int a = 0; a < 3; a++) {
            const __m256 o = c[a], d = c[4 + a], inv = safe_inverse8(d);
            _mm256_store_ps(inv_out[a] + i, inv);
            _mm256_store_ps(oi_out[a] + i, _mm256_mul_ps(o, inv));
            _mm256_store_ps(d_out[a] + i, d);
            const unsigned ng =
                (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(inv, _mm256_setzero_ps(), _CMP_LT_OQ)) & vm;
            neg[a] |= ng;
            pos[a] |= vm & ~ng;
            olo[a] = _mm256_min_ps(olo[a], _mm256_blendv_ps(inf, o, valid));
            ohi[a] = _mm256_max_ps(ohi[a], _mm256_blendv_ps(ninf, o, valid));
            ilo[a] = _mm256_min_ps(ilo[a], _mm256_blendv_ps(inf, inv, valid));
            ihi[a] = _mm256_max_ps(ihi[a], _mm256_blendv_ps(ninf, inv, valid));
        }
        const __m256 tmin = _mm256_blendv_ps(inf, c[3], valid),
                     tmax = _mm256_blendv_ps(ninf, c[7], valid);
        _mm256_store_ps(p->tmin + i, tmin);
        _mm256_store_ps(p->tmax + i, tmax);
        tmin_min = _mm256_min_ps(tmin_min, tmin);
        tmax_max = _mm256_max_ps(tmax_max, tmax);
        p->live |= (uint64_t)vm << i;
    }
    p->n = n;
    p->ngroups = 2 * ngroups;
    p->wready = 0;
    p->occluded = occluded;
    p->rays = rays;
    for (int a = 0; a < 3; a++) {           /* set_intervals of packet.c */
        if (neg[a] && pos[a]) return 0;
        const int positive = !neg[a];
        const float lo = hmin8(olo[a]), hi = hmax8(ohi[a]);
        p->near[a] = 2 * a + (positive ? 0 : 1);
        p->ilo[a] = _mm_set1_ps(hmin8(ilo[a]));
        p->ihi[a] = _mm_set1_ps(hmax8(ihi[a]));
        p->onear[a] = _mm_set1_ps(positive ? hi : lo);
        p->ofar[a] = _mm_set1_ps(positive ? lo : hi);
    }
    p->tmin_min = _mm_set1_ps(hmin8(tmin_min));
    p->tmax_max = hmax8(tmax_max);
    return 1;
}

/* ---- traversal --------------------------------------------------------------------- */

RT_AVX2 void rt_packet_traverse8(const rt_bvh *bvh, pkt *p, rt_packet_stats *st)
{
    pkt8 k;
    for (int a = 0; a < 3; a++) {
        k.ilo[a] = _mm256_broadcastss_ps(p->ilo[a]);
        k.ihi[a] = _mm256_broadcastss_ps(p->ihi[a]);
        k.onear[a] = _mm256_broadcastss_ps(p->onear[a]);
        k.ofar[a] = _mm256_broadcastss_ps(p->ofar[a]);
        k.near[a] = p->near[a];
    }
    k.tmin_min = _mm256_broadcastss_ps(p->tmin_min);
    k.ngroups = p->ngroups / 2;
    pentry stack[RT_STACK8_SIZE];
    int sp = 0;
    pentry cur = {bvh->root8, 0, 0.0f, 0, 0};
    for (;;) {
        if (!rt_ref_is_leaf(cur.ref)) {
            pentry kids[8];
            st->node_visits++;
            st->node_lanes += (uint64_t)(p->n - 8 * cur.first);
            const int nh = visit_node8(&k, p, &bvh->nodes8[cur.ref], cur.first, kids, cur.ref);
            if (nh) {
                for (int j = nh - 1; j > 0; j--) stack[sp++] = kids[j];
                cur = kids[0];
                continue;
            }
        } else {
            visit_leaf8(bvh, p, &k, &cur, st);
            if (p->occluded && !p->live) return;
        }
        do {                /* pop, skipping boxes beyond every ray's current hit */
            if (sp == 0) return;
            cur = stack[--sp];
        } while (cur.dist > p->tmax_max);
    }
}
