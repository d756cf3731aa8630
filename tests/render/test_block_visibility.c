/* rasterizer/: the block walks of the visibility kernels against the fine path, one
 * pixel (or one sample) at a time, written here from the definitions:
 * - rs_depth_rect (1x; its AVX2 kernel walks rectangles at most four pixels wide in
 *   blocks of two rows of four) gives, for every covered pixel centre (the top-left rule
 *   on the biased edge values), rs_depth's depth under the draw-order test (nearer, or as
 *   near with a smaller id), the same won list in row-major order and count;
 * - rs_sample_walk_make's AVX2 walk is rs_sample_walk_of's, field for field;
 * - rs_sample_rect_take (4x, 8x; its AVX2 kernel walks rectangles at most
 *   RS_SAMPLE_BLOCK_WIDTH pixels wide as one block of int32 lanes, up to 16 steps a
 *   row) and rs_sample_block_take (the same block, its lanes made without a walk; where
 *   it refuses a rectangle it writes nothing) take every covered
 *   sample its depth (rs_sample_depth) beats, marks the equal ones as ties, and nothing
 *   else;
 * - rs_raster_rect_samples (4x, 8x; its AVX2 kernel walks rectangles at most
 *   RS_SAMPLE_BLOCK_WIDTH wide on int32 lanes) lists every pixel with a covered sample,
 *   in row-major order, with its centre's exact edge values and its covered samples, and
 *   no other pixel.
 * On random triangles: tiny (below a pixel), slivers, huge (far past the image: int64
 * fallbacks), degenerate (collinear: set up or refused, never a pixel), large enough
 * that their edge values over a rectangle lie on either side of the int32 limit (the
 * 1x kernel's choice between its int32 and int64 walks), and rectangles
 * cut at random tile and block borders, odd widths and heights, over held depths the
 * triangle beats, loses to and equals. A lane taken from the wrong row or pixel, a block
 * lane past the rectangle let in, or a covered lane dropped fails it. */
#include "raytracer/isa.h"
#include "rasterizer/samples.h"
#include "tests/check.h"

#include <float.h>
#include <stdint.h>
#include <string.h>

#define W 72
/* Fewer triangles in the sanitizer builds (5-30x slower), the same kinds. */
#define ROUNDS(n) (CHECK_SANITIZED ? (n) / 5 : (n))
#define SLACK RS_DEPTH_SLACK

static uint32_t rng_state = 4242;

