/* Metallic-roughness materials (shaders/pbr.h) through both renderers' shading kernels:
 * the raster pixel shader gives a metallic-roughness fragment exactly the colour of
 * sh_pbr_shade_local on the gathered surface, and the Blinn-Phong fragments of the same
 * packet the bits they get without it; the ray tracer's Shade kernel gives the ambient +
 * emissive term, a shadow ray per lit light carrying sh_pbr_light, and a mirror ray
 * weighted by sh_pbr_reflectance (not by the material's reflectivity), while a
 * Blinn-Phong hit keeps its terms; and both kernels light the same point alike. End to
 * end: a .scene quad of a metallic-roughness material renders the same in the raster
 * graph and the ray tracer (--bounces 0), and not as the same material under Blinn-Phong. */
#include "scenes/camera.h"
#include "scenes/loaders.h"
#include "shaders/blinn_phong.h"
#include "shaders/color.h"
#include "shaders/pbr.h"
#include "shaders/raster_shading.h"
#include "shaders/ray_shading.h"
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/scratch_dir.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

static float positions[9] = {-1, -1, 0, 1, -1, 0, 0, 1, 0};
static float normals[9] = {0, 0.2f, 1, 0.1f, 0, 1, -0.1f, 0, 1};
static float texcoords[6] = {0, 0, 1, 0, 0.5f, 1};
static uint32_t indices[3] = {0, 1, 2};
static uint32_t tri_material[1];
static sc_material materials[2];
static sc_light light = {.position = {1, 2, 3}, .color = {1, 0.9f, 0.8f}};
static sc_scene scene;
static sc_geometry geo;

enum { MR, BP };

static void setup(void)
{
    memset(&scene, 0, sizeof scene);
    memset(&geo, 0, sizeof geo);
    materials[MR] = sh_default_material;
    materials[MR].model = SC_SHADING_METALLIC_ROUGHNESS;
    materials[MR].albedo[0] = 0.9f, materials[MR].albedo[1] = 0.5f, materials[MR].albedo[2] = 0.2f;
    materials[MR].metallic = 0.8f, materials[MR].roughness = 0.35f;
    materials[MR].emissive[0] = 0.05f, materials[MR].emissive[1] = 0.02f;
    materials[MR].reflectivity = 0.3f;            /* not read for metallic-roughness */
    materials[BP] = sh_default_material;
    scene.camera = (sc_camera){{0, 0.5f, 3}, {0, 0, 0}, {0, 1, 0}, 45};
    scene.lights = &light;
    scene.nlights = 1;
    scene.materials = materials;
    scene.nmaterials = 2;
    geo = (sc_geometry){.nvertices = 3, .ntriangles = 1, .positions = positions, .normals = normals,
                        .texcoords = texcoords, .indices = indices, .materials = tri_material,
                        .bbox_min = {-1, -1, 0}, .bbox_max = {1, 1, 0}};
}

static void triangle(sh_ps_tri *t, uint32_t material)
{
    memset(t, 0, sizeof *t);
    for (int k = 0; k < 3; k++) {
        memcpy(t->attr[k], positions + 3 * k, 3 * sizeof(float));
        memcpy(t->attr[k] + 3, normals + 3 * k, 3 * sizeof(float));
        memcpy(t->attr[k] + 6, texcoords + 2 * k, 2 * sizeof(float));
    }
    t->material = material;
}

/* The linear colour the raster PS should give a metallic-roughness fragment at (b1, b2). */
static void raster_reference(const sh_raster_env *e, float b1, float b2, float rgb[3])
{
    float P[3][3], N[3][3], UV[3][2];
    for (int k = 0; k < 3; k++) {
        memcpy(P[k], positions + 3 * k, sizeof P[k]);
        memcpy(N[k], normals + 3 * k, sizeof N[k]);
        memcpy(UV[k], texcoords + 2 * k, sizeof UV[k]);
    }
    sh_surface_in in;
    sh_surface_in_of_vertices(P, N, UV, b1, b2, &in);
    float b0 = 1.0f - b1 - b2, p[3], v[3];
    for (int i = 0; i < 3; i++) {
        p[i] = b0 * P[0][i] + b1 * P[1][i] + b2 * P[2][i];
        v[i] = e->frame.eye[i] - p[i];
    }
    sh_normalize3(v);
    in.facing = sh_dot3(in.n, v) < 0 ? -1.0f : 1.0f;
    in.lod = (sh_lod){.kind = SH_LOD_BASE};
    sh_surface s;
    sh_surface_gather(&scene, &materials[MR], &in, &s);
    sh_pbr_shade_local(&s, p, v, e->lights, e->nlights, e->ambient, rgb);
}

static uint32_t pack(const float c[3])
{
    return (uint32_t)sh_to_srgb8(c[0]) | (uint32_t)sh_to_srgb8(c[1]) << 8 |
           (uint32_t)sh_to_srgb8(c[2]) << 16 | 0xff000000u;
}

