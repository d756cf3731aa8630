/* Single-ray BVH4 traversal, closest hit and any hit (see bvh_traverse.h).
 *
 * Data flow: rt_ray -> per-ray constants (inverse direction, near-plane choice by
 * direction sign, watertight shear) -> depth-first loop over rt_node4 with one SSE slab
 * test for all four children -> nearest child next, the others pushed far-to-near ->
 * rt_tri4 leaf tests (t, u, v of the best hit) -> rt_hit.
 *
 * Why it is shaped like this: the near/far planes of each axis are picked once per ray
 * from the direction's sign, so a node test is 6 loads, 6 mul/sub and 6 min/max with no
 * per-child branching; children are visited nearest first so the first hits shrink tmax
 * early and later boxes are culled; stack entries keep their entry distance so popped
 * boxes beyond the current hit are skipped without touching memory. */
#include "raytracer/bvh_traverse.h"

#include <math.h>

typedef struct node_ray {
    __m128 ix, iy, iz;      /* 1/dir, zero components replaced by tiny ones */
    __m128 oix, oiy, oiz;   /* org/dir, so a plane distance is one mul and one sub */
    int nx, ny, nz;         /* near plane per axis (RT_LO_* or RT_HI_*) */
} node_ray;

/* The ray's watertight-test constants, made on the first leaf it reaches: most rays of
 * a typical frame (background, rays leaving the scene) never reach one. */
typedef struct tri_ray {
    rt_wtray w;
    rt_wtray4 w4;
    int ready;
} tri_ray;

RT_INLINE const tri_ray *tri_ray_get(tri_ray *tr, const rt_ray *ray)
{
    if (__builtin_expect(!tr->ready, 0)) {
        rt_wtray_init(&tr->w, ray->org, ray->dir);
        rt_wtray4_init(&tr->w4, &tr->w);
        tr->ready = 1;
    }
    return tr;
}

static void node_ray_init(node_ray *r, const rt_ray *ray)
{
    const float ix = rt_safe_inverse(ray->dir[0]), iy = rt_safe_inverse(ray->dir[1]),
                iz = rt_safe_inverse(ray->dir[2]);
    r->ix = _mm_set1_ps(ix);
    r->iy = _mm_set1_ps(iy);
    r->iz = _mm_set1_ps(iz);
    r->oix = _mm_set1_ps(ray->org[0] * ix);
    r->oiy = _mm_set1_ps(ray->org[1] * iy);
    r->oiz = _mm_set1_ps(ray->org[2] * iz);
    r->nx = ix >= 0.0f ? RT_LO_X : RT_HI_X;
    r->ny = iy >= 0.0f ? RT_LO_Y : RT_HI_Y;
    r->nz = iz >= 0.0f ? RT_LO_Z : RT_HI_Z;
}

/* Slab test of the four children; returns the hit mask and the entry distances. */
RT_INLINE int node_test(const rt_node4 *n, const node_ray *r, __m128 tmin, __m128 tmax,
                        __m128 *tnear)
{
    const __m128 tnx = _mm_sub_ps(_mm_mul_ps(_mm_load_ps(n->b[r->nx]), r->ix), r->oix);
    const __m128 tny = _mm_sub_ps(_mm_mul_ps(_mm_load_ps(n->b[r->ny]), r->iy), r->oiy);
    const __m128 tnz = _mm_sub_ps(_mm_mul_ps(_mm_load_ps(n->b[r->nz]), r->iz), r->oiz);
    const __m128 tfx = _mm_sub_ps(_mm_mul_ps(_mm_load_ps(n->b[r->nx ^ 1]), r->ix), r->oix);
    const __m128 tfy = _mm_sub_ps(_mm_mul_ps(_mm_load_ps(n->b[r->ny ^ 1]), r->iy), r->oiy);
    const __m128 tfz = _mm_sub_ps(_mm_mul_ps(_mm_load_ps(n->b[r->nz ^ 1]), r->iz), r->oiz);
    const __m128 tn = _mm_max_ps(_mm_max_ps(tnx, tny), _mm_max_ps(tnz, tmin));
    const __m128 tf = _mm_min_ps(_mm_min_ps(tfx, tfy), _mm_min_ps(tfz, tmax));
    *tnear = tn;
    return _mm_movemask_ps(_mm_cmple_ps(tn, tf));
}

/* Sorts the top k stack entries so the nearest is on top (k = 3 or 4). */
RT_INLINE void sort_top(rt_stack_entry *top, int k)
{
    for (int i = 1; i < k; i++) {
        const rt_stack_entry e = top[i];
        int j = i;
        for (; j > 0 && top[j - 1].dist < e.dist; j--) top[j] = top[j - 1];
        top[j] = e;
    }
}

/* Starts fetching a box's contents that will be visited after the current subtree:
 * random rays spend most of their time waiting for nodes and triangles. */
RT_INLINE void prefetch_ref(const rt_bvh *bvh, uint32_t ref)
{
    const char *p = rt_ref_is_leaf(ref) ? (const char *)(bvh->tris + rt_leaf_first(ref))
                                        : (const char *)(bvh->nodes + ref);
    _mm_prefetch(p, _MM_HINT_T0);
    _mm_prefetch(p + 64, _MM_HINT_T0);
}