static uint32_t next_u32(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

/* A subpixel coordinate near the centre c, within span. */
static int64_t near(int64_t c, int64_t span) { return c + (int64_t)(next_u32() % (uint32_t)span) - span / 2; }

/* A random triangle of kind 0 tiny, 1 small, 2 sliver, 3 huge, 4 degenerate (collinear),
 * 5 near the int32 limit (sides of a few hundred pixels: edge values around 2^31 over the
 * image), set up with reach r; false when it covers nothing. */
static bool random_triangle(int kind, const rs_reach *r, rs_setup *s)
{
    const int64_t cx = (int64_t)(next_u32() % W) * 256 + next_u32() % 256;
    const int64_t cy = (int64_t)(next_u32() % W) * 256 + next_u32() % 256;
    const int64_t spans[] = {200, 6 * 256, 256 /* then stretched */, (int64_t)1 << 26, 10 * 256, (int64_t)1 << 17};
    rs_screen_vertex v[3];
    for (int k = 0; k < 3; k++)
        v[k] = (rs_screen_vertex){near(cx, spans[kind]), near(cy, spans[kind]), (float)(next_u32() % 1000) / 1000.0f,
                                  1.0f, true};
    if (kind == 2) {                      /* a sliver: two vertices far apart, the third beside */
        const int64_t dx = near(0, 60 * 256), dy = near(0, 60 * 256);
        v[1].x = v[0].x + dx;
        v[1].y = v[0].y + dy;
        v[2].x = v[0].x + dx / 2 + near(0, 300);
        v[2].y = v[0].y + dy / 2 + near(0, 300);
    }
    if (kind == 4) {                      /* on one line */
        v[2].x = v[0].x + 2 * (v[1].x - v[0].x);
        v[2].y = v[0].y + 2 * (v[1].y - v[0].y);
    }
    const rs_screen_vertex *pv[3] = {&v[0], &v[1], &v[2]};
    return rs_setup_projected_reach(pv, W, W, r, s);
}

/* A rectangle inside the image: a random tile of edge 4 to 19 pixels around a point of
 * the triangle's bounds, so that it cuts the triangle at tile and block borders. */
static void random_rect(const rs_setup *s, int *x0, int *y0, int *x1, int *y1)
{
    const int tile = 4 + (int)(next_u32() % 32);   /* past RS_SAMPLE_BLOCK_WIDTH too */
    const int px = s->x0 + (int)(next_u32() % (uint32_t)(s->x1 - s->x0 + 1));
    const int py = s->y0 + (int)(next_u32() % (uint32_t)(s->y1 - s->y0 + 1));
    *x0 = px / tile * tile;
    *y0 = py / tile * tile;
    *x1 = *x0 + tile < W ? *x0 + tile : W;
    *y1 = *y0 + tile < W ? *y0 + tile : W;
}

/* Whether the pixel-or-sample point (X, Y) in subpixels is covered: every biased edge
 * value is not negative. */
static bool covered_at(const rs_setup *s, int64_t X, int64_t Y)
{
    for (int i = 0; i < 3; i++)
        if ((int64_t)s->a[i] * X + (int64_t)s->b[i] * Y + s->c[i] + s->bias[i] < 0) return false;
    return true;
}

/* ---- 1x: rs_depth_rect ---------------------------------------------------------------- */

/* Whether every edge value, biased or not, at the pixel centres of [x0,x1) x [y0,y1) fits
 * int32 (with one to spare), from the definition: edges are linear, so their extremes
 * are at the corners. */
static bool edges_fit_int32_at(const rs_setup *s, int x0, int y0, int x1, int y1)
{
    const int64_t limit = INT32_MAX - 1;
    for (int corner = 0; corner < 4; corner++) {
        const int64_t X = (int64_t)(corner & 1 ? x1 - 1 : x0) * 256 + 128;
        const int64_t Y = (int64_t)(corner & 2 ? y1 - 1 : y0) * 256 + 128;
        for (int i = 0; i < 3; i++) {
            const int64_t e = (int64_t)s->a[i] * X + (int64_t)s->b[i] * Y + s->c[i];
            if (e > limit || e < -limit || e + s->bias[i] < -limit) return false;
        }
    }
    return true;
}

typedef struct depth_buf {
    float z[W * W + SLACK];
    uint32_t vis[W * W + SLACK];
    int32_t won[W * W + RS_DEPTH_SLACK];
} depth_buf;

/* Held depths the triangle beats, loses to or equals at each pixel; ids around id. */
static void random_depths(const rs_setup *s, depth_buf *b, uint32_t id)
{
    rs_interp ip;
    rs_interp_of(s, &ip);
    for (int y = 0; y < W; y++)
        for (int x = 0; x < W; x++) {
            int64_t e0, e1;
            rs_edges_at(s, x, y, &e0, &e1);
            const uint32_t r = next_u32() % 5;
            b->z[y * W + x] = r == 0 ? FLT_MAX : r == 1 ? -1.0f : r == 2 ? 0.5f : rs_depth(&ip, e0, e1);
            b->vis[y * W + x] = r == 0 ? 0 : id + 1 + (next_u32() % 3) - 1;
        }
    for (int k = 0; k < SLACK; k++) b->z[W * W + k] = 0.25f, b->vis[W * W + k] = 7;
}

/* The fine path: every pixel centre of the rectangle in row-major order. */
static int depth_fine(const rs_setup *s, int x0, int y0, int x1, int y1, depth_buf *b, uint32_t id, int *nwon)
{
    rs_interp ip;
    rs_interp_of(s, &ip);
    int n = 0;
    *nwon = 0;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) {
            if (x < s->x0 || x > s->x1 || y < s->y0 || y > s->y1) continue;
            if (!covered_at(s, (int64_t)x * 256 + 128, (int64_t)y * 256 + 128)) continue;
            n++;
            int64_t e0, e1;
            rs_edges_at(s, x, y, &e0, &e1);
            const float d = rs_depth(&ip, e0, e1);
            float *z = &b->z[y * W + x];
            uint32_t *v = &b->vis[y * W + x];
            if (d < *z || (d == *z && (*v == 0 || id + 1 < *v))) {
                *z = d;
                *v = id + 1;
                b->won[(*nwon)++] = y * W + x;
            }
        }
    return n;
}

