/* options.h — gramps-view's command line: gramps-render's scene, graph, image and
 * runtime options (tools/common/render_opts.h) and the window's own. */
#ifndef TOOLS_VIEW_OPTIONS_H
#define TOOLS_VIEW_OPTIONS_H

#include "tools/common/render_opts.h"

typedef struct vw_options {
    ro_options r;                  /* r.frames: 0 renders until the window closes */
    const char *screenshot;        /* PNG of the window after the last frame (--frames) */
    bool overlay;
    bool test_events;              /* hidden: synthetic input for the tests (test_events.h) */
} vw_options;

/* 0, -1 after --help or --version (exit 0), or exit status 2 with a message. */
int vw_parse_options(int argc, char **argv, vw_options *o);

#endif
