/* gl_raster.h — what the llvmpipe comparisons (bench_rs_llvmpipe, bench_albedo_llvmpipe)
 * share to draw our scenes with OpenGL: a shader compiled or the program ended, and our
 * vertex shader's projection as an OpenGL matrix. Include after the GL headers, in the
 * part of a program built only when OSMesa is there. */
#ifndef BENCH_GL_RASTER_H
#define BENCH_GL_RASTER_H

#include "pipelines/kept_graph.h"
#include "pipelines/raster/raster.h"
#include "shaders/raster_shading.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The compiled shader; a compile error is printed and ends the program with fail_status. */
static GLuint gl_compile(GLenum kind, const char *src, int fail_status)
{
    GLuint s = glCreateShader(kind);
    glShaderSource(s, 1, &src, NULL);
    glCompileShader(s);
    GLint ok;
    glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[1024];
        glGetShaderInfoLog(s, sizeof log, NULL, log);
        fprintf(stderr, "%s\n", log);
        exit(fail_status);
    }
    return s;
}

/* The projection our vertex shader uses (sh_vs_vertices_of), as a column-major matrix. */
static void gl_projection(const sh_raster_env *e, float m[16])
{
    const sc_camera_frame *f = &e->frame;
    float n = e->near, fa = e->far, a = (fa + n) / (fa - n), b = -2.0f * fa * n / (fa - n);
    float eye_r = f->eye[0] * f->right[0] + f->eye[1] * f->right[1] + f->eye[2] * f->right[2];
    float eye_u = f->eye[0] * f->up[0] + f->eye[1] * f->up[1] + f->eye[2] * f->up[2];
    float eye_f = f->eye[0] * f->forward[0] + f->eye[1] * f->forward[1] + f->eye[2] * f->forward[2];
    memset(m, 0, 16 * sizeof(float));
    for (int i = 0; i < 3; i++) {
        m[4 * i + 0] = f->right[i] / f->half_w;
        m[4 * i + 1] = f->up[i] / f->half_h;
        m[4 * i + 2] = a * f->forward[i];
        m[4 * i + 3] = f->forward[i];
    }
    m[12] = -eye_r / f->half_w;
    m[13] = -eye_u / f->half_h;
    m[14] = -a * eye_f + b;
    m[15] = -eye_f;
}

/* One of our raster graph's frames, the graph kept from frame to frame (built in the
 * warm-up and run again after, as llvmpipe's context is made once): what
 * bench_pairs_run times against llvmpipe's. */
typedef struct bench_raster_frames {
    pl_kept_builtin *kept;
    const sc_scene *s;
    const sc_geometry *g;
    plr_config c;
    uint8_t *img;                         /* c.width x c.height RGBA8 */
} bench_raster_frames;

/* bench_pairs_run's frame: false, with the message printed, when it failed. */
static bool bench_raster_frame(void *arg)
{
    bench_raster_frames *o = arg;
    char err[SC_ERR_MAX];
    if (plr_render_kept(o->kept, o->s, o->g, &o->c, o->img, NULL, err)) return true;
    printf("# %s\n", err);
    return false;
}

#endif