static void test_depth_blocks_match_fine_path(void)
{
    static depth_buf start, fine, block;
    int tests = 0, bad = 0, narrow = 0, won = 0, fit_int32 = 0, past_int32 = 0;
    for (int t = 0; t < ROUNDS(4000); t++) {
        rs_setup s;
        if (!random_triangle(t % 6, &rs_centre_reach, &s)) continue;
        int x0, y0, x1, y1;
        random_rect(&s, &x0, &y0, &x1, &y1);
        const uint32_t id = next_u32() % 50;
        random_depths(&s, &start, id);
        fine = start;
        int nwon_fine;
        const int nfine = depth_fine(&s, x0, y0, x1, y1, &fine, id, &nwon_fine);
        const int cx0 = x0 > s.x0 ? x0 : s.x0, cx1 = x1 < s.x1 + 1 ? x1 : s.x1 + 1;
        narrow += cx1 - cx0 <= 4 && nfine > 0;
        won += nwon_fine;
        if (t % 6 == 5 && nfine > 0) {
            const int cy0 = y0 > s.y0 ? y0 : s.y0, cy1 = y1 < s.y1 + 1 ? y1 : s.y1 + 1;
            const bool fits = edges_fit_int32_at(&s, cx0, cy0, cx1, cy1);
            fit_int32 += fits;
            past_int32 += !fits;
        }
        for (int avx2 = 0; avx2 <= (int)rt_isa_available(RT_ISA_AVX2); avx2++) {
            block = start;
            rs_depth_target tg = {block.z, block.vis, 0, 0, W, block.won, 0};
            const int n = rs_depth_rect(&s, x0, y0, x1, y1, &tg, id, avx2);
            tests++;
            if (n != nfine || tg.nwon != nwon_fine || memcmp(block.won, fine.won, (size_t)nwon_fine * sizeof *fine.won) ||
                memcmp(block.z, fine.z, sizeof fine.z) || memcmp(block.vis, fine.vis, sizeof fine.vis)) {
                if (bad++ < 3)
                    fprintf(stderr, "  1x triangle %d (kind %d, avx2 %d) over [%d,%d)x[%d,%d): %d covered (fine %d), %d won (fine %d)\n",
                            t, t % 6, avx2, x0, x1, y0, y1, n, nfine, tg.nwon, nwon_fine);
            }
        }
    }
    CHECK_MSG(bad == 0, "%d of %d walks differ from the fine path", bad, tests);
    CHECK_MSG(narrow > ROUNDS(500) && won > ROUNDS(1000), "too few narrow rectangles (%d) or pixels won (%d)", narrow, won);
    CHECK_MSG(fit_int32 > ROUNDS(50) && past_int32 > ROUNDS(50),
              "too few large triangles' rectangles within (%d) or past (%d) the int32 limit", fit_int32, past_int32);
}

/* ---- 4x and 8x: rs_sample_rect_take --------------------------------------------------- */

#define MS_MAX (W * W * RS_MAX_SAMPLES)

typedef struct sample_buf {
    float held[MS_MAX];
    uint32_t owner[MS_MAX];
    uint8_t tie[W * W];
} sample_buf;

/* Held depths per sample that the triangle beats, loses to or equals; owners random. */
static void random_held(const rs_setup *s, const rs_depth_plane *z, const rs_samples *p, sample_buf *b)
{
    rs_edge01 e;
    rs_edge01_of(s, &e);
    for (int y = 0; y < W; y++)
        for (int x = 0; x < W; x++)
            for (int k = 0; k < p->count; k++) {
                const uint32_t r = next_u32() % 4;
                const size_t i = ((size_t)y * W + (size_t)x) * (size_t)p->count + (size_t)k;
                b->held[i] = r == 0 ? FLT_MAX : r == 1 ? -1.0f : r == 2 ? rs_sample_depth(&e, z, p, k, x, y) : 0.5f;
                b->owner[i] = next_u32() % 5;
            }
}

/* The fine path: every sample of every pixel of the rectangle, from the definitions. */
static bool samples_fine(const rs_setup *s, const rs_depth_plane *z, const rs_samples *p, int x0, int y0,
                         int x1, int y1, sample_buf *b, uint32_t id)
{
    rs_edge01 e;
    rs_edge01_of(s, &e);
    bool ties = false;
    const int n = x1 - x0;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) {
            unsigned eq = 0;
            for (int k = 0; k < p->count; k++) {
                const int64_t X = (int64_t)x * 256 + 128 + p->dx[k] * 16, Y = (int64_t)y * 256 + 128 + p->dy[k] * 16;
                if (!covered_at(s, X, Y)) continue;
                const size_t i = ((size_t)y * W + (size_t)x) * (size_t)p->count + (size_t)k;
                const float d = rs_sample_depth(&e, z, p, k, x, y);
                if (d < b->held[i]) b->held[i] = d, b->owner[i] = id;
                else if (d == b->held[i]) eq |= 1u << k;
            }
            b->tie[(y - y0) * n + (x - x0)] = (uint8_t)eq;
            ties |= eq != 0;
        }
    return ties;
}

