/* The accepted coordinate range renders correctly in every pipeline (issue 36, class 4):
 * a mesh scaled by 1e10 (near SC_COORD_MAX with its fitted camera) gives the image of the
 * unscaled mesh within rounding, in raster, raytrace and hybrid (the ray tracer drew an
 * unlit silhouette from about 1e12: its triangle test overflowed; both drew one from
 * 1e11: smooth normals' squared length overflowed); an up vector of 1e-25 gives the image
 * of (0, 1, 0) (it gave a blank one); a coordinate beyond the range is refused, naming
 * SC_COORD_MAX. */
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/png_compare.h"
#include "tests/scratch_dir.h"

#include <unistd.h>

static char dir[] = "/tmp/gramps-scale-XXXXXX";

/* The teapot of ../shared/scenes scaled by `scale`, as dir/NAME. */
static void scaled_teapot(const char *name, double scale)
{
    FILE *in = fopen("../shared/scenes/teapot.obj", "r");
    char path[256], line[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *o = fopen(path, "w");
    CHECK(in && o);
    while (in && o && fgets(line, sizeof line, in)) {
        double x, y, z;
        if (line[0] == 'v' && line[1] == ' ' && sscanf(line + 2, "%lf %lf %lf", &x, &y, &z) == 3)
            fprintf(o, "v %.9g %.9g %.9g\n", x * scale, y * scale, z * scale);
        else fputs(line, o);
    }
    if (in) fclose(in);
    if (o) fclose(o);
}

/* Renders `args` at 64x64 on 2 workers into dir/NAME.png and loads it (NULL on failure). */
static unsigned char *render(const char *name, const char *args)
{
    char a[1024];
    snprintf(a, sizeof a, "-t 2 --size 64x64 %s", args);
    return render_into(dir, name, a);
}

/* Pixels differing by more than 4 in some channel. */
static int differ(const unsigned char *a, const unsigned char *b)
{
    int bad = 0;
    for (int i = 0; a && b && i < 64 * 64 * 4; i++) bad += abs(a[i] - b[i]) > 4;
    return a && b ? bad : -1;
}

static void test_large_scale_renders_lit(void)
{
    scaled_teapot("unit.obj", 1);
    scaled_teapot("large.obj", 1e10);
    static const char *const pipes[] = {"raster", "raytrace", "hybrid"};
    for (int k = 0; k < 3; k++) {
        char a[512], b[512];
        snprintf(a, sizeof a, "-p %s %s/unit.obj", pipes[k], dir);
        snprintf(b, sizeof b, "-p %s %s/large.obj", pipes[k], dir);
        unsigned char *x = render("unit", a), *y = render("large", b);
        int bad = differ(x, y);
        CHECK_MSG(bad >= 0 && bad <= 40, "%s: %d of 4096 pixels differ at scale 1e10", pipes[k], bad);
        stbi_image_free(x);
        stbi_image_free(y);
    }
    scaled_teapot("beyond.obj", 1e12);
    char c[512];
    snprintf(c, sizeof c, "-q --size 16x16 %s/beyond.obj", dir);
    CHECK_MSG(run(c) == 1 && strstr(out, "SC_COORD_MAX"), "%s", out);
}

static void test_tiny_up_vector(void)
{
    unsigned char *a = render("up", "--camera 0,1,6,0,0.5,0,0,1,0,40 teapot");
    unsigned char *b = render("tiny", "--camera 0,1,6,0,0.5,0,0,1e-25,0,40 teapot");
    int bad = differ(a, b);
    CHECK_MSG(bad == 0, "%d pixels differ with up (0, 1e-25, 0)", bad);
    stbi_image_free(a);
    stbi_image_free(b);
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    if (!mkdtemp(dir)) return 1;
    RUN(test_large_scale_renders_lit);
    RUN(test_tiny_up_vector);
    if (!scratch_dir_remove(dir)) return 1;
    return check_finish();
}
