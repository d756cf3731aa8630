/* tri_each.c — see tri_each.h. Compiled -O3 (Makefile VECTOR_KERNELS) for the baseline
 * and, on x86-64, for AVX2 too; the choice is made once from the CPU, as rt_isa_best. */
#include "raytracer/tri_each.h"

#include "raytracer/isa.h"
#include "raytracer/tri_intersect.h"

#include <math.h>

/* Lane i's operands, gathered by a scalar pass: the ray's direction and origin along
 * the axes rt_wtray_init picks, and its triangle's vertices along them. */
typedef struct each_lanes {
    float dkx[RT_EACH_MAX], dky[RT_EACH_MAX], dkz[RT_EACH_MAX];
    float okx[RT_EACH_MAX], oky[RT_EACH_MAX], okz[RT_EACH_MAX];
    float v[3][3][RT_EACH_MAX];           /* vertex, axis (kx, ky, kz), lane */
} each_lanes;

/* rt_wtray_init's axes: kz the dominant one (ties to the lower), kx and ky the next
 * two in turn, swapped when d[kz] < 0. */
static inline void pick_axes(const float d[3], int k[3])
{
    static const int next[3][2][2] = {{{1, 2}, {2, 1}}, {{2, 0}, {0, 2}}, {{0, 1}, {1, 0}}};
    const float ax = fabsf(d[0]), ay = fabsf(d[1]), az = fabsf(d[2]);
    int kz = ay > ax;
    if (az > (kz == 0 ? ax : ay)) kz = 2;
    const int flip = d[kz] < 0.0f;
    k[0] = next[kz][flip][0];
    k[1] = next[kz][flip][1];
    k[2] = kz;
}

static void gather(const float *positions, const uint32_t *indices, const rt_each_rays *r,
                   each_lanes *l)
{
    for (int i = 0; i < r->n; i++) {
        const float d[3] = {r->dir[0][i], r->dir[1][i], r->dir[2][i]};
        int k[3];
        pick_axes(d, k);
        l->dkx[i] = d[k[0]];
        l->dky[i] = d[k[1]];
        l->dkz[i] = d[k[2]];
        l->okx[i] = r->org[k[0]];
        l->oky[i] = r->org[k[1]];
        l->okz[i] = r->org[k[2]];
        const uint32_t *tri = indices + 3 * (size_t)r->prim[i];
        for (int vtx = 0; vtx < 3; vtx++) {
            const float *p = positions + 3 * (size_t)tri[vtx];
            for (int a = 0; a < 3; a++) l->v[vtx][a][i] = p[k[a]];
        }
    }
}

/* rt_tri_intersect across the lanes; zero[i] marks a lane the scalar test must redo.
 * Bitwise, not short-circuit, logic: the loop has no branches, so it vectorizes. */
static inline __attribute__((always_inline)) void
test_lanes(const each_lanes *restrict l, const rt_each_rays *restrict r, float *restrict t,
           float *restrict u, float *restrict v, uint8_t *restrict hit, uint8_t *restrict zero)
{
    const float tmin = r->tmin, tmax = r->tmax;
    for (int i = 0; i < r->n; i++) {
        const float sz = 1.0f / l->dkz[i], sx = l->dkx[i] * sz, sy = l->dky[i] * sz;
        const float akz = l->v[0][2][i] - l->okz[i], bkz = l->v[1][2][i] - l->okz[i],
                    ckz = l->v[2][2][i] - l->okz[i];
        const float ax = (l->v[0][0][i] - l->okx[i]) - sx * akz;
        const float ay = (l->v[0][1][i] - l->oky[i]) - sy * akz;
        const float bx = (l->v[1][0][i] - l->okx[i]) - sx * bkz;
        const float by = (l->v[1][1][i] - l->oky[i]) - sy * bkz;
        const float cx = (l->v[2][0][i] - l->okx[i]) - sx * ckz;
        const float cy = (l->v[2][1][i] - l->oky[i]) - sy * ckz;
        const float eu = cx * by - cy * bx, ev = ax * cy - ay * cx, ew = bx * ay - by * ax;
        const int outside = ((eu < 0.0f) | (ev < 0.0f) | (ew < 0.0f)) &
                            ((eu > 0.0f) | (ev > 0.0f) | (ew > 0.0f));
        const float det = eu + ev + ew;
        const float tt = eu * (sz * akz) + ev * (sz * bkz) + ew * (sz * ckz);
        const float td = tt / det;
        zero[i] = (uint8_t)((eu == 0.0f) | (ev == 0.0f) | (ew == 0.0f));
        hit[i] = (uint8_t)(!outside & (det != 0.0f) & (td >= tmin) & (td <= tmax));
        t[i] = td;
        u[i] = ev / det;
        v[i] = ew / det;
    }
}

static void test_baseline(const each_lanes *l, const rt_each_rays *r, float *t, float *u, float *v,
                          uint8_t *hit, uint8_t *zero)
{
    test_lanes(l, r, t, u, v, hit, zero);
}

#if defined(__x86_64__)
__attribute__((target("avx2")))
static void test_avx2(const each_lanes *l, const rt_each_rays *r, float *t, float *u, float *v,
                      uint8_t *hit, uint8_t *zero)
{
    test_lanes(l, r, t, u, v, hit, zero);
}
#endif

typedef void (*test_fn)(const each_lanes *, const rt_each_rays *, float *, float *, float *,
                        uint8_t *, uint8_t *);

static test_fn test_for(rt_isa isa)
{
#if defined(__x86_64__)
    if (isa == RT_ISA_AVX2) return test_avx2;
#endif
    (void)isa;
    return test_baseline;
}

/* The lanes whose float edge values met an exact zero, by the scalar reference. */
static void redo_zero_lanes(const float *positions, const uint32_t *indices,
                            const rt_each_rays *r, const uint8_t *zero, float *t, float *u,
                            float *v, uint8_t *hit)
{
    for (int i = 0; i < r->n; i++) {
        if (!zero[i]) continue;
        const float d[3] = {r->dir[0][i], r->dir[1][i], r->dir[2][i]};
        const uint32_t *tri = indices + 3 * (size_t)r->prim[i];
        rt_wtray w;
        rt_wtray_init(&w, r->org, d);
        hit[i] = (uint8_t)rt_tri_intersect(&w, positions + 3 * (size_t)tri[0],
                                           positions + 3 * (size_t)tri[1],
                                           positions + 3 * (size_t)tri[2], r->tmin, r->tmax,
                                           &t[i], &u[i], &v[i]);
    }
}

void rt_intersect_each_isa(rt_isa isa, const float *positions, const uint32_t *indices,
                           const rt_each_rays *r, float *t, float *u, float *v, uint8_t *hit)
{
    each_lanes l;
    uint8_t zero[RT_EACH_MAX];
    gather(positions, indices, r, &l);
    test_for(isa)(&l, r, t, u, v, hit, zero);
    redo_zero_lanes(positions, indices, r, zero, t, u, v, hit);
}

void rt_intersect_each(const float *positions, const uint32_t *indices, const rt_each_rays *r,
                       float *t, float *u, float *v, uint8_t *hit)
{
    static int best = -1;                 /* racing first calls store the same value */
    int isa = __atomic_load_n(&best, __ATOMIC_RELAXED);
    if (isa < 0) __atomic_store_n(&best, isa = (int)rt_isa_best(), __ATOMIC_RELAXED);
    rt_intersect_each_isa((rt_isa)isa, positions, indices, r, t, u, v, hit);
}
