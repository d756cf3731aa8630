/* packet_checks.c — what a raster stage reads of a packet that another stage wrote is in
 * bounds before it indexes anything with it. The stage before may be a user's plugin
 * (inserted with `before =`, or replacing a built-in), so counts, sequence numbers,
 * triangle indices and ids are data, not invariants: one out of range fails the run with
 * the reading stage named and what was wrong (gr_assert_at), instead of a read or write
 * outside an array. Coordinates are checked where they index (pixels.c: the OM's tile). */
#include "pipelines/raster/internal.h"

#include <stddef.h>
#include <stdio.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static bool refuse(gr_ctx *c, const char *why, const char *file, int line)
{
    gr_assert_at(c, false, why, file, line);
    return false;
}

bool plr_check_batch(gr_ctx *c, const plr_state *s, const ia_pkt *p, uint32_t room)
{
    const uint64_t tris = s->geo->ntriangles;
    if (p->count <= room && (uint64_t)p->first + p->count <= tris) return true;
    char why[160];
    snprintf(why, sizeof why, "batch %u of triangles %u..+%u: the scene has %llu triangles, the "
             "output packet room for %u", p->seq, p->first, p->count, (unsigned long long)tris, room);
    return refuse(c, why, __FILE__, __LINE__);
}

/* Whether the coordinate differences a[k], b[k] all lie in [-reach, reach]. With SSE2,
 * the four int32s from a[0] and from b[0] tested side by side: lane k (k < 3) holds
 * a[k] and b[k]; lane 3 (b[0] and the int after b[2]) is not looked at. */
static inline bool differences_ok(const rs_setup *su, uint32_t reach)
{
#if defined(__SSE2__)
    _Static_assert(offsetof(rs_setup, b) == offsetof(rs_setup, a) + 3 * sizeof(int32_t), "a, b adjacent");
    const __m128i hi = _mm_set1_epi32((int32_t)reach), lo = _mm_set1_epi32(-(int32_t)reach);
    const __m128i ab = _mm_loadu_si128((const __m128i *)su->a), b = _mm_loadu_si128((const __m128i *)su->b);
    const __m128i out = _mm_or_si128(_mm_or_si128(_mm_cmpgt_epi32(ab, hi), _mm_cmpgt_epi32(lo, ab)),
                                     _mm_or_si128(_mm_cmpgt_epi32(b, hi), _mm_cmpgt_epi32(lo, b)));
    return (_mm_movemask_ps(_mm_castsi128_ps(out)) & 0x7) == 0;
#else
    bool ok = true;
    for (int k = 0; k < 3; k++)
        ok &= ((uint32_t)su->a[k] + reach <= 2 * reach) & ((uint32_t)su->b[k] + reach <= 2 * reach);
    return ok;
#endif
}

/* A set-up triangle keeps what setup promises (rasterizer/raster.h): its primitive id
 * names a scene triangle, its pixel bounds lie in the image, its area is positive and
 * its coordinate differences are below 2^29, so that edge values fit their int64s. */
static inline bool prim_ok(const plr_state *s, const plr_prim *p)
{
    /* Without branches, one compare a condition: the VS checks every triangle. In
     * unsigned arithmetic 0 <= x0 <= x1 < width is x0 <= x1 and x1 < width (a negative x0
     * is above any x1), and -2^29 < d < 2^29 is d + (2^29 - 1) <= 2 (2^29 - 1). */
    const rs_setup *su = &p->su;
    const uint32_t reach = (1u << 29) - 1;
    bool ok = (p->tri.prim < s->geo->ntriangles) & (su->area > 0) &
              ((uint32_t)su->x0 <= (uint32_t)su->x1) & ((uint32_t)su->x1 < (uint32_t)s->width) &
              ((uint32_t)su->y0 <= (uint32_t)su->y1) & ((uint32_t)su->y1 < (uint32_t)s->height);
    return ok & differences_ok(su, reach);
}

bool plr_prim_ok(const plr_state *s, const plr_prim *p) { return prim_ok(s, p); }

static inline bool rec_ok(const plr_state *s, const prim_rec *r)
{
    return (r->cut == 1) | ((r->cut == 0) & prim_ok(s, &r->set));   /* a cut one's set is read, not counted */
}

/* The checks of a packet's records run as one pass without a branch per record (every
 * triangle is checked on its way, so the pass is on the frame's path); only a packet
 * that fails is searched for the record to name. */
bool plr_check_prims(gr_ctx *c, const plr_state *s, const prim_pkt *p, size_t bytes)
{
    char why[160] = "";
    const size_t room = bytes > offsetof(prim_pkt, rec) ? (bytes - offsetof(prim_pkt, rec)) / sizeof(prim_rec) : 0;
    if (p->count > room) {
        snprintf(why, sizeof why, "primitive packet %u holds %u records (room for %zu)", p->seq, p->count,
                 room);
        return refuse(c, why, __FILE__, __LINE__);
    }
    bool ok = true;
    for (uint32_t i = 0; i < p->count; i++) ok &= rec_ok(s, &p->rec[i]);
    if (ok) return true;
    uint32_t i = 0;
    while (rec_ok(s, &p->rec[i])) i++;
    snprintf(why, sizeof why, "primitive packet %u, record %u: cut flag %u, or a set-up triangle "
             "outside the scene or the image, or not set up", p->seq, i, p->rec[i].cut);
    return refuse(c, why, __FILE__, __LINE__);
}

bool plr_check_binned(gr_ctx *c, const plr_state *s, const binned_pkt *p)
{
    char why[160] = "";
    if (p->count > BINNED_PER_PACKET) {
        snprintf(why, sizeof why, "a binned packet holds %u triangles (at most %d)", p->count,
                 BINNED_PER_PACKET);
        return refuse(c, why, __FILE__, __LINE__);
    }
    bool ok = true;                       /* as plr_check_prims: one pass, searched on failure */
    for (uint32_t i = 0; i < p->count; i++) ok &= prim_ok(s, &p->t[i].prim);
    if (ok) return true;
    uint32_t i = 0;
    while (prim_ok(s, &p->t[i].prim)) i++;
    snprintf(why, sizeof why, "binned triangle %u (primitive %u): outside the scene or the image, "
             "or not set up", i, p->t[i].prim.tri.prim);
    return refuse(c, why, __FILE__, __LINE__);
}

bool plr_check_frags(gr_ctx *c, const plr_state *s, const frag_pkt *p)
{
    char why[200] = "";
    if (p->count > FRAGS_PER_PACKET || p->ntris > TRIS_PER_PACKET)
        snprintf(why, sizeof why, "a fragment packet holds %u fragments of %u triangles (at most %d of "
                 "%d)", p->count, p->ntris, FRAGS_PER_PACKET, TRIS_PER_PACKET);
    for (uint32_t t = 0; !why[0] && t < p->ntris; t++)
        if (p->tris[t].prim >= s->geo->ntriangles)
            snprintf(why, sizeof why, "fragment packet triangle %u: primitive %u of %zu", t, p->tris[t].prim,
                     s->geo->ntriangles);
    for (uint32_t i = 0; !why[0] && i < p->count; i++)
        if (p->tri[i] >= p->ntris || p->x[i] >= s->width || p->y[i] >= s->height)
            snprintf(why, sizeof why, "fragment %u at (%u, %u) of triangle %u: outside the %dx%d image or "
                     "the packet's %u triangles", i, p->x[i], p->y[i], p->tri[i], s->width, s->height,
                     p->ntris);
    return !why[0] || refuse(c, why, __FILE__, __LINE__);
}
