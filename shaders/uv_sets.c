/* uv_sets.c — a triangle's texture coordinates in a set (see uv_sets.h). */
#include "shaders/uv_sets.h"

void sh_triangle_uvs(const sc_geometry *g, const float *tc, uint32_t prim, float uv[3][2])
{
    const uint32_t *ix = g->indices + 3 * (size_t)prim;
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 2; i++) uv[k][i] = tc ? tc[2 * (size_t)ix[k] + i] : 0.0f;
}

void sh_set1_at(const sc_geometry *g, uint32_t prim, const float p[3], float uv[2])
{
    const uint32_t *ix = g->indices + 3 * (size_t)prim;
    const float *c[3], *t[3];
    for (int k = 0; k < 3; k++) {
        c[k] = g->positions + 3 * (size_t)ix[k];
        t[k] = g->texcoords1 + 2 * (size_t)ix[k];
        if (c[k][0] == p[0] && c[k][1] == p[1] && c[k][2] == p[2]) {
            uv[0] = t[k][0], uv[1] = t[k][1];
            return;
        }
    }
    /* p = c0 + b1 e1 + b2 e2, solved in the triangle's plane (normal equations) */
    double e1[3], e2[3], d[3], d11 = 0, d12 = 0, d22 = 0, dp1 = 0, dp2 = 0;
    for (int i = 0; i < 3; i++) {
        e1[i] = (double)c[1][i] - c[0][i], e2[i] = (double)c[2][i] - c[0][i], d[i] = (double)p[i] - c[0][i];
        d11 += e1[i] * e1[i], d12 += e1[i] * e2[i], d22 += e2[i] * e2[i];
        dp1 += d[i] * e1[i], dp2 += d[i] * e2[i];
    }
    double det = d11 * d22 - d12 * d12;
    double b1 = det != 0 ? (d22 * dp1 - d12 * dp2) / det : 0, b2 = det != 0 ? (d11 * dp2 - d12 * dp1) / det : 0;
    for (int i = 0; i < 2; i++) uv[i] = (float)((1 - b1 - b2) * t[0][i] + b1 * t[1][i] + b2 * t[2][i]);
}
