/* Template of the leaf tests (leaf.h) at width RT_W: a leaf's blocks RT_W / 4 at a time,
 * and at width 8 a last odd block with the 4-wide test. Testing two blocks against the
 * same tmax instead of the first block's improved one changes nothing: the tie rule
 * keeps the smallest (t, primitive) either way. Callers of the 8-wide tests must run on
 * AVX2 (rt_bvh.isa). */

/* Tests blocks blk[0 .. RT_W/4) against the best hit so far; returns 1 when it improved.
 * Hits the filter f (NULL: none) rejects are passed over. */
W_INLINE int TAG(rt_blocks_closest)(const rt_tri4 *blk, const rt_wtray *w,
                                    const TAG(rt_wtray) *wv, float tmin, rt_hit *best,
                                    const rt_hit_filter *f)
{
    float t[RT_W], u[RT_W], v[RT_W];
    int improved = 0;
    for (int m = TAG(rt_tri_intersect)(w, wv, blk, tmin, best->t, t, u, v); m; m &= m - 1) {
        const int k = __builtin_ctz(m);
        const uint32_t prim = blk[k >> 2].prim[k & 3];
        if (__builtin_expect(f != NULL, 0) && !f->accept(f, prim, u[k], v[k], w->org)) continue;
        improved |= rt_hit_keep_closer(best, t[k], u[k], v[k], prim);
    }
    return improved;
}

/* The any-hit test of blocks blk[0 .. RT_W/4) through filter f: 1 when a hit in
 * [tmin, tmax] is accepted. */
W_INLINE int TAG(rt_blocks_any_filtered)(const rt_tri4 *blk, const rt_wtray *w,
                                         const TAG(rt_wtray) *wv, float tmin, float tmax,
                                         const rt_hit_filter *f)
{
    float t[RT_W], u[RT_W], v[RT_W];
    for (int m = TAG(rt_tri_intersect)(w, wv, blk, tmin, tmax, t, u, v); m; m &= m - 1) {
        const int k = __builtin_ctz(m);
        if (f->accept(f, blk[k >> 2].prim[k & 3], u[k], v[k], w->org)) return 1;
    }
    return 0;
}

/* Tests leaf ref against the best hit so far (best->t is the current tmax); returns 1
 * when best improved. */
W_INLINE int TAG(rt_leaf_closest)(const rt_bvh *bvh, uint32_t ref, const rt_wtray *w,
                                  const TAG(rt_wtray) *wv, float tmin, rt_hit *best)
{
    const rt_tri4 *blk = bvh->tris + rt_leaf_first(ref);
    uint32_t nb = rt_leaf_blocks(ref);
    const rt_hit_filter *f = bvh->filter;
    int improved = 0;
    for (; nb >= RT_W / 4; nb -= RT_W / 4, blk += RT_W / 4)
        improved |= TAG(rt_blocks_closest)(blk, w, wv, tmin, best, f);
#if RT_W > 4
    if (nb) {
        rt_wtray4 w4;
        rt_wtray4_from8(&w4, wv);
        improved |= rt_blocks_closest4(blk, w, &w4, tmin, best, f);
    }
#endif
    return improved;
}

/* 1 when leaf ref holds a triangle hit in [tmin, tmax]. */
W_INLINE int TAG(rt_leaf_any)(const rt_bvh *bvh, uint32_t ref, const rt_wtray *w,
                              const TAG(rt_wtray) *wv, float tmin, float tmax)
{
    const rt_tri4 *blk = bvh->tris + rt_leaf_first(ref);
    uint32_t nb = rt_leaf_blocks(ref);
    if (__builtin_expect(bvh->filter != NULL, 0)) {
        for (; nb >= RT_W / 4; nb -= RT_W / 4, blk += RT_W / 4)
            if (TAG(rt_blocks_any_filtered)(blk, w, wv, tmin, tmax, bvh->filter)) return 1;
#if RT_W > 4
        if (nb) {
            rt_wtray4 w4;
            rt_wtray4_from8(&w4, wv);
            return rt_blocks_any_filtered4(blk, w, &w4, tmin, tmax, bvh->filter);
        }
#endif
        return 0;
    }
    float t[RT_W];
    for (; nb >= RT_W / 4; nb -= RT_W / 4, blk += RT_W / 4)
        if (TAG(rt_tri_intersect)(w, wv, blk, tmin, tmax, t, NULL, NULL)) return 1;
#if RT_W > 4
    if (nb) {
        rt_wtray4 w4;
        rt_wtray4_from8(&w4, wv);
        return rt_tri_intersect4(w, &w4, blk, tmin, tmax, t, NULL, NULL) != 0;
    }
#endif
    return 0;
}
