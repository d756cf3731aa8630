/* test_view — gramps-view, the live viewer, run as a user would (tests/cli.h):
 * headless (SDL's dummy video driver) its no-overlay screenshot is gramps-render's PNG
 * byte for byte and its overlay changes the picture; many frames with pipeline, AOV,
 * scheduler and worker switches run clean (in the SAN=address build, under ASan with
 * leak checks); in a real X server (xvfb-run) the window opens, renders, takes synthetic
 * key and mouse input that moves the camera, saves a non-blank screenshot and quits;
 * bad options and a missing display exit with a message. Every test skips, saying why,
 * when the viewer was not built (no SDL2/SDL2_ttf: mk/viewer.mk). */
#include "tests/check.h"
#include "tests/cli.h"
#include "tests/scratch_dir.h"

#include <stb/stb_image.h>
#include <unistd.h>

static char render[512], dir[] = "/tmp/gramps-view-test-XXXXXX";

/* The viewer at tool, render beside it. */
static bool have_viewer(void) { return access(tool, X_OK) == 0; }
#define NEED_VIEWER() \
    do { if (!have_viewer()) SKIP("gramps-view not built (pkg-config finds no sdl2 SDL2_ttf)"); } while (0)

static int render_png(const char *args, const char *png)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s -q %s -o %s >/dev/null 2>&1", render, args, png);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* gramps-view headless: SDL's dummy driver needs no display. (Its offscreen driver
 * loads EGL and Mesa, whose allocations at exit LeakSanitizer reports in the
 * SAN=address build; the dummy driver loads nothing.) */
static int view(const char *args)
{
    setenv("SDL_VIDEODRIVER", "dummy", 1);
    int rc = run(args);
    unsetenv("SDL_VIDEODRIVER");
    return rc;
}

static void test_screenshot_is_the_render(void)
{
    NEED_VIEWER();
    static const char *const pipelines[] = {"raster", "raytrace"};
    for (int i = 0; i < 2; i++) {
        char args[512], ref[300], shot[300];
        snprintf(ref, sizeof ref, "%s/%s-render.png", dir, pipelines[i]);
        snprintf(shot, sizeof shot, "%s/%s-view.png", dir, pipelines[i]);
        snprintf(args, sizeof args, "-p %s --size 160x120 -t 2 --spp 2", pipelines[i]);
        CHECK(render_png(args, ref) == 0);
        char vargs[900];
        snprintf(vargs, sizeof vargs, "%s --frames 3 --no-overlay --screenshot %s", args, shot);
        CHECK_MSG(view(vargs) == 0, "%s", out);
        CHECK_MSG(same_files(ref, shot), "%s: the screenshot is not gramps-render's image", pipelines[i]);
        snprintf(vargs, sizeof vargs, "%s --frames 1 --screenshot %s", args, shot);
        CHECK_MSG(view(vargs) == 0, "%s", out);
        CHECK_MSG(!same_files(ref, shot), "%s: the overlay changed nothing", pipelines[i]);
    }
}

/* How many times `what` occurs in s. */
static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)); p += strlen(what)) n++;
    return n;
}

/* 100 frames while the synthetic keys switch pipeline, AOV, scheduler and workers. */
static void test_many_frames_with_switches(void)
{
    NEED_VIEWER();
    CHECK_MSG(view("--size 48x40 -t 2 --frames 100 --test-events") == 0, "%s", out);
    /* lockstep under --test-events: P pressed on every other frame taken, whatever the load */
    CHECK_MSG(count(out, "pipeline ") >= 40, "pipeline switches:\n%s", out);
    CHECK(strstr(out, "pipeline raytrace") && strstr(out, "pipeline hybrid"));
    CHECK_MSG(!strstr(out, "ERROR") && !strstr(out, "runtime error"), "%s", out);
}

/* Whether the PNG decodes to more than one colour. */
static bool not_blank(const char *png)
{
    int w, h, n;
    unsigned char *p = stbi_load(png, &w, &h, &n, 4);
    bool varied = false;
    for (long i = 1; p && i < (long)w * h && !varied; i++) varied = memcmp(p, p + 4 * i, 4) != 0;
    stbi_image_free(p);
    return varied;
}

