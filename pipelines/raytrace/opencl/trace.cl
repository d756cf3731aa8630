/* trace.cl — rt.intersect's, rt.shadow's, hybrid.trace's and hybrid.shadow's OpenCL kernels: closest hit and any hit over
 * the ray tracer's 4-wide BVH (raytracer/bvh.h: rt_node4 nodes and rt_tri4 triangle
 * blocks, uploaded unchanged), one work-item per ray.
 *
 * Same bits as the C kernels: the triangle test is raytracer/tri_intersect.c's
 * watertight test, operation for operation (divisions correctly rounded: the program is
 * built with -cl-fp32-correctly-rounded-divide-sqrt; no contraction into FMAs; the
 * double-precision retry of an edge function that is exactly zero). The closest hit is
 * the smallest (t, primitive id) over every triangle hit in [tmin, tmax], whatever order
 * the boxes are visited in, and the box tests only cull (their margin makes them
 * conservative), so the traversal order need not be the CPU's. */
#pragma OPENCL FP_CONTRACT OFF
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#define RT_LEAF_BIT 0x80000000u
#define RT_EMPTY_REF 0xffffffffu
#define RT_NO_HIT 0xffffffffu
#define STACK_MAX 256                 /* raytracer/bvh_traverse.h: RT_STACK4 */

typedef struct { float b[6][4]; uint child[4]; uint pad[4]; } node4;        /* rt_node4 */
typedef struct { float v[3][3][4]; uint prim[4]; } tri4;                   /* rt_tri4 */
typedef struct { float org[3]; float tmin; float dir[3]; float tmax; } ray_t;   /* rt_ray */
typedef struct { float t, u, v; uint prim; } hit_t;                        /* rt_hit */
/* pipelines/raytrace/packets.h: plrt_ray (80 bytes) and plrt_shadow (48 bytes) */
typedef struct { ray_t ray; float weight[3]; uint pixel, depth; hit_t hit; float cone[2]; uint layers; } rt_ray_elem;
typedef struct { ray_t ray; float color[3]; uint pixel; } shadow_elem;
/* pipelines/raytrace/trace_opencl.c: plrt_device_bvh_info */
typedef struct { uint root, nnodes, nblocks, pad; } bvh_info;

typedef struct { int kx, ky, kz; float sx, sy, sz; float org[3]; } wtray;

static int traceable(const ray_t *r)
{
    return isfinite(r->org[0]) && isfinite(r->org[1]) && isfinite(r->org[2]) &&
           isfinite(r->dir[0]) && isfinite(r->dir[1]) && isfinite(r->dir[2]) &&
           (r->dir[0] != 0.0f || r->dir[1] != 0.0f || r->dir[2] != 0.0f) && r->tmin <= r->tmax;
}

static wtray wtray_of(const ray_t *r)
{
    wtray w;
    const float ax = fabs(r->dir[0]), ay = fabs(r->dir[1]), az = fabs(r->dir[2]);
    int kz = 0;
    if (ay > ax) kz = 1;
    if (az > (kz == 0 ? ax : ay)) kz = 2;
    int kx = (kz + 1) % 3, ky = (kx + 1) % 3;
    if (r->dir[kz] < 0.0f) {
        int tmp = kx;
        kx = ky;
        ky = tmp;
    }
    w.kx = kx;
    w.ky = ky;
    w.kz = kz;
    w.sz = 1.0f / r->dir[kz];
    w.sx = r->dir[kx] * w.sz;
    w.sy = r->dir[ky] * w.sz;
    for (int i = 0; i < 3; i++) w.org[i] = r->org[i];
    return w;
}

static float edge_double(float px, float qy, float py, float qx)
{
    return (float)((double)px * (double)qy - (double)py * (double)qx);
}

