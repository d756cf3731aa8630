/* Single-ray BVH8 traversal with AVX2, closest hit and any hit (see bvh_traverse.h).
 *
 * Data flow: rt_ray -> per-ray constants broadcast to 8 lanes (inverse direction,
 * origin * inverse, near-plane choice by direction sign) -> depth-first loop over
 * rt_node8 (bvh8_collapse.c) with one 8-wide AVX slab test for all eight children ->
 * nearest child next, the others pushed so they pop nearest first -> leaves: the shared
 * rt_tri4 blocks, two at a time (tri_intersect8.h) and a last odd one with the SSE block
 * test (tri_intersect.h) -> rt_hit. rt_intersect1 and rt_occluded1 call these when
 * rt_bvh.isa is RT_ISA_AVX2 (isa.h), and so does the packet path's single-ray fallback.
 *
 * Why: incoherent rays spend their time stepping down the tree, and recompiling the
 * 4-wide kernels for AVX2 changed nothing (+-3%). An 8-wide node test costs about what a
 * 4-wide one does and the tree has a third fewer levels, so a ray visits 25-35% fewer
 * nodes (bunny: shadow rays 11.0 -> 7.4, random rays 3.5 -> 2.6), as with Embree's BVH8 on
 * AVX2 machines. The shape is the SSE kernel's (bvh_traverse.c): near/far planes picked
 * once per ray, so a node test is 6 loads, 6 mul/sub and 6 min/max with no branching per
 * child; stack entries keep their entry distance, so boxes beyond the best hit pop for
 * free.
 *
 * Exactness: every lane of a leaf test performs the SSE test's operations in the same
 * order (target "avx2" without "fma", and -std=c11 keeps contraction off, so no
 * multiply-add can change a rounding), hence the same t, u, v and primitive as the SSE
 * path and brute force. The node test only culls, and the box margin (bvh.h) makes it
 * conservative whatever its rounding.
 *
 * Compiled for AVX2 with function attributes (simd.h), not -mavx2 for the file: the rest
 * of the library must run on any x86-64, and the dispatch is decided at run time. */
#include "raytracer/bvh_traverse.h"

#include <immintrin.h>

#include "raytracer/bvh8_leaf.h"

typedef struct node_ray8 {
    __m256 ix, iy, iz;      /* 1/dir, zero components replaced by tiny ones */
    __m256 oix, oiy, oiz;   /* org/dir, so a plane distance is one mul and one sub */
    int nx, ny, nz;         /* near plane per axis (RT_LO_* or RT_HI_*) */
} node_ray8;

/* rt_safe_inverse of the three direction components in one division (the same IEEE
 * operations per lane, so the same values), and the near planes from their signs. */
RT_AVX2_INLINE void node_ray8_init(node_ray8 *r, const rt_ray *ray)
{
    const __m128 d = _mm_loadu_ps(ray->dir);           /* dir[0..2], tmax */
    const __m128 sign = _mm_set1_ps(-0.0f), tiny = _mm_set1_ps(1e-18f);
    const __m128 small = _mm_cmplt_ps(_mm_andnot_ps(sign, d), tiny);
    const __m128 safe = _mm_blendv_ps(d, _mm_or_ps(_mm_and_ps(d, sign), tiny), small);
    const __m128 inv = _mm_div_ps(_mm_set1_ps(1.0f), safe);
    const __m128 oi = _mm_mul_ps(_mm_loadu_ps(ray->org), inv);   /* org[0..2] * inv */
    r->ix = _mm256_broadcastss_ps(inv);
    r->iy = _mm256_broadcastss_ps(_mm_shuffle_ps(inv, inv, 0x55));
    r->iz = _mm256_broadcastss_ps(_mm_shuffle_ps(inv, inv, 0xaa));
    r->oix = _mm256_broadcastss_ps(oi);
    r->oiy = _mm256_broadcastss_ps(_mm_shuffle_ps(oi, oi, 0x55));
    r->oiz = _mm256_broadcastss_ps(_mm_shuffle_ps(oi, oi, 0xaa));
    /* Far plane first where 1/dir is not >= 0 (negative; NaN as in the SSE kernel). */
    const int neg = _mm_movemask_ps(_mm_cmpnge_ps(inv, _mm_setzero_ps()));
    r->nx = RT_LO_X + (neg & 1);
    r->ny = RT_LO_Y + (neg >> 1 & 1);
    r->nz = RT_LO_Z + (neg >> 2 & 1);
}

