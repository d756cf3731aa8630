/* test_device_textures.c — rt.shade's OpenCL kernel samples albedo textures as
 * shaders/texture_sample.c does (docs/opencl.md, textures): a scene of textured
 * Blinn-Phong materials with every filter, the three wrap modes, a texture transform, two
 * lights and reflections (so mip levels are picked by reflected rays' cones too) renders
 * the CPU graph's PNG byte for byte with Shade, Intersect and Shadow on the device; a
 * metallic-roughness material is still refused under `opencl`. Generated box scene
 * (tests/box_scene.h) at 96x96, PoCL in CI. */
#include "tests/box_scene.h"
#include "tests/check.h"
#include "tests/cli.h"

#include <sys/stat.h>

static char dir[200];

static const char scene[] =
    "[camera]\neye = 0,3,9\ntarget = 0,0,0\nfovy = 45\n"
    "[light.key]\nposition = 5,8,6\n[light.fill]\nposition = -6,5,3\ncolor = 0.4,0.4,0.5\n"
    "[material.turned]\nalbedo = 0.9,0.9,0.9\ntexture = blocks.ppm\nwrap = mirror\nuv_scale = 2.5,1.5\n"
    "uv_rotation = 0.3\nuv_offset = 0.1,0.2\nreflectivity = 0.3\n"
    "[material.boxm]\nalbedo = 1,1,1\ntexture = blocks.ppm\nfilter = bilinear\nwrap_u = clamp\n"
    "wrap_v = repeat\nreflectivity = 0.2\n"
    "[material.near]\nalbedo = 1,0.9,0.8\ntexture = blocks.ppm\nfilter = nearest\n"
    "[material.lin]\nalbedo = 1,1,1\ntexture = blocks.ppm\nfilter = linear-no-mips\n"
    "[material.nn]\nalbedo = 1,1,1\ntexture = blocks.ppm\nfilter = nearest-no-mips\n"
    "[mesh.box]\nfile = box.obj\nmaterial = boxm\n"
    "[mesh.q1]\nfile = quad.obj\nmaterial = near\nscale = 1.5\ntranslate = -3,0,1\n"
    "[mesh.q2]\nfile = quad.obj\nmaterial = lin\nscale = 1.5\ntranslate = 1.8,0,1\n"
    "[mesh.q3]\nfile = quad.obj\nmaterial = nn\nscale = 1.2\ntranslate = -0.6,1.2,2\n"
    "[mesh.pot]\nbuiltin = teapot\nmaterial = turned\nscale = 0.5\ntranslate = 2.5,-1,-2\n";

static int render(const char *file, const char *extra, const char *png)
{
    char args[1400];
    snprintf(args, sizeof args, "-q -p raytrace -t 2 --size 96x96 %s -o %s %s/%s", extra, png, dir, file);
    return run(args);
}

static void test_same_image_as_cpu(void)
{
    char cpu[400], dev[400];
    snprintf(cpu, sizeof cpu, "%s/cpu.png", dir);
    snprintf(dev, sizeof dev, "%s/dev.png", dir);
    CHECK_MSG(render("textured.scene", "", cpu) == 0, "%s", out);
    CHECK_MSG(render("textured.scene", "--set graph.device=opencl", dev) == 0, "%s", out);
    CHECK_MSG(same_files(cpu, dev), "textured scene: the OpenCL image differs from the CPU's");
}

static void test_metallic_roughness_refused(void)
{
    char png[400];
    snprintf(png, sizeof png, "%s/mr.png", dir);
    int rc = render("mr.scene", "--set shade.device=opencl", png);
    CHECK_MSG(rc == 1 && strstr(out, "stage 'shade") && strstr(out, "metallic-roughness"), "rc %d: %s",
              rc, out);
}

int main(int argc, char **argv)
{
    (void)argc;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    printf("skip all: PoCL's own threads and allocations are reported by this sanitizer "
           "(they are not instrumented); the plain and UBSan builds run these tests\n");
    return check_finish();
#endif
    find_tool(argv[0], "gramps-render");
    char build_dir[150], cache[400];
    snprintf(build_dir, sizeof build_dir, "%s/../..", dirname(strdup(argv[0])));
    snprintf(cache, sizeof cache, "%s/pocl-cache", build_dir);
    setenv("POCL_CACHE_DIR", cache, 0);
    snprintf(dir, sizeof dir, "%s/tests/device-textures", build_dir);
    mkdir(dir, 0755);
    box_scene_files(dir);
    box_scene_write(dir, "textured.scene", scene);
    box_scene_write(dir, "mr.scene", "[material.metal]\nmodel = metallic-roughness\nmetallic = 1\n"
                    "roughness = 0.3\n[mesh.box]\nfile = box.obj\nmaterial = metal\n");
    RUN(test_same_image_as_cpu);
    RUN(test_metallic_roughness_refused);
    return check_finish();
}
