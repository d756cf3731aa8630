/* validate.c — the checks a scene passes before any renderer sees it, done once where
 * data enters: sc_load validates the loaded scene (object space: every mesh attribute,
 * material, light and the camera) and sc_flatten the world-space geometry the instance
 * transforms produce (a finite transform can still overflow a finite vertex).
 *
 * Invariants the renderers rely on after these checks: every float is finite;
 * coordinates (vertices, eye, target, lights) lie within +-SC_COORD_MAX, so differences
 * and squared lengths stay finite in float; indices are below their vertex count and
 * material indices below the material count; light colours and material factors lie in
 * the ranges below, so the ray tracer's fixed-point sums cannot overflow; the camera
 * has a view direction and an up vector not parallel to it. Denormal values are valid. */
#include "scenes/build.h"
#include "scenes/validate.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

/* The index of the first non-finite value among n, or n. */
static size_t first_nonfinite(const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i])) return i;
    return n;
}

/* The index of the first value outside +-limit (NaN included), or n. */
static size_t first_beyond(const float *v, size_t n, float limit)
{
    for (size_t i = 0; i < n; i++)
        if (!(fabsf(v[i]) <= limit)) return i;
    return n;
}

static size_t first_out_of_range(const float *v, size_t n) { return first_beyond(v, n, SC_COORD_MAX); }

static bool in_range(const float *v, int n, float lo, float hi)
{
    for (int i = 0; i < n; i++)
        if (!(v[i] >= lo && v[i] <= hi)) return false;
    return true;
}

const char *sc_camera_problem(const sc_camera *c)
{
    if (first_beyond(c->eye, 3, SC_VIEW_COORD_MAX) < 3 || first_beyond(c->target, 3, SC_VIEW_COORD_MAX) < 3)
        return "eye and target must be finite and within +-1e12 (SC_VIEW_COORD_MAX)";
    if (first_nonfinite(c->up, 3) < 3) return "up must be finite";
    if (!(c->fovy_deg > 0 && c->fovy_deg < 180)) return "fovy must be in (0, 180) degrees";
    double f[3], u[3], ff = 0, uu = 0;
    for (int i = 0; i < 3; i++) {
        f[i] = (double)c->target[i] - c->eye[i];
        u[i] = c->up[i];
        ff += f[i] * f[i];
        uu += u[i] * u[i];
    }
    if (ff == 0) return "eye and target are the same point";
    if (uu == 0) return "up is the zero vector";
    double x[3] = {f[1] * u[2] - f[2] * u[1], f[2] * u[0] - f[0] * u[2], f[0] * u[1] - f[1] * u[0]};
    /* sin^2 of the angle between view and up; below ~1e-12 the right vector is noise. */
    if ((x[0] * x[0] + x[1] * x[1] + x[2] * x[2]) / (ff * uu) < 1e-12)
        return "up is parallel to the view direction";
    return NULL;
}

static int mesh_problem(const sc_scene *s, const sc_mesh *m, const char *what, char err[SC_ERR_MAX])
{
    size_t nv = m->nvertices, k;
    if ((k = first_out_of_range(m->positions, 3 * nv)) < 3 * nv)
        snprintf(err, SC_ERR_MAX, "%s: mesh '%s' vertex %zu: coordinate %g is not finite or "
                 "beyond +-1e11 (SC_COORD_MAX)", what, m->name, k / 3 + 1, m->positions[k]);
    else if ((k = first_nonfinite(m->normals, 3 * nv)) < 3 * nv)
        snprintf(err, SC_ERR_MAX, "%s: mesh '%s' vertex %zu: normal is not finite", what, m->name, k / 3 + 1);
    else if (m->texcoords && (k = first_nonfinite(m->texcoords, 2 * nv)) < 2 * nv)
        snprintf(err, SC_ERR_MAX, "%s: mesh '%s' vertex %zu: texture coordinate is not finite",
                 what, m->name, k / 2 + 1);
    else if (m->texcoords1 && (k = first_nonfinite(m->texcoords1, 2 * nv)) < 2 * nv)
        snprintf(err, SC_ERR_MAX, "%s: mesh '%s' vertex %zu: texture coordinate (set 1) is not finite",
                 what, m->name, k / 2 + 1);
    else
        for (size_t t = 0; t < m->ntriangles; t++) {
            const uint32_t *i = m->indices + 3 * t;
            if (i[0] >= nv || i[1] >= nv || i[2] >= nv || m->materials[t] >= s->nmaterials) {
                snprintf(err, SC_ERR_MAX, "%s: mesh '%s' triangle %zu: vertex or material index "
                         "out of range", what, m->name, t + 1);
                return -1;
            }
        }
    return err[0] ? -1 : 0;
}

