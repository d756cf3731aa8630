/* Single-ray BVH4 traversal, closest hit and any hit (see bvh_traverse.h).
 *
 * Data flow: rt_ray -> per-ray constants (inverse direction, near-plane choice by
 * direction sign, watertight shear) -> depth-first loop over rt_node4 with one SSE slab
 * test for all four children -> nearest child next, the others pushed far-to-near ->
 * rt_tri4 leaf tests -> rt_closest -> rt_hit.
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

typedef struct stack_entry {
    uint32_t ref;
    float dist;             /* entry distance of the box when it was pushed */
} stack_entry;

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
static inline int node_test(const rt_node4 *n, const node_ray *r, __m128 tmin, __m128 tmax,
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
static inline void sort_top(stack_entry *top, int k)
{
    for (int i = 1; i < k; i++) {
        const stack_entry e = top[i];
        int j = i;
        for (; j > 0 && top[j - 1].dist < e.dist; j--) top[j] = top[j - 1];
        top[j] = e;
    }
}

/* Picks the next node among the hit children: returns the nearest and pushes the rest
 * so that they pop nearest first. */
static inline uint32_t order_children(const rt_node4 *n, int mask, __m128 tnear,
                                      stack_entry *stack, int *sp)
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
        stack[*sp] = (stack_entry){n->child[far], d[far]};
        ++*sp;
        return n->child[near];
    }
    const int base = *sp;
    stack[base] = (stack_entry){n->child[c0], d[c0]};
    stack[base + 1] = (stack_entry){n->child[c1], d[c1]};
    int k = 2;
    for (; mask; mask &= mask - 1, k++) {
        const int c = __builtin_ctz(mask);
        stack[base + k] = (stack_entry){n->child[c], d[c]};
    }
    sort_top(stack + base, k);
    *sp = base + k - 1;
    return stack[base + k - 1].ref;
}

void rt_closest_from(const rt_bvh *bvh, uint32_t ref, const rt_ray *ray, rt_closest *best)
{
    node_ray nr;
    rt_wtray w;
    rt_wtray4 w4;
    node_ray_init(&nr, ray);
    rt_wtray_init(&w, ray->org, ray->dir);
    rt_wtray4_init(&w4, &w);
    const __m128 tmin = _mm_set1_ps(ray->tmin);
    __m128 tmax = _mm_set1_ps(best->t);
    stack_entry stack[RT_STACK_SIZE];
    int sp = 0;
    for (;;) {
        if (!rt_ref_is_leaf(ref)) {
            const rt_node4 *n = &bvh->nodes[ref];
            __m128 tn;
            const int mask = node_test(n, &nr, tmin, tmax, &tn);
            if (mask) {
                ref = order_children(n, mask, tn, stack, &sp);
                continue;
            }
        } else if (rt_leaf_closest(bvh, ref, &w, &w4, ray->tmin, best)) {
            tmax = _mm_set1_ps(best->t);
        }
        do {                /* pop, skipping boxes that start beyond the best hit */
            if (sp == 0) return;
            --sp;
        } while (stack[sp].dist > best->t);
        ref = stack[sp].ref;
    }
}

int rt_occluded_from(const rt_bvh *bvh, uint32_t ref, const rt_ray *ray)
{
    node_ray nr;
    rt_wtray w;
    rt_wtray4 w4;
    node_ray_init(&nr, ray);
    rt_wtray_init(&w, ray->org, ray->dir);
    rt_wtray4_init(&w4, &w);
    const __m128 tmin = _mm_set1_ps(ray->tmin), tmax = _mm_set1_ps(ray->tmax);
    stack_entry stack[RT_STACK_SIZE];
    int sp = 0;
    for (;;) {
        if (!rt_ref_is_leaf(ref)) {
            const rt_node4 *n = &bvh->nodes[ref];
            __m128 tn;
            const int mask = node_test(n, &nr, tmin, tmax, &tn);
            if (mask) {
                ref = order_children(n, mask, tn, stack, &sp);
                continue;
            }
        } else if (rt_leaf_any(bvh, ref, &w, &w4, ray->tmin, ray->tmax)) {
            return 1;
        }
        if (sp == 0) return 0;
        ref = stack[--sp].ref;
    }
}

void rt_closest_finish(const rt_ray *ray, const rt_closest *best, rt_hit *hit)
{
    hit->t = best->t;
    hit->prim = best->prim;
    hit->u = hit->v = 0.0f;
    if (best->prim == RT_NO_HIT) return;
    rt_wtray w;
    rt_wtray_init(&w, ray->org, ray->dir);
    float t;
    /* Same operations as the block test, so this hits again with the same t. */
    rt_tri4_lane_intersect(&w, best->blk, best->lane, ray->tmin, best->t, &t, &hit->u,
                           &hit->v);
}

int rt_intersect1(const rt_bvh *bvh, const rt_ray *ray, rt_hit *hit)
{
    rt_closest best = {ray->tmax, RT_NO_HIT, NULL, 0};
    if (bvh->root != RT_EMPTY_REF && ray->tmin <= ray->tmax)
        rt_closest_from(bvh, bvh->root, ray, &best);
    rt_closest_finish(ray, &best, hit);
    return best.prim != RT_NO_HIT;
}

int rt_occluded1(const rt_bvh *bvh, const rt_ray *ray)
{
    if (bvh->root == RT_EMPTY_REF || !(ray->tmin <= ray->tmax)) return 0;
    return rt_occluded_from(bvh, bvh->root, ray);
}