/* Slab test of the eight children; returns the hit mask and the entry distances. */
RT_AVX2_INLINE unsigned node_test8(const rt_node8 *n, const node_ray8 *r, __m256 tmin,
                                   __m256 tmax, __m256 *tnear)
{
    const __m256 tnx = _mm256_sub_ps(_mm256_mul_ps(_mm256_load_ps(n->b[r->nx]), r->ix), r->oix);
    const __m256 tny = _mm256_sub_ps(_mm256_mul_ps(_mm256_load_ps(n->b[r->ny]), r->iy), r->oiy);
    const __m256 tnz = _mm256_sub_ps(_mm256_mul_ps(_mm256_load_ps(n->b[r->nz]), r->iz), r->oiz);
    const __m256 tfx =
        _mm256_sub_ps(_mm256_mul_ps(_mm256_load_ps(n->b[r->nx ^ 1]), r->ix), r->oix);
    const __m256 tfy =
        _mm256_sub_ps(_mm256_mul_ps(_mm256_load_ps(n->b[r->ny ^ 1]), r->iy), r->oiy);
    const __m256 tfz =
        _mm256_sub_ps(_mm256_mul_ps(_mm256_load_ps(n->b[r->nz ^ 1]), r->iz), r->oiz);
    const __m256 tn = _mm256_max_ps(_mm256_max_ps(tnx, tny), _mm256_max_ps(tnz, tmin));
    const __m256 tf = _mm256_min_ps(_mm256_min_ps(tfx, tfy), _mm256_min_ps(tfz, tmax));
    *tnear = tn;
    return (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(tn, tf, _CMP_LE_OQ));
}

/* Starts fetching a box that will be visited after the current subtree: random rays
 * spend most of their time waiting for nodes and triangles. */
RT_AVX2_INLINE void prefetch_ref8(const rt_bvh *bvh, uint32_t ref)
{
    if (rt_ref_is_leaf(ref)) {
        const char *p = (const char *)(bvh->tris + rt_leaf_first(ref));
        _mm_prefetch(p, _MM_HINT_T0);
        _mm_prefetch(p + 64, _MM_HINT_T0);
    } else {
        const char *p = (const char *)(bvh->nodes8 + ref);
        _mm_prefetch(p, _MM_HINT_T0);
        _mm_prefetch(p + 64, _MM_HINT_T0);
        _mm_prefetch(p + 128, _MM_HINT_T0);
        _mm_prefetch(p + 192, _MM_HINT_T0);
    }
}

/* Picks the next node among the hit children: returns the nearest and pushes the rest
 * so that they pop nearest first. */
