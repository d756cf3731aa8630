/* patterns.c — the showcase scene's procedural textures (see patterns.h). Colours are
 * linear RGB in [0,1], written as bytes; noise is value noise on a lattice that wraps
 * with the image, so every texture repeats without a seam. */
#include "scenes/patterns.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

static float clamp01(float x) { return x < 0 ? 0 : x > 1 ? 1 : x; }

static float mix(float a, float b, float t) { return a + (b - a) * t; }

/* A hash of (x, y, seed) in [0, 1). */
static float hash(int x, int y, int seed)
{
    uint32_t h = (uint32_t)x * 0x8da6b343u ^ (uint32_t)y * 0xd8163841u ^ (uint32_t)seed * 0xcb1ab31fu;
    h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
    return (float)(h >> 8) / 16777216.0f;
}

/* Smooth value noise at (x, y) on a lattice of period p cells in each direction. */
static float noise(float x, float y, int p, int seed)
{
    int x0 = (int)floorf(x), y0 = (int)floorf(y);
    float fx = x - (float)x0, fy = y - (float)y0;
    fx = fx * fx * (3 - 2 * fx);
    fy = fy * fy * (3 - 2 * fy);
    int xa = ((x0 % p) + p) % p, ya = ((y0 % p) + p) % p, xb = (xa + 1) % p, yb = (ya + 1) % p;
    return mix(mix(hash(xa, ya, seed), hash(xb, ya, seed), fx),
               mix(hash(xa, yb, seed), hash(xb, yb, seed), fx), fy);
}

/* Four octaves of noise over the unit square u, v in [0,1), base period p: about [0,1]. */
static float fbm(float u, float v, int p, int seed)
{
    float sum = 0, amp = 0.5f;
    for (int o = 0; o < 4; o++, p *= 2, amp *= 0.5f)
        sum += amp * noise(u * (float)p, v * (float)p, p, seed + o);
    return sum / 0.9375f;
}

static void put(unsigned char *px, int w, int x, int y, float r, float g, float b, float a)
{
    unsigned char *o = px + 4 * ((size_t)y * w + x);
    o[0] = (unsigned char)lroundf(255 * clamp01(r));
    o[1] = (unsigned char)lroundf(255 * clamp01(g));
    o[2] = (unsigned char)lroundf(255 * clamp01(b));
    o[3] = (unsigned char)lroundf(255 * clamp01(a));
}

static unsigned char *image(int w, int h) { return malloc((size_t)w * h * 4); }

/* The distance from t (in [0,1)) to the nearest multiple of 1/n, in periods of 1/n. */
static float to_line(float t, int n)
{
    float f = t * (float)n - floorf(t * (float)n);
    return fminf(f, 1 - f);
}

unsigned char *sc_pattern_floor_tiles(int w, int h)
{
    unsigned char *px = image(w, h);
    if (!px) return NULL;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float u = (x + 0.5f) / w, v = (y + 0.5f) / h;
            bool cream = (u < 0.5f) == (v < 0.5f);
            float veins = fbm(u, v, 4, cream ? 11 : 12), speck = hash(x, y, 13);
            float k = 0.82f + 0.3f * veins + 0.05f * speck;
            float c[3] = {cream ? 0.86f : 0.20f, cream ? 0.80f : 0.23f, cream ? 0.68f : 0.28f};
            if (to_line(u, 2) < 0.012f || to_line(v, 2) < 0.012f) c[0] = c[1] = c[2] = 0.32f, k = 1;
            put(px, w, x, y, c[0] * k, c[1] * k, c[2] * k, 1);
        }
    return px;
}

unsigned char *sc_pattern_bricks(int w, int h)
{
    unsigned char *px = image(w, h);
    if (!px) return NULL;
    const int courses = 4, per_course = 2;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float u = (x + 0.5f) / w, v = (y + 0.5f) / h;
            int course = (int)(v * courses);
            float ub = u * per_course + (course % 2 ? 0.5f : 0.0f);
            int brick = (int)floorf(ub) % per_course;
            float bx = ub - floorf(ub), by = v * courses - (float)course;
            bool mortar = fminf(bx, 1 - bx) < 0.025f || fminf(by, 1 - by) < 0.05f;
            float grain = fbm(u, v, 8, 21);
            if (mortar) {
                float k = 0.85f + 0.2f * grain;
                put(px, w, x, y, 0.72f * k, 0.70f * k, 0.64f * k, 1);
                continue;
            }
            float tone = hash(brick, course, 22), k = 0.8f + 0.35f * grain;
            put(px, w, x, y, (0.55f + 0.15f * tone) * k, (0.22f + 0.07f * tone) * k, (0.14f + 0.04f * tone) * k, 1);
        }
    return px;
}

/* Wood grain at (u, v) along u: rings bent by noise, between light and dark wood. */
static void wood(float u, float v, int seed, float c[3])
{
    float bend = fbm(u, v, 4, seed);
    float rings = 0.5f + 0.5f * sinf(2 * (float)M_PI * (v * 12 + bend * 3));
    float t = 0.55f * rings + 0.45f * fbm(u, v * 4, 8, seed + 7);
    c[0] = mix(0.62f, 0.36f, t); c[1] = mix(0.42f, 0.21f, t); c[2] = mix(0.22f, 0.09f, t);
}

