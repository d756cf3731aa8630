/* options.c — gramps-view's command line (see options.h). */
#include "tools/view/options.h"

#include "gramps/gramps.h"


enum { OPT_SCREENSHOT = RO_OPT_END, OPT_NO_OVERLAY, OPT_TEST_EVENTS, OPT_VERSION };

static void usage(FILE *out)
{
    fprintf(out,
        "usage: gramps-view [options] [SCENE]\n"
        "Renders SCENE (as gramps-render takes it) continuously in a window, with an overlay\n"
        "of the graph at work: frame time, queue depths, stage shares, worker timeline.\n\n");
    ro_usage(out);
    fprintf(out,
        "      --frames N        render N frames, then (with --screenshot) save and quit\n"
        "      --screenshot FILE PNG of the window after the last frame (F12 saves one too)\n"
        "      --no-overlay      start with the overlay hidden (O toggles it)\n"
        "  -h, --help            this help\n"
        "      --version         version\n\n"
        "Keys: mouse drag or arrows orbit, right drag or shift+arrows pan, wheel or Z/X zoom,\n"
        "R resets the camera, C prints it as --camera, P pipeline, A AOV, S scheduler,\n"
        "+/- workers, O overlay, F12 screenshot, Esc or Q quits.\n");
}

/* The options only gramps-view has. */
static int parse_one(void *ctx, int c, const char *arg, const char *flag)
{
    vw_options *o = ctx;
    switch (c) {
    case OPT_SCREENSHOT: o->screenshot = arg; return 0;
    case OPT_NO_OVERLAY: o->overlay = false; return 0;
    case OPT_TEST_EVENTS: o->test_events = true; return 0;
    }
    return ro_parse_one(&o->r, c, arg, flag);
}

int vw_parse_options(int argc, char **argv, vw_options *o)
{
    static const struct option longs[] = {
        RO_LONG_OPTIONS, {"help", no_argument, 0, 'h'}, {"version", no_argument, 0, OPT_VERSION},
        {"screenshot", required_argument, 0, OPT_SCREENSHOT},
        {"no-overlay", no_argument, 0, OPT_NO_OVERLAY},
        {"test-events", no_argument, 0, OPT_TEST_EVENTS}, {0, 0, 0, 0}};
    *o = (vw_options){.overlay = true};
    int rc = ro_init(&o->r, "gramps-view", argc);
    if (rc) return rc;
    o->r.frames = 0;
    rc = ro_parse_args(&o->r, argc, argv,
                       &(ro_program){"h", longs, OPT_VERSION, usage, parse_one, o});
    if (rc) return rc;
    if (o->screenshot && !o->r.frames)
        return ro_bad_flag(&o->r, "--screenshot", o->screenshot, "needs --frames N (F12 saves one interactively)");
    return 0;
}
