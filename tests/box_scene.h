/* box_scene.h — for render tests: the text of box.obj, a cube of edge 2 at the origin
 * turned 0.6 radians about y, with uv 0..1 and its own four vertices per face (the OBJ
 * reader keeps one uv per `v` line: no seams), flat normals, and a floor at y = -1 over
 * [-6, 6]^2 with uv 0..3; materials `box` and `floor` from box.mtl. box_scene_files
 * writes it with its textures and two scenes into a folder (the hybrid's tests). */
#ifndef TESTS_BOX_SCENE_H
#define TESTS_BOX_SCENE_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static inline void box_scene_obj(char *obj, size_t size)
{
    size_t n = (size_t)snprintf(obj, size, "mtllib box.mtl\nvt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nusemtl box\n");
    const float c = cosf(0.6f), s = sinf(0.6f);
    /* per face: its axis and sign; corners counter-clockwise seen from outside */
    for (int face = 0; face < 6; face++) {
        int axis = face / 2, a = (axis + 1) % 3, b = (axis + 2) % 3;
        float sign = face & 1 ? 1.0f : -1.0f, q[4][2] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}};
        for (int k = 0; k < 4; k++) {
            float p[3];
            p[axis] = sign;
            p[a] = q[k][0] * sign;
            p[b] = q[k][1];
            n += (size_t)snprintf(obj + n, size - n, "v %g %g %g\n", c * p[0] + s * p[2], p[1],
                                  -s * p[0] + c * p[2]);
        }
        float nv[3] = {0, 0, 0};
        nv[axis] = sign;
        n += (size_t)snprintf(obj + n, size - n, "vn %g %g %g\nf %d/1/%d %d/2/%d %d/3/%d %d/4/%d\n",
                              c * nv[0] + s * nv[2], nv[1], -s * nv[0] + c * nv[2], 4 * face + 1, face + 1,
                              4 * face + 2, face + 1, 4 * face + 3, face + 1, 4 * face + 4, face + 1);
    }
    snprintf(obj + n, size - n, "v -6 -1 -6\nv 6 -1 -6\nv 6 -1 6\nv -6 -1 6\n"
             "vt 0 3\nvt 3 3\nvt 3 0\nvt 0 0\nvn 0 1 0\nusemtl floor\nf 25/8/7 28/5/7 27/6/7 26/7/7\n");
}

static inline void box_scene_write(const char *dir, const char *name, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (f) fputs(text, f), fclose(f);
}

/* blocks.ppm: 16 x 16, 4x4-texel blocks of two colours and a gradient. */
static inline void box_scene_blocks(const char *dir)
{
    char path[256];
    snprintf(path, sizeof path, "%s/blocks.ppm", dir);
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fprintf(f, "P6\n16 16\n255\n");
    for (int y = 0; y < 16; y++)
        for (int x = 0; x < 16; x++) {
            int odd = (x / 4 + y / 4) & 1;
            unsigned char c[3] = {(unsigned char)(odd ? 220 : 40), (unsigned char)(60 + 150 * x / 16),
                                  (unsigned char)(odd ? 50 : 200)};
            fwrite(c, 1, 3, f);
        }
    fclose(f);
}

/* holes.tga: 8 x 8 RGBA, white, alpha 0 in alternate 2x2 cells (the cut-out's). */
static inline void box_scene_holes(const char *dir)
{
    char path[256];
    snprintf(path, sizeof path, "%s/holes.tga", dir);
    FILE *f = fopen(path, "wb");
    if (!f) return;
    const unsigned char header[18] = {0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 8, 0, 32, 8};
    fwrite(header, 1, sizeof header, f);
    for (int y = 0; y < 8; y++)
        for (int x = 0; x < 8; x++) {
            unsigned char bgra[4] = {230, 230, 230, (unsigned char)(((x / 2 + y / 2) & 1) ? 0 : 255)};
            fwrite(bgra, 1, 4, f);
        }
    fclose(f);
}

/* box.obj: a textured cube turned about y on a textured floor; quad.obj: a unit quad
 * facing +z with uv 0..1; scenes: box + the cut-out (opaque.scene), + a blended pane and
 * a blended mirror (all.scene). */
static inline void box_scene_files(const char *dir)
{
    box_scene_blocks(dir);
    box_scene_holes(dir);
    box_scene_write(dir, "box.mtl", "newmtl box\nKd 1 1 1\nmap_Kd blocks.ppm\n"
                          "newmtl floor\nKd 0.9 0.9 0.9\nmap_Kd blocks.ppm\n");
    char obj[8192];
    box_scene_obj(obj, sizeof obj);
    box_scene_write(dir, "box.obj", obj);
    box_scene_write(dir, "quad.obj", "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\n"
               "vn 0 0 1\nf 1/1/1 2/2/1 3/3/1 4/4/1\n");
    static const char common[] =
        "[camera]\neye = 0,2.5,8\ntarget = 0,0,0\nfovy = 45\n[light.key]\nposition = 5,8,6\n"
        "[mesh.box]\nfile = box.obj\n"
        "[material.cut]\nalbedo = 1,0.6,0.3\nalpha_mode = mask\ntexture = holes.tga\nfilter = nearest\n"
        "[mesh.cut]\nfile = quad.obj\nmaterial = cut\nscale = 1.6\ntranslate = 0.6,-0.6,2\n";
    char scene[4096];
    snprintf(scene, sizeof scene, "%s", common);
    box_scene_write(dir, "opaque.scene", scene);
    snprintf(scene, sizeof scene, "%s[material.glass]\nalbedo = 0.3,0.5,0.9\nalpha = 0.5\nalpha_mode = blend\n"
             "[mesh.glass]\nfile = quad.obj\nmaterial = glass\nscale = 2\ntranslate = -2.5,-0.5,2.5\n"
             "[material.mirror]\nalbedo = 0.9,0.9,0.9\nreflectivity = 0.8\nalpha = 0.6\nalpha_mode = blend\n"
             "[mesh.mirror]\nfile = quad.obj\nmaterial = mirror\nscale = 3\ntranslate = -1,-1,-2.5\n", common);
    box_scene_write(dir, "all.scene", scene);
}

#endif
