/* primitives.c — the built-in scenes' shapes (see primitives.h). */
#include "scenes/primitives.h"

#include <math.h>

static void set_uv(sc_mesh_builder *b, uint32_t v, const float uv_scale[2], float u, float w)
{
    if (uv_scale) sc_mb_uv(b, v, u * uv_scale[0], w * uv_scale[1]);
}

void sc_prim_grid(sc_mesh_builder *b, const float o[3], const float a[3], const float c[3],
                  int nu, int nv, const float uv_scale[2], uint32_t material)
{
    uint32_t base = (uint32_t)b->nv;
    for (int j = 0; j <= nv; j++)
        for (int i = 0; i <= nu; i++) {
            float u = (float)i / nu, v = (float)j / nv;
            uint32_t k = sc_mb_vertex(b, o[0] + u * a[0] + v * c[0], o[1] + u * a[1] + v * c[1],
                                      o[2] + u * a[2] + v * c[2]);
            set_uv(b, k, uv_scale, u, v);
        }
    for (int j = 0; j < nv; j++)
        for (int i = 0; i < nu; i++) {
            uint32_t k = base + (uint32_t)(j * (nu + 1) + i);
            sc_mb_triangle(b, k, k + 1, k + (uint32_t)nu + 2, material);
            sc_mb_triangle(b, k, k + (uint32_t)nu + 2, k + (uint32_t)nu + 1, material);
        }
}

void sc_prim_box(sc_mesh_builder *b, const float lo[3], const float hi[3], int n,
                 const float uv_scale[2], uint32_t material)
{
    float dx = hi[0] - lo[0], dy = hi[1] - lo[1], dz = hi[2] - lo[2];
    const float *s = uv_scale;
    sc_prim_grid(b, (float[3]){lo[0], lo[1], hi[2]}, (float[3]){dx, 0, 0}, (float[3]){0, dy, 0}, n, n, s, material);
    sc_prim_grid(b, (float[3]){hi[0], lo[1], lo[2]}, (float[3]){-dx, 0, 0}, (float[3]){0, dy, 0}, n, n, s, material);
    sc_prim_grid(b, (float[3]){lo[0], lo[1], lo[2]}, (float[3]){0, 0, dz}, (float[3]){0, dy, 0}, n, n, s, material);
    sc_prim_grid(b, (float[3]){hi[0], lo[1], hi[2]}, (float[3]){0, 0, -dz}, (float[3]){0, dy, 0}, n, n, s, material);
    sc_prim_grid(b, (float[3]){lo[0], hi[1], hi[2]}, (float[3]){dx, 0, 0}, (float[3]){0, 0, -dz}, n, n, s, material);
    sc_prim_grid(b, (float[3]){lo[0], lo[1], lo[2]}, (float[3]){dx, 0, 0}, (float[3]){0, 0, dz}, n, n, s, material);
}

void sc_prim_sphere(sc_mesh_builder *b, const float c[3], float r, int slices, int stacks,
                    const float uv_scale[2], uint32_t material)
{
    uint32_t base = (uint32_t)b->nv;
    for (int j = 0; j <= stacks; j++) {
        float th = (float)M_PI * (float)j / stacks;
        for (int i = 0; i <= slices; i++) {
            float ph = 2.0f * (float)M_PI * (float)i / slices;
            float n[3] = {sinf(th) * cosf(ph), cosf(th), sinf(th) * sinf(ph)};
            uint32_t v = sc_mb_vertex(b, c[0] + r * n[0], c[1] + r * n[1], c[2] + r * n[2]);
            sc_mb_normal(b, v, n[0], n[1], n[2]);
            set_uv(b, v, uv_scale, (float)i / slices, 1.0f - (float)j / stacks);
        }
    }
    for (int j = 0; j < stacks; j++)
        for (int i = 0; i < slices; i++) {
            uint32_t k = base + (uint32_t)(j * (slices + 1) + i), w = (uint32_t)slices + 1;
            if (j > 0) sc_mb_triangle(b, k, k + 1, k + w, material);
            if (j + 1 < stacks) sc_mb_triangle(b, k + 1, k + w + 1, k + w, material);
        }
}

void sc_prim_cylinder(sc_mesh_builder *b, const float c[3], float r, float h, int slices, int rings,
                      const float uv_scale[2], uint32_t material)
{
    uint32_t base = (uint32_t)b->nv;
    for (int j = 0; j <= rings; j++)
        for (int i = 0; i <= slices; i++) {
            float ph = 2.0f * (float)M_PI * (float)i / slices;
            uint32_t v = sc_mb_vertex(b, c[0] + r * cosf(ph), c[1] + h * (float)j / rings, c[2] + r * sinf(ph));
            sc_mb_normal(b, v, cosf(ph), 0, sinf(ph));
            set_uv(b, v, uv_scale, (float)i / slices, (float)j / rings);
        }
    for (int j = 0; j < rings; j++)
        for (int i = 0; i < slices; i++) {
            uint32_t k = base + (uint32_t)(j * (slices + 1) + i), w = (uint32_t)slices + 1;
            sc_mb_triangle(b, k, k + w, k + 1, material);
            sc_mb_triangle(b, k + 1, k + w, k + w + 1, material);
        }
}

void sc_prim_fill_missing_normals(sc_mesh_builder *b)
{
    if (!b->nrm) return;
    for (size_t t = 0; t < b->nt; t++) {
        const uint32_t *i = b->idx + 3 * t;
        const float *p0 = b->pos + 3 * i[0], *p1 = b->pos + 3 * i[1], *p2 = b->pos + 3 * i[2];
        float e1[3] = {p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]};
        float e2[3] = {p2[0] - p0[0], p2[1] - p0[1], p2[2] - p0[2]};
        float n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
        float l = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        if (l == 0) continue;
        for (int k = 0; k < 3; k++) {
            float *d = b->nrm + 3 * i[k];
            if (d[0] == 0 && d[1] == 0 && d[2] == 0) { d[0] = n[0] / l; d[1] = n[1] / l; d[2] = n[2] / l; }
        }
    }
}
