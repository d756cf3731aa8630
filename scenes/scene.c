/* scene.c — scene lifetime, sc_load's dispatch (built-in name, .scene file or mesh
 * file), flattening instances to world space in primitive-id order, and the report. */
#include "scenes/builtin.h"
#include "scenes/build.h"
#include "scenes/loaders.h"
#include "scenes/name_index.h"
#include "scenes/validate.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void sc_free(sc_scene *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->nmeshes; i++) {
        sc_mesh *m = &s->meshes[i];
        free(m->positions); free(m->normals); free(m->texcoords); free(m->texcoords1); free(m->indices); free(m->materials);
    }
    for (size_t i = 0; i < s->ntextures; i++) sc_texture_free(&s->textures[i]);
    if (s->material_names) sc_name_index_free(s->material_names);
    free(s->material_names);
    free(s->warnings);
    free(s->meshes); free(s->materials); free(s->textures); free(s->instances); free(s->lights);
    free(s);
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcasecmp(s + n - k, suffix);
}

/* Scenes must be usable as loaded: at least one triangle, and what sc_validate checks. */
static int check_scene(const char *what, sc_scene *s, char err[SC_ERR_MAX])
{
    size_t tris = 0;
    for (size_t k = 0; k < s->ninstances; k++) tris += s->meshes[s->instances[k].mesh].ntriangles;
    if (tris == 0) {
        snprintf(err, SC_ERR_MAX, "%s: the scene has no triangles", what);
        return -1;
    }
    return sc_validate(s, what, err);
}

sc_load_opts sc_load_opts_default(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t phys = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : (size_t)4 << 30;
    return (sc_load_opts){.max_memory = phys / 2, .import_seconds = 60,
                          .max_texture_pixels = (size_t)8192 * 8192};
}

int sc_load(const char *scene, sc_scene **out, char err[SC_ERR_MAX])
{
    const sc_load_opts o = sc_load_opts_default();
    return sc_load_with(scene, &o, out, err);
}

int sc_scene_findable(const char *scene, char err[SC_ERR_MAX])
{
    if (sc_builtin_known(scene) || access(scene, F_OK) == 0) return 0;
    if (strchr(scene, '/') || strchr(scene, '.'))     /* a path: as the loaders say it */
        snprintf(err, SC_ERR_MAX, "%.400s: cannot open: %s", scene, strerror(errno));
    else
        snprintf(err, SC_ERR_MAX, "'%.400s': no built-in scene of that name (" SC_BUILTIN_NAMES
                 ") and no such file", scene);
    return -1;
}

int sc_load_with(const char *scene, const sc_load_opts *o, sc_scene **out, char err[SC_ERR_MAX])
{
    err[0] = 0;
    *out = NULL;
    if (!scene || !*scene) { snprintf(err, SC_ERR_MAX, "no scene given"); return -1; }
    sc_scene *s = sc_builtin(scene, err);
    if (!s && err[0]) return -1;
    if (!s && sc_scene_findable(scene, err)) return -1;
    if (!s) {
        if (has_suffix(scene, ".scene")) s = sc_load_scene_file(scene, o, err);
        else s = sc_load_mesh_file(scene, o, err);
    }
    if (!s) return -1;
    if (check_scene(scene, s, err) != 0) { sc_free(s); return -1; }
    *out = s;
    return 0;
}

/* Normals go through the inverse transpose of the upper 3x3 (cofactor matrix: the
 * determinant's scale does not matter once renormalised). Computed in double and scaled
 * so its largest entry is 1: a scale of 1e20 or 1e-20 would otherwise overflow or flush
 * the float cofactors and turn finite normals into NaN or zero. */
static void normal_matrix(const float m[16], float n[9])
{
    double a = m[0], b = m[4], c = m[8], d = m[1], e = m[5], f = m[9], g = m[2], h = m[6], i = m[10];
    double cof[9] = {e * i - f * h, -(d * i - f * g), d * h - e * g,
                     -(b * i - c * h), a * i - c * g, -(a * h - b * g),
                     b * f - c * e, -(a * f - c * d), a * e - b * d};
    double big = 0;
    for (int k = 0; k < 9; k++) big = fmax(big, fabs(cof[k]));
    for (int k = 0; k < 9; k++) n[k] = big > 0 ? (float)(cof[k] / big) : 0.0f;   /* row r maps component r */
}

