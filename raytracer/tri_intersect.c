/* Watertight ray/triangle intersection, scalar reference (see tri_intersect.h).
 *
 * Data flow: used directly by brute-force checks and, lane by lane, by the SIMD block test
 * when an edge function is exactly zero. The operation order here is the contract the
 * SIMD code in tri_intersect.h mirrors, so keep the two in step. */
#include "raytracer/tri_intersect.h"

#include <math.h>

void rt_wtray_init(rt_wtray *w, const float org[3], const float dir[3])
{
    const float ax = fabsf(dir[0]), ay = fabsf(dir[1]), az = fabsf(dir[2]);
    /* Dominant axis; ties go to the lower axis so the choice is reproducible. */
    int kz = 0;
    if (ay > ax) kz = 1;
    if (az > (kz == 0 ? ax : ay)) kz = 2;
    int kx = (kz + 1) % 3, ky = (kx + 1) % 3;
    if (dir[kz] < 0.0f) {   /* keep the winding, so the edge signs mean the same thing */
        int tmp = kx;
        kx = ky;
        ky = tmp;
    }
    w->kx = kx;
    w->ky = ky;
    w->kz = kz;
    w->sz = 1.0f / dir[kz];
    w->sx = dir[kx] * w->sz;
    w->sy = dir[ky] * w->sz;
    for (int i = 0; i < 3; i++) w->org[i] = org[i];
}

/* Edge function in double: products of floats are exact in double, so the sign of the
 * difference is exact. Used only when the float result is exactly zero. */
static float edge_double(float px, float qy, float py, float qx)
{
    return (float)((double)px * (double)qy - (double)py * (double)qx);
}

int rt_tri_intersect(const rt_wtray *w, const float a[3], const float b[3], const float c[3],
                     float tmin, float tmax, float *t, float *u, float *v)
{
    const int kx = w->kx, ky = w->ky, kz = w->kz;
    const float akz = a[kz] - w->org[kz], bkz = b[kz] - w->org[kz], ckz = c[kz] - w->org[kz];
    const float ax = (a[kx] - w->org[kx]) - w->sx * akz;
    const float ay = (a[ky] - w->org[ky]) - w->sy * akz;
    const float bx = (b[kx] - w->org[kx]) - w->sx * bkz;
    const float by = (b[ky] - w->org[ky]) - w->sy * bkz;
    const float cx = (c[kx] - w->org[kx]) - w->sx * ckz;
    const float cy = (c[ky] - w->org[ky]) - w->sy * ckz;
    float eu = cx * by - cy * bx;
    float ev = ax * cy - ay * cx;
    float ew = bx * ay - by * ax;
    if (eu == 0.0f || ev == 0.0f || ew == 0.0f) {
        eu = edge_double(cx, by, cy, bx);
        ev = edge_double(ax, cy, ay, cx);
        ew = edge_double(bx, ay, by, ax);
    }
    /* Inside when all three edge functions agree in sign (either face). */
    if ((eu < 0.0f || ev < 0.0f || ew < 0.0f) && (eu > 0.0f || ev > 0.0f || ew > 0.0f))
        return 0;
    const float det = eu + ev + ew;
    if (!(det != 0.0f)) return 0;   /* parallel ray or degenerate triangle */
    const float tt = eu * (w->sz * akz) + ev * (w->sz * bkz) + ew * (w->sz * ckz);
    const float td = tt / det;
    if (!(td >= tmin && td <= tmax)) return 0;
    *t = td;
    *u = ev / det;
    *v = ew / det;
    return 1;
}

int rt_tri4_lane_intersect(const rt_wtray *w, const rt_tri4 *tri, int k, float tmin,
                           float tmax, float *t, float *u, float *v)
{
    float p[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) p[i][j] = tri->v[i][j][k];
    return rt_tri_intersect(w, p[0], p[1], p[2], tmin, tmax, t, u, v);
}

int rt_tri4_patch_lanes(const rt_wtray *w, const rt_tri4 *tri, int zmask, int mask,
                        float tmin, float tmax, float t[4], float *bu, float *bv)
{
    for (int k = 0; k < 4; k++) {
        if (!(zmask >> k & 1)) continue;
        float tk, u, v;
        mask &= ~(1 << k);
        if (rt_tri4_lane_intersect(w, tri, k, tmin, tmax, &tk, &u, &v)) {
            mask |= 1 << k;
            t[k] = tk;
            if (bu) {
                bu[k] = u;
                bv[k] = v;
            }
        }
    }
    return mask;
}