/* Picks the next node among the hit children: returns the nearest and pushes the rest
 * so that they pop nearest first. */
RT_INLINE uint32_t order_children(const rt_bvh *bvh, const rt_node4 *n, int mask,
                                 __m128 tnear, rt_stack_entry *stack, int *sp)
{
    float d[4];
    _mm_storeu_ps(d, tnear);
    const int c0 = __builtin_ctz(mask);
    mask &= mask - 1;
    if (!mask) return n->child[c0];
    const int c1 = __builtin_ctz(mask);
    mask &= mask - 1;
    if (!mask) {
        const int near = d[c0] <= d[c1] ? c0 : c1, far = c0 + c1 - near;
        prefetch_ref(bvh, n->child[far]);
        stack[*sp] = (rt_stack_entry){n->child[far], d[far]};
        ++*sp;
        return n->child[near];
    }
    const int base = *sp;
    stack[base] = (rt_stack_entry){n->child[c0], d[c0]};
    stack[base + 1] = (rt_stack_entry){n->child[c1], d[c1]};
    int k = 2;
    for (; mask; mask &= mask - 1, k++) {
        const int c = __builtin_ctz(mask);
        stack[base + k] = (rt_stack_entry){n->child[c], d[c]};
    }
    for (int i = 0; i < k; i++) prefetch_ref(bvh, stack[base + i].ref);
    sort_top(stack + base, k);
    *sp = base + k - 1;
    return stack[base + k - 1].ref;
}

/* Closest-hit search; best->t acts as the ray's current tmax and only ever drops. */
static void closest(const rt_bvh *bvh, uint32_t ref, const rt_ray *ray, tri_ray *tr,
                    rt_hit *best)
{
    node_ray nr;
    node_ray_init(&nr, ray);
    const __m128 tmin = _mm_set1_ps(ray->tmin);
    __m128 tmax = _mm_set1_ps(best->t);
    rt_stack_entry stack[RT_STACK_SIZE];
    int sp = 0;
    for (;;) {
        if (!rt_ref_is_leaf(ref)) {
            const rt_node4 *n = &bvh->nodes[ref];
            __m128 tn;
            const int mask = node_test(n, &nr, tmin, tmax, &tn);
            if (mask) {
                ref = order_children(bvh, n, mask, tn, stack, &sp);
                continue;
            }
        } else if (tri_ray_get(tr, ray),
                   rt_leaf_closest(bvh, ref, &tr->w, &tr->w4, ray->tmin, best)) {
            tmax = _mm_set1_ps(best->t);
        }
        do {                /* pop, skipping boxes that start beyond the best hit */
            if (sp == 0) return;
            --sp;
        } while (stack[sp].dist > best->t);
        ref = stack[sp].ref;
    }
}

static int occluded(const rt_bvh *bvh, uint32_t ref, const rt_ray *ray, tri_ray *tr)
{
    node_ray nr;
    node_ray_init(&nr, ray);
    const __m128 tmin = _mm_set1_ps(ray->tmin), tmax = _mm_set1_ps(ray->tmax);
    rt_stack_entry stack[RT_STACK_SIZE];
    int sp = 0;
    for (;;) {
        if (!rt_ref_is_leaf(ref)) {
            const rt_node4 *n = &bvh->nodes[ref];
            __m128 tn;
            const int mask = node_test(n, &nr, tmin, tmax, &tn);
            if (mask) {
                ref = order_children(bvh, n, mask, tn, stack, &sp);
                continue;
            }
        } else if (tri_ray_get(tr, ray),
                   rt_leaf_any(bvh, ref, &tr->w, &tr->w4, ray->tmin, ray->tmax)) {
            return 1;
        }
        if (sp == 0) return 0;
        ref = stack[--sp].ref;
    }
}

int rt_intersect1(const rt_bvh *bvh, const rt_ray *ray, rt_hit *hit)
{
    if (!rt_ray_traceable(ray)) {
        *hit = (rt_hit){ray->tmax, 0.0f, 0.0f, RT_NO_HIT};
        return 0;
    }
    if (bvh->isa == RT_ISA_AVX2) return rt_intersect1_avx2(bvh, ray, hit);
    tri_ray tr;
    tr.ready = 0;
    *hit = (rt_hit){ray->tmax, 0.0f, 0.0f, RT_NO_HIT};
    if (bvh->root != RT_EMPTY_REF)
        closest(bvh, bvh->root, ray, &tr, hit);
    return hit->prim != RT_NO_HIT;
}

int rt_occluded1(const rt_bvh *bvh, const rt_ray *ray)
{
    if (!rt_ray_traceable(ray)) return 0;
    if (bvh->isa == RT_ISA_AVX2) return rt_occluded1_avx2(bvh, ray);
    if (bvh->root == RT_EMPTY_REF) return 0;
    tri_ray tr;
    tr.ready = 0;
    return occluded(bvh, bvh->root, ray, &tr);
}