static const char *ref_problem(const sc_scene *s, const sc_texture_ref *r)
{
    if (r->texture < -1 || (r->texture >= 0 && (size_t)r->texture >= s->ntextures))
        return "a texture index out of range";
    if (r->uv_set < 0 || r->uv_set > 7) return "a texture coordinate set beyond 0..7";
    if ((unsigned)r->sampler.wrap_u > SC_WRAP_MIRROR || (unsigned)r->sampler.wrap_v > SC_WRAP_MIRROR ||
        (unsigned)r->sampler.filter > SC_FILTER_LINEAR_NO_MIPS)
        return "an unknown wrap or filter mode";
    float t[5] = {r->offset[0], r->offset[1], r->scale[0], r->scale[1], r->rotation};
    if (first_nonfinite(t, 5) < 5) return "a texture transform that is not finite";
    return NULL;
}

const char *sc_material_problem(const sc_scene *s, const sc_material *m)
{
    if (!(in_range(m->albedo, 3, 0, SC_FACTOR_MAX) && in_range(&m->reflectivity, 1, 0, 1) &&
          in_range(&m->specular, 1, 0, SC_FACTOR_MAX) && in_range(&m->specular_exponent, 1, 0, SC_EXPONENT_MAX)))
        return "albedo and specular must be in [0, 1e3] (SC_FACTOR_MAX), reflectivity in [0, 1], "
               "exponent in [0, 1e6] (SC_EXPONENT_MAX)";
    if (!in_range(&m->alpha, 1, 0, 1) || !in_range(&m->alpha_cutoff, 1, 0, 1))
        return "alpha and alpha_cutoff must be in [0, 1]";
    if (!in_range(&m->metallic, 1, 0, 1) || !in_range(&m->roughness, 1, 0, 1) ||
        !in_range(&m->occlusion_strength, 1, 0, 1))
        return "metallic, roughness and occlusion strength must be in [0, 1]";
    if (!in_range(m->emissive, 3, 0, SC_FACTOR_MAX)) return "emissive must be in [0, 1e3] (SC_FACTOR_MAX)";
    if (!in_range(&m->normal_scale, 1, -SC_FACTOR_MAX, SC_FACTOR_MAX))
        return "the normal scale must be in [-1e3, 1e3] (SC_FACTOR_MAX)";
    if ((unsigned)m->alpha_mode > SC_ALPHA_BLEND || (unsigned)m->model > SC_SHADING_METALLIC_ROUGHNESS)
        return "an unknown alpha mode or shading model";
    const sc_texture_ref *refs[] = {&m->albedo_map, &m->metallic_roughness_map, &m->emissive_map,
                                    &m->normal_map, &m->occlusion_map};
    for (size_t i = 0; i < sizeof refs / sizeof refs[0]; i++) {
        const char *why = ref_problem(s, refs[i]);
        if (why) return why;
    }
    return NULL;
}

const char *sc_light_problem(const sc_light *l)
{
    if (first_beyond(l->position, 3, SC_VIEW_COORD_MAX) < 3)
        return "position must be finite and within +-1e12 (SC_VIEW_COORD_MAX)";
    if (!in_range(l->color, 3, 0, SC_LIGHT_MAX)) return "color components must be in [0, 1e6] (SC_LIGHT_MAX)";
    return NULL;
}

int sc_validate(const sc_scene *s, const char *what, char err[SC_ERR_MAX])
{
    err[0] = 0;
    for (size_t i = 0; i < s->nmeshes; i++)
        if (mesh_problem(s, &s->meshes[i], what, err)) return -1;
    for (size_t i = 0; i < s->nmaterials; i++) {
        const char *why = sc_material_problem(s, &s->materials[i]);
        if (why) {
            snprintf(err, SC_ERR_MAX, "%s: material '%s': %s", what, s->materials[i].name, why);
            return -1;
        }
    }
    for (size_t i = 0; i < s->nlights; i++) {
        const char *why = sc_light_problem(&s->lights[i]);
        if (why) { snprintf(err, SC_ERR_MAX, "%s: light %zu: %s", what, i + 1, why); return -1; }
    }
    const char *why = sc_camera_problem(&s->camera);
    if (why) { snprintf(err, SC_ERR_MAX, "%s: camera: %s", what, why); return -1; }
    return 0;
}

size_t sc_first_bad_vertex(const sc_mesh *m, const float transform[16])
{
    for (size_t v = 0; v < m->nvertices; v++) {
        float p[3];
        sc_transform_point(transform, m->positions + 3 * v, p);
        if (first_out_of_range(p, 3) < 3) return v;
    }
    return m->nvertices;
}

int sc_validate_world(const float *positions, const float *normals, size_t nv, const char *what,
                      char err[SC_ERR_MAX])
{
    size_t k;
    if ((k = first_out_of_range(positions, 3 * nv)) < 3 * nv)
        snprintf(err, SC_ERR_MAX, "%s: vertex %zu: the transform takes a coordinate to %g "
                 "(not finite or beyond +-1e11, SC_COORD_MAX)", what, k / 3 + 1, positions[k]);
    else if ((k = first_nonfinite(normals, 3 * nv)) < 3 * nv)
        snprintf(err, SC_ERR_MAX, "%s: vertex %zu: the transform makes the normal not finite",
                 what, k / 3 + 1);
    else
        return 0;
    return -1;
}