static int compare_sample_rects(int count, int *narrow, int *wide_blocks, int *direct)
{
    static sample_buf start, fine, block;
    const rs_samples *p = rs_sample_pattern(count);
    int bad = 0;
    for (int t = 0; t < ROUNDS(1500); t++) {
        rs_setup s;
        if (!random_triangle(t % 5, &p->reach, &s)) continue;
        int x0, y0, x1, y1;
        random_rect(&s, &x0, &y0, &x1, &y1);
        if (x0 < s.x0) x0 = s.x0;         /* the caller's rectangle: inside the bounds */
        if (y0 < s.y0) y0 = s.y0;
        if (x1 > s.x1 + 1) x1 = s.x1 + 1;
        if (y1 > s.y1 + 1) y1 = s.y1 + 1;
        if (x1 <= x0 || y1 <= y0) continue;
        rs_interp ip;
        rs_interp_of(&s, &ip);
        rs_depth_plane z;
        rs_depth_plane_of(&ip, &z);
        rs_sample_walk w, wv;
        rs_sample_walk_of(&s, p, &z, &w);
        rs_sample_walk_make(&s, p, &z, &wv, rt_isa_available(RT_ISA_AVX2));
        bool same_walk = wv.count == w.count && wv.int32_rows == w.int32_rows;
        for (int i = 0; i < 3; i++) {
            same_walk &= wv.lo[i] == w.lo[i] && wv.hi[i] == w.hi[i];
            for (int k = 0; k < count; k++) same_walk &= wv.cover[i][k] == w.cover[i][k];
        }
        same_walk &= memcmp(wv.dz, w.dz, (size_t)count * sizeof *w.dz) == 0;
        if (!same_walk && bad++ < 3) fprintf(stderr, "  %dx triangle %d: rs_sample_walk_make differs\n", count, t);
        random_held(&s, &z, p, &start);
        fine = start;
        const bool fine_ties = samples_fine(&s, &z, p, x0, y0, x1, y1, &fine, 9);
        *narrow += x1 - x0 <= 8;
        *wide_blocks += x1 - x0 > 8 && x1 - x0 <= RS_SAMPLE_BLOCK_WIDTH;
        const size_t first = ((size_t)y0 * W + (size_t)x0) * (size_t)count, stride = (size_t)W * (size_t)count;
        const size_t ntie = (size_t)(x1 - x0) * (size_t)(y1 - y0);
        for (int avx2 = 0; avx2 <= (int)rt_isa_available(RT_ISA_AVX2); avx2++) {
            block = start;
            const bool ties = rs_sample_rect_take(&s, &w, &z, x0, y0, x1, y1, &block.held[first], &block.owner[first],
                                                  stride, 9, block.tie, avx2);
            if (ties != fine_ties || memcmp(block.held, fine.held, sizeof fine.held) ||
                memcmp(block.owner, fine.owner, sizeof fine.owner) || memcmp(block.tie, fine.tie, ntie)) {
                if (bad++ < 3)
                    fprintf(stderr, "  %dx triangle %d (kind %d, avx2 %d) over [%d,%d)x[%d,%d) differs\n", count, t,
                            t % 5, avx2, x0, x1, y0, y1);
            }
            block = start;
            rs_block_taken taken;
            if (!rs_sample_block_take(&s, p, &z, x0, y0, x1, y1, &block.held[first], &block.owner[first], stride, 9,
                                      block.tie, avx2, &taken)) {
                if (memcmp(&block, &start, sizeof block) && bad++ < 3)
                    fprintf(stderr, "  %dx triangle %d: rs_sample_block_take refused but wrote\n", count, t);
                continue;
            }
            *direct += 1;
            const bool took = memcmp(block.owner, start.owner, sizeof start.owner) != 0;
            if (taken.ties != fine_ties || taken.took != took || memcmp(block.held, fine.held, sizeof fine.held) ||
                memcmp(block.owner, fine.owner, sizeof fine.owner) || memcmp(block.tie, fine.tie, ntie)) {
                if (bad++ < 3)
                    fprintf(stderr, "  %dx triangle %d (kind %d): rs_sample_block_take over [%d,%d)x[%d,%d) differs\n",
                            count, t, t % 5, x0, x1, y0, y1);
            }
        }
    }
    return bad;
}