/* The two --camera lines the synthetic C presses print, before and after the moves. */
static bool camera_moved(const char *s)
{
    const char *a = strstr(s, "--camera "), *b = a ? strstr(a + 1, "--camera ") : NULL;
    if (!b) return false;
    size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
    return la != lb || strncmp(a, b, la) != 0;
}

/* Under ASan, X11's libraries (libdbus, loaded and unloaded by SDL) leave allocations
 * at exit that LeakSanitizer reports without a stack to suppress by: this run checks
 * memory errors only, the headless runs (same code but the video driver) check leaks. */
#if defined(__SANITIZE_ADDRESS__)
#define X11_ENV "ASAN_OPTIONS=detect_leaks=0"
#elif defined(__SANITIZE_THREAD__)
#define X11_ENV "TSAN_OPTIONS=\"$TSAN_OPTIONS suppressions=tests/sanitizer/mesa-tsan.supp\""
#else
#define X11_ENV ""
#endif

static void test_window_under_xvfb(void)
{
    NEED_VIEWER();
    if (system("command -v xvfb-run >/dev/null 2>&1") != 0) SKIP("xvfb-run not installed (Debian xvfb)");
    char shot[300], a[1024], xvfb[sizeof tool];
    snprintf(shot, sizeof shot, "%s/xvfb.png", dir);
    snprintf(xvfb, sizeof xvfb, "%s", tool);
    if (snprintf(tool, sizeof tool, "SDL_VIDEODRIVER=x11 %s xvfb-run -a -s '-screen 0 640x480x24' "
                 "%.400s", X11_ENV, xvfb) >= (int)sizeof tool) SKIP("build path too long");
    snprintf(a, sizeof a, "--size 320x240 -t 2 --frames 5 --test-events --screenshot %s", shot);
    int rc = run(a);
    snprintf(tool, sizeof tool, "%s", xvfb);
    CHECK_MSG(rc == 0, "exit %d:\n%s", rc, out);
    CHECK_MSG(camera_moved(out), "the synthetic key and mouse did not move the camera:\n%s", out);
    CHECK(not_blank(shot));
}

static void test_errors(void)
{
    NEED_VIEWER();
    CHECK(view("--frobnicate") == 2 && strstr(out, "unknown option"));
    CHECK(view("--size 0x5") == 2 && strstr(out, "--size"));
    CHECK(view("--screenshot x.png") == 2 && strstr(out, "--frames"));
    CHECK(view("--frames 1 no-such-scene.obj") == 1);
    char a[sizeof tool];
    snprintf(a, sizeof a, "%s", tool);
    snprintf(tool, sizeof tool, "env -u DISPLAY -u WAYLAND_DISPLAY SDL_VIDEODRIVER=x11 %.400s", a);
    int rc = run("--frames 1 --size 32x32");
    snprintf(tool, sizeof tool, "%s", a);
    CHECK_MSG(rc == 1 && strstr(out, "cannot start video") && strstr(out, "SDL_VIDEODRIVER"),
              "no display: exit %d:\n%s", rc, out);
    /* no display and no driver named: SDL would pick its invisible offscreen window;
     * the viewer says how to get a display instead, and exits 1 as the README says */
    snprintf(tool, sizeof tool, "env -u DISPLAY -u WAYLAND_DISPLAY -u SDL_VIDEODRIVER timeout 60 "
             "%.400s", a);
    rc = run("--frames 1 --size 32x32");
    snprintf(tool, sizeof tool, "%s", a);
    CHECK_MSG(rc == 1 && strstr(out, "no display") && strstr(out, "SDL_VIDEODRIVER=dummy"),
              "no display, no driver: exit %d:\n%s", rc, out);
}

int main(int argc, char **argv)
{
    (void)argc;
    find_tool(argv[0], "gramps-render");
    snprintf(render, sizeof render, "%s", tool);
    find_tool(argv[0], "gramps-view");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    RUN(test_screenshot_is_the_render);
    RUN(test_many_frames_with_switches);
    RUN(test_window_under_xvfb);
    RUN(test_errors);
    scratch_dir_remove(dir);
    return check_finish();
}
