/* png_compare.h — for the render tests that compare images a program wrote: render into
 * DIR/NAME.png and load it, and the share of pixels that agree within 2/255 (the
 * tolerance the renderers' agreement targets use). Include after check.h and cli.h. */
#ifndef TESTS_PNG_COMPARE_H
#define TESTS_PNG_COMPARE_H

#include "tests/image_agreement.h"

#include <stb/stb_image.h>
#include <stdio.h>
#include <stdlib.h>

/* Runs the tool with `args` plus `-q -o DIR/NAME.png` and loads the image as RGBA
 * (NULL, and a failed check naming the command, where it exited nonzero). */
static inline unsigned char *render_into(const char *dir, const char *name, const char *args)
{
    char a[1400], png[256];
    snprintf(png, sizeof png, "%s/%s.png", dir, name);
    snprintf(a, sizeof a, "-q -o %s %s", png, args);
    int rc = run(a);
    CHECK_MSG(rc == 0, "%s: exit %d: %s", a, rc, out);
    int w, h, n;
    return rc == 0 ? stbi_load(png, &w, &h, &n, 4) : NULL;
}

/* Share of the pixels whose RGB channels all lie within 2 of each other's (-1 where
 * either image is missing). */
static inline double agreement(const unsigned char *a, const unsigned char *b, int pixels)
{
    return agreement_within(a, b, pixels, 2);
}

#endif
