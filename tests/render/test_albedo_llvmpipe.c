/* The independent check of raster texturing against Mesa's llvmpipe, as a test: runs
 * <build>/bench/bench_albedo_llvmpipe (generated OBJ + MTL scenes: a receding
 * checker floor, a textured sphere, blended quads in file order, an alpha cut-out) and
 * expects it to exit 0, i.e. the raster graph's albedo AOV agrees with llvmpipe on at
 * least 99% of every scene's pixels within 4/255, without samples and with both at
 * --msaa 4 (mk/osmesa.mk builds the bench before this test). Skipped, visibly, where it was built without OSMesa (`make osmesa`) and
 * under ASan and TSan, which would report on Mesa's uninstrumented threads. */
#include "tests/check.h"
#include "tests/cli.h"

#include <unistd.h>

static char bench[512];

static void test_albedo_agrees_with_llvmpipe(void)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    SKIP("sanitizer build: Mesa's own threads and allocations are not instrumented");
#endif
    if (access(bench, X_OK) != 0) SKIP("%s not built (make all)", bench);
    snprintf(tool, sizeof tool, "%s", bench);
    int rc = run("");
    if (strstr(out, "OSMesa headers not installed")) SKIP("built without OSMesa (make osmesa)");
    CHECK_MSG(rc == 0, "bench_albedo_llvmpipe exit %d:\n%s", rc, out);
    CHECK_MSG(strstr(out, "albedo_within_4_floor") && strstr(out, "albedo_within_4_cutout"),
              "%s", out);
    rc = run("--msaa 4");                 /* both multisampled: llvmpipe through a 4x FBO */
    CHECK_MSG(rc == 0 && strstr(out, "albedo_within_4_blend_msaa4"), "--msaa 4: exit %d:\n%s", rc, out);
}

int main(int argc, char **argv)
{
    (void)argc;
    char self[512];
    snprintf(self, sizeof self, "%s", argv[0]);
    snprintf(bench, sizeof bench, "%s/../../bench/bench_albedo_llvmpipe", dirname(self));
    RUN(test_albedo_agrees_with_llvmpipe);
    return check_finish();
}