static void test_raster_fragment(void)
{
    setup();
    sh_raster_env e;
    sh_raster_env_init(&e, &scene, &geo, 64, 64, SH_AOV_COLOR);
    sh_ps_tri t[2];
    triangle(&t[0], MR);
    triangle(&t[1], BP);
    const uint8_t tri[4] = {0, 1, 0, 1};
    const float b1[4] = {0.2f, 0.2f, 0.5f, 0.5f}, b2[4] = {0.3f, 0.3f, 0.1f, 0.1f};
    uint32_t mixed[4], bp_only[2];
    sh_ps_packet(&e, &(sh_ps_frags){.n = 4, .tris = t, .tri = tri, .b1 = b1, .b2 = b2}, mixed);
    const uint8_t tri_bp[2] = {1, 1};
    const float b1_bp[2] = {0.2f, 0.5f}, b2_bp[2] = {0.3f, 0.1f};
    sh_ps_packet(&e, &(sh_ps_frags){.n = 2, .tris = t, .tri = tri_bp, .b1 = b1_bp, .b2 = b2_bp}, bp_only);
    for (int i = 0; i < 2; i++) {
        float rgb[3];
        raster_reference(&e, b1[2 * i], b2[2 * i], rgb);
        CHECK_MSG(mixed[2 * i] == pack(rgb), "fragment %d: %08x, want %08x", 2 * i, mixed[2 * i], pack(rgb));
        CHECK_MSG(mixed[2 * i + 1] == bp_only[i], "Blinn-Phong fragment %d: %08x, alone %08x",
                  2 * i + 1, mixed[2 * i + 1], bp_only[i]);
        CHECK(mixed[2 * i] != mixed[2 * i + 1]);
    }
}

/* A camera ray to the point at weights (b1, b2) and its hit. */
static void hit_at(const sh_ray_env *e, const sc_camera_frame *f, float b1, float b2, rt_ray *r, rt_hit *h)
{
    (void)e;
    float b0 = 1.0f - b1 - b2;
    for (int i = 0; i < 3; i++) {
        r->org[i] = f->eye[i];
        r->dir[i] = b0 * positions[i] + b1 * positions[3 + i] + b2 * positions[6 + i] - f->eye[i];
    }
    r->tmin = 0;
    r->tmax = INFINITY;
    *h = (rt_hit){.t = 1, .u = b1, .v = b2, .prim = 0};
}

static void test_ray_hit(void)
{
    setup();
    sc_camera_frame f;
    sc_camera_frame_init(&f, &scene.camera, 64, 64);
    sh_ray_env e;
    sh_ray_env_init(&e, &scene, &geo, &f);
    rt_ray ray;
    rt_hit hit;
    hit_at(&e, &f, 0.2f, 0.3f, &ray, &hit);
    const float weight[3] = {1, 1, 1};
    sh_ray_result res;
    tri_material[0] = MR;
    sh_ray_shade(&e, &ray, &hit, weight, 0, &res);
    sh_surface_in in;
    sh_surface_in_of_hit(&geo, 0, hit.u, hit.v, ray.dir, 0.0f, &in);
    in.facing = sh_dot3(in.n, ray.dir) > 0 ? -1.0f : 1.0f;
    sh_surface s;
    sh_surface_gather(&scene, &materials[MR], &in, &s);
    float p[3], view[3], amb[3], lit[3], refl[3];
    for (int i = 0; i < 3; i++) p[i] = ray.org[i] + hit.t * ray.dir[i], view[i] = -ray.dir[i];
    sh_normalize3(view);
    sh_pbr_ambient(&s, e.ambient, amb);
    CHECK(sh_pbr_light(&s, p, view, &light, lit));
    sh_pbr_reflectance(&s, view, refl);
    CHECK(res.nshadow == 1);
    for (int i = 0; i < 3; i++) {
        CHECK_MSG(res.direct[i] == amb[i] + s.emissive[i], "direct %d: %g", i, res.direct[i]);
        CHECK_MSG(res.shadow_color[0][i] == lit[i], "light %d: %g, want %g", i, res.shadow_color[0][i], lit[i]);
        CHECK_MSG(res.reflect_weight[i] == refl[i], "reflection %d: %g, want %g", i, res.reflect_weight[i], refl[i]);
    }
    CHECK(res.reflect && refl[0] > 0 && refl[0] != materials[MR].reflectivity);
    /* the raster PS lights the same point alike (the view vectors differ by rounding) */
    sh_raster_env re;
    sh_raster_env_init(&re, &scene, &geo, 64, 64, SH_AOV_COLOR);
    float rgb[3];
    raster_reference(&re, 0.2f, 0.3f, rgb);
    for (int i = 0; i < 3; i++)
        CHECK_MSG(fabsf(rgb[i] - (res.direct[i] + res.shadow_color[0][i])) <= 1e-5f * (1 + rgb[i]),
                  "channel %d: raster %g, ray tracer %g", i, rgb[i], res.direct[i] + res.shadow_color[0][i]);
    /* a Blinn-Phong hit: (1 - reflectivity) x its terms, reflectivity to the mirror ray */
    tri_material[0] = BP;
    sh_ray_shade(&e, &ray, &hit, weight, 0, &res);
    const sc_material *bp = &materials[BP];
    for (int i = 0; i < 3; i++) {
        CHECK(res.direct[i] == (1.0f - bp->reflectivity) * e.ambient * bp->albedo[i]);
        CHECK(res.reflect_weight[i] == bp->reflectivity);
    }
}