static void test_sample_blocks_match_fine_path(void)
{
    for (int count = 4; count <= 8; count += 4) {
        int narrow = 0, wide_blocks = 0, direct = 0;
        CHECK_MSG(compare_sample_rects(count, &narrow, &wide_blocks, &direct) == 0,
                  "%dx: rectangles differ from the fine path", count);
        if (rt_isa_available(RT_ISA_AVX2))   /* the kernel without a walk takes most of them */
            CHECK_MSG(direct > ROUNDS(300), "%dx: rs_sample_block_take took only %d rectangles", count, direct);
        CHECK_MSG(narrow > ROUNDS(300), "%dx: only %d narrow rectangles", count, narrow);
        CHECK_MSG(wide_blocks > ROUNDS(100), "%dx: only %d blocks wider than 8 pixels", count, wide_blocks);
    }
}

/* ---- 4x, 8x: rs_raster_rect_samples ----------------------------------------------------- */

/* The covered pixels of [x0,x1) x [y0,y1) from the definition (every sample of every
 * pixel tested), in row-major order; how many. */
static int cover_fine(const rs_setup *s, const rs_samples *p, int x0, int y0, int x1, int y1, rs_cover *out,
                      uint8_t *mask)
{
    const int64_t one = 1 << RS_SUBPIXEL_BITS, half = one / 2, step = one / 16;
    int n = 0;
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++) {
            const int64_t X = (int64_t)x * one + half, Y = (int64_t)y * one + half;
            unsigned m = 0;
            for (int k = 0; k < p->count; k++)
                m |= (unsigned)covered_at(s, X + p->dx[k] * step, Y + p->dy[k] * step) << k;
            if (!m) continue;
            mask[n] = (uint8_t)m;
            out[n++] = (rs_cover){(uint16_t)x, (uint16_t)y, (int64_t)s->a[0] * X + (int64_t)s->b[0] * Y + s->c[0],
                                  (int64_t)s->a[1] * X + (int64_t)s->b[1] * Y + s->c[1]};
        }
    return n;
}

static void test_sample_cover_matches_fine_path(void)
{
    static rs_cover fine[W * W], got[W * W];
    static uint8_t fine_mask[W * W], got_mask[W * W];
    for (int count = 4; count <= 8; count += 4) {
        const rs_samples *p = rs_sample_pattern(count);
        int bad = 0, blocks = 0, covered = 0;
        for (int t = 0; t < ROUNDS(3000); t++) {
            rs_setup s;
            if (!random_triangle(t % 6, &p->reach, &s)) continue;
            int x0, y0, x1, y1;
            random_rect(&s, &x0, &y0, &x1, &y1);
            const int cx0 = x0 > s.x0 ? x0 : s.x0, cy0 = y0 > s.y0 ? y0 : s.y0;   /* as the kernel clamps */
            const int cx1 = x1 < s.x1 + 1 ? x1 : s.x1 + 1, cy1 = y1 < s.y1 + 1 ? y1 : s.y1 + 1;
            const int n = cx0 < cx1 && cy0 < cy1 ? cover_fine(&s, p, cx0, cy0, cx1, cy1, fine, fine_mask) : 0;
            blocks += cx1 - cx0 > 0 && cx1 - cx0 <= RS_SAMPLE_BLOCK_WIDTH && n > 0;
            covered += n;
            for (int avx2 = 0; avx2 <= (int)rt_isa_available(RT_ISA_AVX2); avx2++) {
                memset(got, 0xcd, sizeof got);
                const int m = rs_raster_rect_samples(&s, p, x0, y0, x1, y1, got, got_mask, avx2);
                bool same = m == n && !memcmp(got_mask, fine_mask, (size_t)n);
                for (int i = 0; same && i < n; i++)
                    same = got[i].x == fine[i].x && got[i].y == fine[i].y && got[i].e0 == fine[i].e0 &&
                           got[i].e1 == fine[i].e1;
                if (!same && bad++ < 3)
                    fprintf(stderr, "  %dx triangle %d (kind %d, avx2 %d) over [%d,%d)x[%d,%d): %d pixels, %d fine\n",
                            count, t, t % 6, avx2, x0, x1, y0, y1, m, n);
            }
        }
        CHECK_MSG(bad == 0, "%dx: rs_raster_rect_samples differs from the definition", count);
        CHECK_MSG(blocks > ROUNDS(500) && covered > ROUNDS(5000), "%dx: only %d block-wide rectangles, %d pixels",
                  count, blocks, covered);
    }
}

int main(void)
{
    RUN(test_depth_blocks_match_fine_path);
    RUN(test_sample_blocks_match_fine_path);
    RUN(test_sample_cover_matches_fine_path);
    return check_finish();
}
