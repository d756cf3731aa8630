/* box_scene.h — for render tests: the text of box.obj, a cube of edge 2 at the origin
 * turned 0.6 radians about y, with uv 0..1 and its own four vertices per face (the OBJ
 * reader keeps one uv per `v` line: no seams), flat normals, and a floor at y = -1 over
 * [-6, 6]^2 with uv 0..3; materials `box` and `floor` from box.mtl. */
#ifndef TESTS_BOX_SCENE_H
#define TESTS_BOX_SCENE_H

#include <math.h>
#include <stdio.h>

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

#endif