RT_AVX2_INLINE uint32_t order_children8(const rt_bvh *bvh, const rt_node8 *n, unsigned mask,
                                        __m256 tnear, rt_stack_entry *stack, int *sp)
{
    const int c0 = __builtin_ctz(mask);
    mask &= mask - 1;
    if (!mask) return n->child[c0];
    float d[8];
    _mm256_storeu_ps(d, tnear);
    const int c1 = __builtin_ctz(mask);
    mask &= mask - 1;
    if (!mask) {
        const int near = d[c0] <= d[c1] ? c0 : c1, far = c0 + c1 - near;
        prefetch_ref8(bvh, n->child[far]);
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
    for (int i = 0; i < k - 1; i++) prefetch_ref8(bvh, top[i].ref);
    *sp += k - 1;
    return top[k - 1].ref;
}

/* The ray's watertight-test constants for 4- and 8-lane block tests, made on the first
 * leaf the ray reaches. */
typedef struct tri_ray8 {
    rt_wtray w;
    rt_wtray4 w4;
    rt_wtray8 w8;
    int ready;
} tri_ray8;

RT_AVX2_INLINE const tri_ray8 *tri_ray8_get(tri_ray8 *tr, const rt_ray *ray)
{
    if (__builtin_expect(!tr->ready, 0)) {
        rt_wtray_init(&tr->w, ray->org, ray->dir);
        rt_wtray4_init(&tr->w4, &tr->w);
        rt_wtray8_init(&tr->w8, &tr->w);
        tr->ready = 1;
    }
    return tr;
}

/* The leaf tests of bvh8_leaf.h (blocks two at a time) with the ray's constants. */
RT_AVX2_INLINE int leaf_closest8(const rt_bvh *bvh, uint32_t ref, const tri_ray8 *tr,
                                 float tmin, rt_hit *best)
{
    return rt_leaf_closest8(bvh, ref, &tr->w, &tr->w4, &tr->w8, tmin, best);
}

RT_AVX2_INLINE int leaf_any8(const rt_bvh *bvh, uint32_t ref, const tri_ray8 *tr, float tmin,
                             float tmax)
{
    return rt_leaf_any8(bvh, ref, &tr->w, &tr->w4, &tr->w8, tmin, tmax);
}

/* Closest-hit search; best->t acts as the ray's current tmax and only ever drops. */
RT_AVX2_INLINE void closest8(const rt_bvh *bvh, const rt_ray *ray, tri_ray8 *tr, rt_hit *best)
{
    node_ray8 nr;
    node_ray8_init(&nr, ray);
    const __m256 tmin = _mm256_set1_ps(ray->tmin);
    __m256 tmax = _mm256_set1_ps(best->t);
    rt_stack_entry stack[RT_STACK8_SIZE];
    int sp = 0;
    uint32_t ref = bvh->root8;
    for (;;) {
        if (!rt_ref_is_leaf(ref)) {
            const rt_node8 *n = &bvh->nodes8[ref];
            __m256 tn;
            const unsigned mask = node_test8(n, &nr, tmin, tmax, &tn);
            if (mask) {
                ref = order_children8(bvh, n, mask, tn, stack, &sp);
                continue;
            }
        } else if (leaf_closest8(bvh, ref, tri_ray8_get(tr, ray), ray->tmin, best)) {
            tmax = _mm256_set1_ps(best->t);
        }
        do {                /* pop, skipping boxes that start beyond the best hit */
            if (sp == 0) return;
            --sp;
        } while (stack[sp].dist > best->t);
        ref = stack[sp].ref;
    }
}

RT_AVX2_INLINE int occluded8(const rt_bvh *bvh, const rt_ray *ray, tri_ray8 *tr)
{
    node_ray8 nr;
    node_ray8_init(&nr, ray);
    const __m256 tmin = _mm256_set1_ps(ray->tmin), tmax = _mm256_set1_ps(ray->tmax);
    rt_stack_entry stack[RT_STACK8_SIZE];
    int sp = 0;
    uint32_t ref = bvh->root8;
    for (;;) {
        if (!rt_ref_is_leaf(ref)) {
            const rt_node8 *n = &bvh->nodes8[ref];
            __m256 tn;
            const unsigned mask = node_test8(n, &nr, tmin, tmax, &tn);
            if (mask) {
                ref = order_children8(bvh, n, mask, tn, stack, &sp);
                continue;
            }
        } else if (leaf_any8(bvh, ref, tri_ray8_get(tr, ray), ray->tmin, ray->tmax)) {
            return 1;
        }
        if (sp == 0) return 0;
        ref = stack[--sp].ref;
    }
}

RT_AVX2 int rt_intersect1_avx2(const rt_bvh *bvh, const rt_ray *ray, rt_hit *hit)
{
    tri_ray8 tr;
    tr.ready = 0;
    *hit = (rt_hit){ray->tmax, 0.0f, 0.0f, RT_NO_HIT};
    if (bvh->root8 != RT_EMPTY_REF && ray->tmin <= ray->tmax) closest8(bvh, ray, &tr, hit);
    return hit->prim != RT_NO_HIT;
}

RT_AVX2 int rt_occluded1_avx2(const rt_bvh *bvh, const rt_ray *ray)
{
    if (bvh->root8 == RT_EMPTY_REF || !(ray->tmin <= ray->tmax)) return 0;
    tri_ray8 tr;
    tr.ready = 0;
    return occluded8(bvh, ray, &tr);
}