/* raytracer/tri_intersect.c: rt_tri_intersect on lane k of block tri. */
static int tri_intersect(const wtray *w, global const tri4 *tri, int k, float tmin, float tmax,
                         float *t, float *u, float *v)
{
    const int kx = w->kx, ky = w->ky, kz = w->kz;
    const float akz = tri->v[0][kz][k] - w->org[kz], bkz = tri->v[1][kz][k] - w->org[kz],
                ckz = tri->v[2][kz][k] - w->org[kz];
    const float ax = (tri->v[0][kx][k] - w->org[kx]) - w->sx * akz;
    const float ay = (tri->v[0][ky][k] - w->org[ky]) - w->sy * akz;
    const float bx = (tri->v[1][kx][k] - w->org[kx]) - w->sx * bkz;
    const float by = (tri->v[1][ky][k] - w->org[ky]) - w->sy * bkz;
    const float cx = (tri->v[2][kx][k] - w->org[kx]) - w->sx * ckz;
    const float cy = (tri->v[2][ky][k] - w->org[ky]) - w->sy * ckz;
    float eu = cx * by - cy * bx;
    float ev = ax * cy - ay * cx;
    float ew = bx * ay - by * ax;
    if (eu == 0.0f || ev == 0.0f || ew == 0.0f) {
        eu = edge_double(cx, by, cy, bx);
        ev = edge_double(ax, cy, ay, cx);
        ew = edge_double(bx, ay, by, ax);
    }
    if ((eu < 0.0f || ev < 0.0f || ew < 0.0f) && (eu > 0.0f || ev > 0.0f || ew > 0.0f)) return 0;
    const float det = eu + ev + ew;
    if (!(det != 0.0f)) return 0;
    const float tt = eu * (w->sz * akz) + ev * (w->sz * bkz) + ew * (w->sz * ckz);
    const float td = tt / det;
    if (!(td >= tmin && td <= tmax)) return 0;
    *t = td;
    *u = ev / det;
    *v = ew / det;
    return 1;
}

/* raytracer/bvh_traverse.h: rt_slab_ray_of. */
typedef struct { float inv[3], oinv[3]; int near[3]; } slab;

static slab slab_of(const ray_t *r)
{
    slab s;
    for (int a = 0; a < 3; a++) {
        const float d = r->dir[a];
        s.inv[a] = 1.0f / (fabs(d) < 1e-18f ? copysign(1e-18f, d) : d);
        s.oinv[a] = r->org[a] * s.inv[a];
        s.near[a] = 2 * a + (s.inv[a] >= 0.0f ? 0 : 1);
    }
    return s;
}

static float max2(float a, float b) { return a > b ? a : b; }
static float min2(float a, float b) { return a < b ? a : b; }

/* Whether the ray enters child c of n within [tmin, tmax], and where. */
static int child_hit(global const node4 *n, int c, const slab *s, float tmin, float tmax, float *tnear)
{
    float tn = tmin, tf = tmax;
    for (int a = 0; a < 3; a++) {
        const float t0 = n->b[s->near[a]][c] * s->inv[a] - s->oinv[a];
        const float t1 = n->b[s->near[a] ^ 1][c] * s->inv[a] - s->oinv[a];
        tn = max2(tn, t0);
        tf = min2(tf, t1);
    }
    *tnear = tn;
    return tn <= tf;
}

typedef struct { uint ref; float dist; } entry;

/* Pushes the hit children of n farthest first, so the nearest pops next. */
static void push_children(global const node4 *n, const slab *s, float tmin, float tmax,
                          entry *stack, int *sp)
{
    entry hit[4];
    int k = 0;
    for (int c = 0; c < 4; c++) {
        float tn;
        if (n->child[c] == RT_EMPTY_REF || !child_hit(n, c, s, tmin, tmax, &tn)) continue;
        int j = k++;
        for (; j > 0 && hit[j - 1].dist < tn; j--) hit[j] = hit[j - 1];
        hit[j].ref = n->child[c];
        hit[j].dist = tn;
    }
    for (int i = 0; i < k && *sp < STACK_MAX; i++) stack[(*sp)++] = hit[i];
}

