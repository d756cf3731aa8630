/* Template of the watertight block test (tri_intersect.h) at width RT_W: RT_W / 4
 * consecutive rt_tri4 blocks against one ray, one lane per triangle. Included by
 * tri_intersect.h with RT_W = 4 (SSE2: rt_wtray4, rt_tri_intersect4) and RT_W = 8 (AVX2:
 * two blocks, rt_wtray8, rt_tri_intersect8); simd.h has the naming macros.
 *
 * Invariant: every lane performs the scalar test's operations (tri_intersect.c) in the
 * same order, with no fused multiply-add, and lanes whose edge functions are exactly
 * zero go through the scalar double-precision patch, so t, u and v are bit-identical at
 * every width and to brute force. */

#ifndef RT_W
/* Included on its own (the installed-header check): the owner instantiates it. */
#include "raytracer/tri_intersect.h"
#else

/* The ray's constants broadcast to RT_W lanes. */
typedef struct TAG(rt_wtray) {
    VF okx, oky, okz, sx, sy, sz;
    int kx, ky, kz;
} TAG(rt_wtray);

W_INLINE void TAG(rt_wtray_init)(TAG(rt_wtray) *wv, const rt_wtray *w)
{
    wv->okx = V(set1)(w->org[w->kx]);
    wv->oky = V(set1)(w->org[w->ky]);
    wv->okz = V(set1)(w->org[w->kz]);
    wv->sx = V(set1)(w->sx);
    wv->sy = V(set1)(w->sy);
    wv->sz = V(set1)(w->sz);
    wv->kx = w->kx;
    wv->ky = w->ky;
    wv->kz = w->kz;
}

/* Coordinate `axis` of vertex `vertex` of the RT_W triangles starting at block tri. */
W_INLINE VF TAG(rt_tri_load)(const rt_tri4 *tri, int vertex, int axis)
{
    return V(load_runs)(tri->v[vertex][axis], (int)(sizeof(rt_tri4) / sizeof(float)));
}

/* Vertex coordinate minus the origin, sheared so the ray is the +z axis. */
W_INLINE VF TAG(rt_shear)(VF p, VF org, VF s, VF pkz)
{
    return V(sub)(V(sub)(p, org), V(mul)(s, pkz));
}

/* Tests the ray against the triangles of blocks tri[0 .. RT_W/4). Returns a mask of the
 * lanes hit in [tmin, tmax] (bit 4b + k: lane k of block b) and stores their distances in
 * t[lane] and, unless bu is NULL (any-hit callers), their barycentrics in bu[lane],
 * bv[lane]. */
W_INLINE int TAG(rt_tri_intersect)(const rt_wtray *w, const TAG(rt_wtray) *wv,
                                   const rt_tri4 *tri, float tmin, float tmax, float t[RT_W],
                                   float *bu, float *bv)
{
    const int kx = wv->kx, ky = wv->ky, kz = wv->kz;
    const VF akz = V(sub)(TAG(rt_tri_load)(tri, 0, kz), wv->okz);
    const VF bkz = V(sub)(TAG(rt_tri_load)(tri, 1, kz), wv->okz);
    const VF ckz = V(sub)(TAG(rt_tri_load)(tri, 2, kz), wv->okz);
    const VF ax = TAG(rt_shear)(TAG(rt_tri_load)(tri, 0, kx), wv->okx, wv->sx, akz);
    const VF ay = TAG(rt_shear)(TAG(rt_tri_load)(tri, 0, ky), wv->oky, wv->sy, akz);
    const VF bx = TAG(rt_shear)(TAG(rt_tri_load)(tri, 1, kx), wv->okx, wv->sx, bkz);
    const VF by = TAG(rt_shear)(TAG(rt_tri_load)(tri, 1, ky), wv->oky, wv->sy, bkz);
    const VF cx = TAG(rt_shear)(TAG(rt_tri_load)(tri, 2, kx), wv->okx, wv->sx, ckz);
    const VF cy = TAG(rt_shear)(TAG(rt_tri_load)(tri, 2, ky), wv->oky, wv->sy, ckz);
    /* Scaled barycentrics: 2D edge functions of the sheared triangle. */
    const VF u = V(sub)(V(mul)(cx, by), V(mul)(cy, bx));
    const VF v = V(sub)(V(mul)(ax, cy), V(mul)(ay, cx));
    const VF w_ = V(sub)(V(mul)(bx, ay), V(mul)(by, ax));
    const VF zero = V(zero)();
    const VF neg = V(or)(V(or)(V(lt)(u, zero), V(lt)(v, zero)), V(lt)(w_, zero));
    const VF pos = V(or)(V(or)(V(gt)(u, zero), V(gt)(v, zero)), V(gt)(w_, zero));
    const VF det = V(add)(V(add)(u, v), w_);
    /* neq is true for NaN: such lanes fail the other compares anyway. */
    const VF inside = V(andnot)(V(and)(neg, pos), V(neq)(det, zero));
    const int zmask = (int)V(mask)(V(or)(V(or)(V(eq)(u, zero), V(eq)(v, zero)), V(eq)(w_, zero)));
    int mask = (int)V(mask)(inside);
    /* Most blocks end here: no lane inside its triangle, so skip the distance and its
     * division (skipped lanes would fail anyway, so results are unchanged). */
    if (!(mask | zmask)) return 0;
    if (mask) {
        const VF tt = V(add)(V(add)(V(mul)(u, V(mul)(wv->sz, akz)), V(mul)(v, V(mul)(wv->sz, bkz))),
                             V(mul)(w_, V(mul)(wv->sz, ckz)));
        const VF td = V(div)(tt, det);
        const VF inrange = V(and)(V(ge)(td, V(set1)(tmin)), V(le)(td, V(set1)(tmax)));
        mask = (int)V(mask)(V(and)(inside, inrange));
        V(storeu)(t, td);
        if (bu && mask) {   /* only for hits, so the two divisions are rare */
            V(storeu)(bu, V(div)(v, det));
            V(storeu)(bv, V(div)(w_, det));
        }
    }
    if (__builtin_expect(zmask != 0, 0)) {   /* the scalar patch, block by block */
        int patched = 0;
        for (int b = 0; b < RT_W / 4; b++)
            patched |= rt_tri4_patch_lanes(w, tri + b, zmask >> 4 * b & 15, mask >> 4 * b & 15,
                                           tmin, tmax, t + 4 * b, bu ? bu + 4 * b : NULL,
                                           bv ? bv + 4 * b : NULL) << 4 * b;
        mask = patched;
    }
    return mask;
}

#endif
