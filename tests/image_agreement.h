/* image_agreement.h — for render tests that compare two RGBA8 images: the share of
 * pixels whose RGB channels all lie within a tolerance of each other's (alpha ignored). */
#ifndef TESTS_IMAGE_AGREEMENT_H
#define TESTS_IMAGE_AGREEMENT_H

#include <stdlib.h>

/* -1 where either image is missing. */
static inline double agreement_within(const unsigned char *a, const unsigned char *b, int pixels, int tol)
{
    int close = 0;
    for (int i = 0; a && b && i < pixels; i++) {
        int worst = 0;
        for (int ch = 0; ch < 3; ch++) {
            int d = abs(a[i * 4 + ch] - b[i * 4 + ch]);
            worst = d > worst ? d : worst;
        }
        close += worst <= tol;
    }
    return a && b ? (double)close / pixels : -1;
}

#endif