static void xform_normal(const float n9[9], const float v[3], float o[3])
{
    for (int r = 0; r < 3; r++) o[r] = n9[3 * r] * v[0] + n9[3 * r + 1] * v[1] + n9[3 * r + 2] * v[2];
    float l = sqrtf(o[0] * o[0] + o[1] * o[1] + o[2] * o[2]);
    if (l > 0) { o[0] /= l; o[1] /= l; o[2] /= l; }
}

static void flatten_instance(const sc_scene *s, const sc_instance *in, sc_geometry *g,
                             size_t v0, size_t t0)
{
    const sc_mesh *m = &s->meshes[in->mesh];
    float n9[9];
    normal_matrix(in->transform, n9);
    for (size_t v = 0; v < m->nvertices; v++) {
        float *p = g->positions + 3 * (v0 + v);
        sc_transform_point(in->transform, m->positions + 3 * v, p);
        xform_normal(n9, m->normals + 3 * v, g->normals + 3 * (v0 + v));
        if (m->texcoords) memcpy(g->texcoords + 2 * (v0 + v), m->texcoords + 2 * v, 2 * sizeof(float));
        if (g->texcoords1) memcpy(g->texcoords1 + 2 * (v0 + v), m->texcoords1 ? m->texcoords1 + 2 * v
                                                                  : g->texcoords + 2 * (v0 + v), 2 * sizeof(float));
        for (int i = 0; i < 3; i++) {
            if (p[i] < g->bbox_min[i]) g->bbox_min[i] = p[i];
            if (p[i] > g->bbox_max[i]) g->bbox_max[i] = p[i];
        }
    }
    for (size_t t = 0; t < m->ntriangles; t++) {
        for (int k = 0; k < 3; k++) g->indices[3 * (t0 + t) + k] = (uint32_t)(v0 + m->indices[3 * t + k]);
        g->materials[t0 + t] = m->materials[t];
    }
}

int sc_flatten(const sc_scene *s, sc_geometry *g, char err[SC_ERR_MAX])
{
    memset(g, 0, sizeof *g);
    for (size_t k = 0; k < s->ninstances; k++) {
        g->nvertices += s->meshes[s->instances[k].mesh].nvertices;
        g->ntriangles += s->meshes[s->instances[k].mesh].ntriangles;
    }
    if (g->nvertices > UINT32_MAX) { snprintf(err, SC_ERR_MAX, "%s: more than 2^32 vertices", s->name); return -1; }
    size_t nv = g->nvertices ? g->nvertices : 1, nt = g->ntriangles ? g->ntriangles : 1;
    g->positions = malloc(nv * 3 * sizeof(float));
    g->normals = malloc(nv * 3 * sizeof(float));
    g->texcoords = calloc(nv * 2, sizeof(float));
    bool set1 = false;
    for (size_t k = 0; k < s->ninstances; k++) set1 |= s->meshes[s->instances[k].mesh].texcoords1 != NULL;
    g->texcoords1 = set1 ? malloc(nv * 2 * sizeof(float)) : NULL;
    g->indices = malloc(nt * 3 * sizeof(uint32_t));
    g->materials = malloc(nt * sizeof(uint32_t));
    if (!g->positions || !g->normals || !g->texcoords || (set1 && !g->texcoords1) || !g->indices || !g->materials) {
        sc_geometry_free(g);
        snprintf(err, SC_ERR_MAX, "%s: out of memory flattening the scene", s->name);
        return -1;
    }
    for (int i = 0; i < 3; i++) { g->bbox_min[i] = INFINITY; g->bbox_max[i] = -INFINITY; }
    size_t v0 = 0, t0 = 0;
    for (size_t k = 0; k < s->ninstances; k++) {
        const sc_mesh *m = &s->meshes[s->instances[k].mesh];
        flatten_instance(s, &s->instances[k], g, v0, t0);
        char what[200];
        snprintf(what, sizeof what, "%.60s: instance %zu of mesh '%.60s'", s->name, k + 1, m->name);
        if (sc_validate_world(g->positions + 3 * v0, g->normals + 3 * v0, m->nvertices, what, err)) {
            sc_geometry_free(g);
            return -1;
        }
        v0 += m->nvertices;
        t0 += m->ntriangles;
    }
    return 0;
}

void sc_geometry_free(sc_geometry *g)
{
    free(g->positions); free(g->normals); free(g->texcoords); free(g->texcoords1); free(g->indices);
    free(g->materials);
    memset(g, 0, sizeof *g);
}