/* Closest hit (any = 0) or any hit (any = 1, returns 1 at the first). */
static int trace(global const node4 *nodes, global const tri4 *tris, uint root, const ray_t *r,
                 hit_t *best, int any)
{
    best->t = r->tmax;
    best->u = best->v = 0.0f;
    best->prim = RT_NO_HIT;
    if (!traceable(r) || root == RT_EMPTY_REF) return 0;
    const slab s = slab_of(r);
    const wtray w = wtray_of(r);
    entry stack[STACK_MAX];
    int sp = 0;
    stack[sp].ref = root;
    stack[sp++].dist = r->tmin;
    while (sp > 0) {
        const entry e = stack[--sp];
        if (e.dist > best->t) continue;
        if (!(e.ref & RT_LEAF_BIT)) {
            push_children(&nodes[e.ref], &s, r->tmin, best->t, stack, &sp);
            continue;
        }
        const uint first = (e.ref & ~RT_LEAF_BIT) >> 3, nb = (e.ref & 7u) + 1;
        for (uint b = 0; b < nb; b++) {
            global const tri4 *blk = &tris[first + b];
            for (int k = 0; k < 4; k++) {
                float t, u, v;
                if (!tri_intersect(&w, blk, k, r->tmin, any ? r->tmax : best->t, &t, &u, &v)) continue;
                if (any) return 1;
                const uint prim = blk->prim[k];
                if (t < best->t || (t == best->t && prim < best->prim)) {
                    best->t = t;
                    best->u = u;
                    best->v = v;
                    best->prim = prim;
                }
            }
        }
    }
    return best->prim != RT_NO_HIT;
}

/* rt.intersect: each ray's closest hit, written into its element (in place). */
kernel void rt_intersect(global rt_ray_elem *rays, uint n, global uchar *results,
                         global const node4 *nodes, global const tri4 *tris,
                         global const bvh_info *info)
{
    const size_t i = get_global_id(0);
    if (i >= n) return;
    const ray_t r = rays[i].ray;
    hit_t h;
    trace(nodes, tris, info->root, &r, &h, 0);
    rays[i].hit = h;
}

/* rt.shadow: 1 where the shadow ray is blocked. */
kernel void rt_occluded(global shadow_elem *rays, uint n, global uchar *occluded,
                        global const node4 *nodes, global const tri4 *tris,
                        global const bvh_info *info)
{
    const size_t i = get_global_id(0);
    if (i >= n) return;
    const ray_t r = rays[i].ray;
    hit_t h;
    occluded[i] = (uchar)trace(nodes, tris, info->root, &r, &h, 1);
}

/* hybrid.trace (pipelines/hybrid/packets.h: plh_ray, 80 bytes, its kind in the low two
 * bits of `bits`): a mirror or through ray's closest hit written into its element; a
 * behind ray (PLH_BEHIND) came with its hit and is left as it is. */
typedef struct { ray_t ray; float weight[3]; uint pixel; hit_t hit; float cone[2]; uint layer, bits; } hybrid_elem;
#define PLH_BEHIND 3u

kernel void hybrid_trace(global hybrid_elem *rays, uint n, global uchar *results,
                         global const node4 *nodes, global const tri4 *tris,
                         global const bvh_info *info)
{
    const size_t i = get_global_id(0);
    if (i >= n || (rays[i].bits & 3u) == PLH_BEHIND) return;
    const ray_t r = rays[i].ray;
    hit_t h;
    trace(nodes, tris, info->root, &r, &h, 0);
    rays[i].hit = h;
}

/* hybrid.shadow (pipelines/hybrid/packets.h: plh_shadow, 48 bytes): 1 where the shadow
 * ray is blocked. The word of a ray's tmin holds its layer: every shadow ray's interval
 * starts at 0 (PLH_SHADOW_TMIN). */
typedef struct { float org[3]; uint layer; float dir[3]; float tmax; float weight[3]; uint slot; } hybrid_shadow;

kernel void hybrid_occluded(global const hybrid_shadow *rays, uint n, global uchar *occluded,
                            global const node4 *nodes, global const tri4 *tris,
                            global const bvh_info *info)
{
    const size_t i = get_global_id(0);
    if (i >= n) return;
    const global hybrid_shadow *e = &rays[i];
    const ray_t r = {{e->org[0], e->org[1], e->org[2]}, 0.0f, {e->dir[0], e->dir[1], e->dir[2]}, e->tmax};
    hit_t h;
    occluded[i] = (uchar)trace(nodes, tris, info->root, &r, &h, 1);
}