unsigned char *sc_pattern_crate(int w, int h)
{
    unsigned char *px = image(w, h);
    if (!px) return NULL;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float u = (x + 0.5f) / w, v = (y + 0.5f) / h, c[3];
            bool frame = fminf(u, 1 - u) < 0.09f || fminf(v, 1 - v) < 0.09f;
            wood(frame ? v : u, frame ? u : v, frame ? 31 : 32, c);
            float k = frame ? 0.7f : 1.0f;
            if (!frame && to_line(v, 4) < 0.02f) k = 0.3f;                 /* plank joints */
            if (frame && (fminf(u, 1 - u) < 0.005f || fminf(v, 1 - v) < 0.005f)) k = 0.35f;
            put(px, w, x, y, c[0] * k, c[1] * k, c[2] * k, 1);
        }
    return px;
}

unsigned char *sc_pattern_fence(int w, int h)
{
    unsigned char *px = image(w, h);
    if (!px) return NULL;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float u = (x + 0.5f) / w, v = 1 - (y + 0.5f) / h;   /* v = 0 at the bottom */
            float pu = u * 2 - floorf(u * 2);                 /* across one of two pickets */
            float half = fabsf(pu - 0.5f);
            bool picket = half < 0.3f && v < 0.86f - 0.5f * half;    /* pointed top */
            bool rail = fabsf(v - 0.25f) < 0.05f || fabsf(v - 0.65f) < 0.05f;
            float grain = fbm(u, v, 8, 41), k = 0.82f + 0.25f * grain;
            if (picket && half > 0.27f) k *= 0.75f;             /* the picket's edges */
            float a = picket || rail ? 1.0f : 0.0f;
            put(px, w, x, y, 0.92f * k, 0.91f * k, 0.86f * k, a);
        }
    return px;
}

/* Leaf i of a card: centre (u, v), angle and length, from the hash. Leaves fill the
 * card's middle and lower part and point outward from its foot, as a plant's do. */
static void leaf_of(int i, float l[4])
{
    float r = 0.08f + 0.32f * hash(i, 1, 51), a = (float)M_PI * (0.1f + 0.8f * hash(i, 2, 51));
    l[0] = 0.5f + r * cosf(a) * 1.1f;
    l[1] = 0.62f - r * sinf(a) * 1.2f;
    l[2] = -a + 0.4f * (hash(i, 3, 51) - 0.5f);
    l[3] = 0.16f + 0.14f * hash(i, 4, 51);
}

unsigned char *sc_pattern_leaves(int w, int h)
{
    enum { LEAVES = 28 };
    float leaves[LEAVES][4];
    for (int i = 0; i < LEAVES; i++) leaf_of(i, leaves[i]);
    unsigned char *px = image(w, h);
    if (!px) return NULL;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float u = (x + 0.5f) / w, v = (y + 0.5f) / h;
            put(px, w, x, y, 0.16f, 0.30f, 0.10f, 0);
            for (int i = 0; i < LEAVES; i++) {        /* later leaves lie over earlier ones */
                const float *l = leaves[i];
                float du = u - l[0], dv = v - l[1], ca = cosf(l[2]), sa = sinf(l[2]);
                float s = (du * ca + dv * sa) / (0.5f * l[3]), t = (-du * sa + dv * ca) / (0.5f * l[3]);
                if (fabsf(s) >= 1) continue;
                float width = 0.42f * powf(1 - s * s, 0.7f);
                if (fabsf(t) >= width) continue;
                float tone = hash(i, 0, 52), vein = fabsf(t) < 0.03f ? 1.25f : 1.0f;
                float k = (0.75f + 0.3f * fabsf(t) / width) * vein;
                put(px, w, x, y, (0.18f + 0.10f * tone) * k, (0.42f + 0.15f * tone) * k, (0.12f + 0.04f * tone) * k, 1);
            }
        }
    return px;
}

unsigned char *sc_pattern_stained_glass(int w, int h)
{
    enum { N = 4 };                        /* a jittered N x N lattice of cell seeds */
    static const float palette[][3] = {{0.80f, 0.10f, 0.12f}, {0.12f, 0.25f, 0.85f}, {0.95f, 0.65f, 0.10f},
                                       {0.10f, 0.65f, 0.30f}, {0.55f, 0.15f, 0.70f}, {0.15f, 0.70f, 0.85f}};
    unsigned char *px = image(w, h);
    if (!px) return NULL;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float u = (x + 0.5f) / w * N, v = (y + 0.5f) / h * N, d1 = 1e9f, d2 = 1e9f;
            int cell = 0;
            for (int j = (int)v - 1; j <= (int)v + 1; j++)
                for (int i = (int)u - 1; i <= (int)u + 1; i++) {
                    int ci = (i + N) % N, cj = (j + N) % N;   /* wraps: the pattern tiles */
                    float sx = (float)i + 0.2f + 0.6f * hash(ci, cj, 61), sy = (float)j + 0.2f + 0.6f * hash(ci, cj, 62);
                    float d = hypotf(u - sx, v - sy);
                    if (d < d1) d2 = d1, d1 = d, cell = cj * N + ci;
                    else if (d < d2) d2 = d;
                }
            if (d2 - d1 < 0.06f) { put(px, w, x, y, 0.06f, 0.06f, 0.07f, 1); continue; }   /* lead */
            const float *c = palette[(int)(hash(cell, 0, 63) * 6) % 6];
            float k = 0.85f + 0.3f * fbm((x + 0.5f) / w, (y + 0.5f) / h, 8, 64);
            put(px, w, x, y, c[0] * k, c[1] * k, c[2] * k, 150.0f / 255);
        }
    return px;
}

unsigned char *sc_pattern_sky(int w, int h)
{
    unsigned char *px = image(w, h);
    if (!px) return NULL;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float t = powf(1 - (y + 0.5f) / h, 0.6f);          /* 0 at the horizon (bottom) */
            put(px, w, x, y, mix(0.95f, 0.32f, t), mix(0.78f, 0.50f, t), mix(0.60f, 0.85f, t), 1);
        }
    return px;
}