/* Covered pixels per triangle: projects every triangle with the scene's camera and
 * sums the screen areas of those fully in front of the camera, clipped to the image by
 * their bounding boxes (an overestimate for slivers at the border; overdraw counts). */
static double pixels_per_triangle(const sc_geometry *g, const sc_camera *c, int w, int h, size_t *visible)
{
    float f[3], r[3], u[3];
    for (int i = 0; i < 3; i++) f[i] = c->target[i] - c->eye[i];
    float lf = sqrtf(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    for (int i = 0; i < 3; i++) f[i] /= lf;
    r[0] = f[1] * c->up[2] - f[2] * c->up[1]; r[1] = f[2] * c->up[0] - f[0] * c->up[2]; r[2] = f[0] * c->up[1] - f[1] * c->up[0];
    float lr = sqrtf(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    for (int i = 0; i < 3; i++) r[i] /= lr;
    u[0] = r[1] * f[2] - r[2] * f[1]; u[1] = r[2] * f[0] - r[0] * f[2]; u[2] = r[0] * f[1] - r[1] * f[0];
    float th = tanf(c->fovy_deg * (float)M_PI / 360.0f), tw = th * (float)w / (float)h;
    double area = 0;
    *visible = 0;
    for (size_t t = 0; t < g->ntriangles; t++) {
        float sx[3], sy[3];
        bool front = true;
        for (int k = 0; k < 3; k++) {
            const float *p = g->positions + 3 * g->indices[3 * t + k];
            float d[3] = {p[0] - c->eye[0], p[1] - c->eye[1], p[2] - c->eye[2]};
            float z = d[0] * f[0] + d[1] * f[1] + d[2] * f[2];
            if (z <= 1e-6f) { front = false; break; }
            sx[k] = ((d[0] * r[0] + d[1] * r[1] + d[2] * r[2]) / z / tw * 0.5f + 0.5f) * w;
            sy[k] = ((d[0] * u[0] + d[1] * u[1] + d[2] * u[2]) / z / th * 0.5f + 0.5f) * h;
        }
        if (!front) continue;
        float x0 = fminf(sx[0], fminf(sx[1], sx[2])), x1 = fmaxf(sx[0], fmaxf(sx[1], sx[2]));
        float y0 = fminf(sy[0], fminf(sy[1], sy[2])), y1 = fmaxf(sy[0], fmaxf(sy[1], sy[2]));
        if (x1 < 0 || y1 < 0 || x0 > w || y0 > h) continue;
        double a = 0.5 * fabs((double)(sx[1] - sx[0]) * (sy[2] - sy[0]) - (double)(sx[2] - sx[0]) * (sy[1] - sy[0]));
        double bw = x1 - x0, bh = y1 - y0, cw = fmin(x1, w) - fmax(x0, 0), ch = fmin(y1, h) - fmax(y0, 0);
        if (bw > 0 && bh > 0) a *= (cw / bw) * (ch / bh);
        area += a;
        (*visible)++;
    }
    return *visible ? area / (double)*visible : 0;
}

static const char *wrap_name(sc_wrap w)
{
    return w == SC_WRAP_CLAMP ? "clamp" : w == SC_WRAP_MIRROR ? "mirror" : "repeat";
}

const char *sc_filter_name(sc_filter f)
{
    static const char *const names[] = {"trilinear", "bilinear", "nearest", "nearest-no-mips",
                                        "linear-no-mips"};
    return (unsigned)f < sizeof names / sizeof names[0] ? names[f] : "?";
}

static void report_ref(const sc_scene *s, const char *what, const sc_texture_ref *r, FILE *out)
{
    if (r->texture < 0 || (size_t)r->texture >= s->ntextures) return;
    const sc_texture *t = &s->textures[r->texture];
    fprintf(out, "      %s: texture %d %s %dx%d, %d levels; uv set %d, wrap %s/%s, %s", what,
            r->texture, t->name, t->levels[0].width, t->levels[0].height, t->nlevels, r->uv_set,
            wrap_name(r->sampler.wrap_u), wrap_name(r->sampler.wrap_v), sc_filter_name(r->sampler.filter));
    if (r->offset[0] != 0 || r->offset[1] != 0 || r->scale[0] != 1 || r->scale[1] != 1 || r->rotation != 0)
        fprintf(out, "; transform offset (%g, %g) scale (%g, %g) rotation %g", r->offset[0],
                r->offset[1], r->scale[0], r->scale[1], r->rotation);
    fprintf(out, "\n");
}

/* Each material (model, factors, alpha, sides, textures with their samplers), then each
 * texture. */
static void report_materials(const sc_scene *s, FILE *out)
{
    static const char *const modes[] = {"opaque", "mask", "blend"};
    fprintf(out, "  materials %zu:\n", s->nmaterials);
    for (size_t i = 0; i < s->nmaterials; i++) {
        const sc_material *m = &s->materials[i];
        fprintf(out, "    %s: %s, base colour (%g, %g, %g) alpha %g, %s", m->name,
                m->model == SC_SHADING_METALLIC_ROUGHNESS ? "metallic-roughness" : "blinn-phong",
                m->albedo[0], m->albedo[1], m->albedo[2], m->alpha,
                (unsigned)m->alpha_mode <= SC_ALPHA_BLEND ? modes[m->alpha_mode] : "?");
        if (m->alpha_mode == SC_ALPHA_MASK) fprintf(out, " (cutoff %g)", m->alpha_cutoff);
        fprintf(out, ", %s", m->double_sided ? "double-sided" : "single-sided");
        if (m->model == SC_SHADING_METALLIC_ROUGHNESS)
            fprintf(out, ", metallic %g roughness %g", m->metallic, m->roughness);
        else
            fprintf(out, ", specular %g exponent %g", m->specular, m->specular_exponent);
        fprintf(out, ", reflectivity %g", m->reflectivity);
        if (m->emissive[0] != 0 || m->emissive[1] != 0 || m->emissive[2] != 0)
            fprintf(out, ", emissive (%g, %g, %g)", m->emissive[0], m->emissive[1], m->emissive[2]);
        if (m->normal_map.texture >= 0) fprintf(out, ", normal scale %g", m->normal_scale);
        if (m->occlusion_map.texture >= 0) fprintf(out, ", occlusion strength %g", m->occlusion_strength);
        fprintf(out, "\n");
        report_ref(s, "base colour", &m->albedo_map, out);
        report_ref(s, "metallic-roughness", &m->metallic_roughness_map, out);
        report_ref(s, "emissive", &m->emissive_map, out);
        report_ref(s, "normal", &m->normal_map, out);
        report_ref(s, "occlusion", &m->occlusion_map, out);
    }
    fprintf(out, "  textures %zu (%zu unreadable)%s\n", s->ntextures, s->unreadable_textures,
            s->ntextures ? ":" : "");
    for (size_t i = 0; i < s->ntextures; i++) {
        const sc_texture *t = &s->textures[i];
        fprintf(out, "    %zu %s: %dx%d, %d levels, %.1f KiB, %s\n", i, t->name, t->levels[0].width,
                t->levels[0].height, t->nlevels, sc_texture_bytes(t) / 1024.0,
                t->has_alpha ? "alpha below 255" : "opaque");
    }
}

void sc_report(const sc_scene *s, int width, int height, FILE *out)
{
    sc_geometry g;
    char err[SC_ERR_MAX];
    if (sc_flatten(s, &g, err) != 0) { fprintf(out, "%s\n", err); return; }
    size_t visible;
    double ppt = pixels_per_triangle(&g, &s->camera, width, height, &visible);
    fprintf(out, "scene %s\n", s->name);
    fprintf(out, "  triangles %zu (%zu degenerate), vertices %zu, meshes %zu, instances %zu\n",
            g.ntriangles, s->degenerate_triangles, g.nvertices, s->nmeshes, s->ninstances);
    fprintf(out, "  bounding box (%g, %g, %g) - (%g, %g, %g)\n", g.bbox_min[0], g.bbox_min[1],
            g.bbox_min[2], g.bbox_max[0], g.bbox_max[1], g.bbox_max[2]);
    fprintf(out, "  camera eye (%g, %g, %g) target (%g, %g, %g) up (%g, %g, %g) fovy %g\n",
            s->camera.eye[0], s->camera.eye[1], s->camera.eye[2], s->camera.target[0],
            s->camera.target[1], s->camera.target[2], s->camera.up[0], s->camera.up[1],
            s->camera.up[2], s->camera.fovy_deg);
    report_materials(s, out);
    fprintf(out, "  lights %zu\n", s->nlights);
    fprintf(out, "  covered pixels per triangle at %dx%d: %.1f (%zu triangles in front of the camera)\n",
            width, height, ppt, visible);
    sc_geometry_free(&g);
}