static char dir[64];

/* The centre pixel of a 16x16 render of a quad facing the camera in material `model`
 * (pipeline -p `pipeline`): 0 with rgb set, or -1. */
static int centre_pixel(const char *model, const char *pipeline, uint8_t rgb[3])
{
    char path[128], png[128], args[512], err[SC_ERR_MAX];
    snprintf(path, sizeof path, "%s/quad.obj", dir);
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs("v -1 -1 0\nv 1 -1 0\nv 1 1 0\nv -1 1 0\nvt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\nvn 0 0 1\n"
          "f 1/1/1 2/2/1 3/3/1\nf 1/1/1 3/3/1 4/4/1\n", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/quad.scene", dir);
    if (!(f = fopen(path, "w"))) return -1;
    fprintf(f, "[camera]\neye = 0, 0, 1.5\ntarget = 0, 0, 0\nfovy = 60\n[light.l]\nposition = 0.5, 0.5, 3\n"
               "[material.m]\nalbedo = 0.9, 0.5, 0.2\nmodel = %s\nmetallic = 0.6\nroughness = 0.4\n"
               "[mesh.quad]\nfile = quad.obj\nmaterial = m\n", model);
    fclose(f);
    snprintf(png, sizeof png, "%s/out.png", dir);
    snprintf(args, sizeof args, "-q -t 2 -p %s --bounces 0 --size 16x16 -o %s %s", pipeline, png, path);
    if (run(args) != 0) return -1;
    sc_scene sc = {0};
    sc_load_opts o = sc_load_opts_default();
    if (sc_read_texture(&sc, png, &o, err) != 0) return -1;
    memcpy(rgb, sc.textures[0].levels[0].rgba + (8 * 16 + 8) * 4, 3);
    sc_texture_free(&sc.textures[0]);
    free(sc.textures);
    return 0;
}

/* A normal map tilted nearly flat (texel x = 255, z = 0: the shading normal lies in the
 * surface's plane) must not send the mirror ray into the surface: it leaves on the
 * viewer's side of the geometric normal (it pointed into the surface, pbr helper's
 * finding). */
static void test_mirror_leaves_the_surface(void)
{
    setup();
    unsigned char texel[4] = {255, 128, 0, 255};
    sc_texture tex = {.name = "tilt", .nlevels = 1, .levels[0] = {1, 1, texel}};
    scene.textures = &tex;
    scene.ntextures = 1;
    materials[MR].normal_map = sh_default_material.normal_map;
    materials[MR].normal_map.texture = 0;
    materials[MR].roughness = 0.05f;
    tri_material[0] = MR;
    sc_camera_frame f;
    sc_camera_frame_init(&f, &scene.camera, 64, 64);
    sh_ray_env e;
    sh_ray_env_init(&e, &scene, &geo, &f);
    for (int k = 0; k < 9; k++) {
        rt_ray ray;
        rt_hit hit;
        hit_at(&e, &f, 0.1f + 0.1f * (float)(k % 3), 0.1f + 0.1f * (float)(k / 3), &ray, &hit);
        sh_ray_result res;
        sh_ray_shade(&e, &ray, &hit, (const float[3]){1, 1, 1}, 0, &res);
        float n[3];
        sh_ray_hit_normal(&e, &ray, &hit, n);
        CHECK_MSG(!res.reflect || sh_dot3(res.reflected.dir, n) > 0, "hit %d: the mirror ray goes "
                  "into the surface (dir . n = %g)", k, (double)sh_dot3(res.reflected.dir, n));
    }
    scene.textures = NULL;
    scene.ntextures = 0;
    materials[MR].normal_map.texture = -1;
}

static void test_rendered(void)
{
    uint8_t raster[3], ray[3], phong[3];
    CHECK_MSG(centre_pixel("metallic-roughness", "raster", raster) == 0, "%s", out);
    CHECK_MSG(centre_pixel("metallic-roughness", "raytrace", ray) == 0, "%s", out);
    CHECK_MSG(centre_pixel("blinn-phong", "raster", phong) == 0, "%s", out);
    int same = 1, near = 1;
    for (int i = 0; i < 3; i++) {
        near &= abs(raster[i] - ray[i]) <= 2;
        same &= raster[i] == phong[i];
    }
    CHECK_MSG(near, "raster %d %d %d, ray tracer %d %d %d", raster[0], raster[1], raster[2], ray[0], ray[1], ray[2]);
    CHECK_MSG(!same, "metallic-roughness renders as Blinn-Phong: %d %d %d", raster[0], raster[1], raster[2]);
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    snprintf(dir, sizeof dir, "/tmp/gramps-pbr-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    RUN(test_raster_fragment);
    RUN(test_ray_hit);
    RUN(test_mirror_leaves_the_surface);
    RUN(test_rendered);
    scratch_dir_remove(dir);
    return check_finish();
}
