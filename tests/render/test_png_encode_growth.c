/* output/png_encode.c compiled here with a band's first output room set by the
 * test (1 to 300 bytes instead of zlib's bound), so that every band's deflate runs out
 * of room and its buffer grows, for some first sizes with a sync flush ending exactly
 * at the end of the room. The bytes must be the library encoder's, whose first room
 * always suffices. */
#include <stddef.h>

static size_t first_out = 1;
#define PNG_FIRST_OUT(bound) ((void)(bound), first_out)
#define io_encode_png_on growing_encode_png_on
#define io_encode_png growing_encode_png
#include "output/png_encode.c"
#undef io_encode_png_on
#undef io_encode_png
/* the library's (png_encode.h, whose guard already made the names above) */
uint8_t *io_encode_png_on(int width, int height, const uint8_t *rgba, unsigned threads,
                          size_t *size);

#include "tests/check.h"

#include <stdlib.h>
#include <string.h>

static uint8_t *test_image(int w, int h)
{
    uint8_t *p = malloc((size_t)w * h * 4);
    uint32_t seed = 12345;
    for (size_t i = 0; p && i < (size_t)w * h * 4; i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (uint8_t)(i % 7 ? seed >> 24 : i);
    }
    return p;
}

/* Shapes of one band (3x2) and of several (1024x200: 4 bands, 3 with a sync flush). */
static void test_growing_room_same_bytes(void)
{
    static const int shapes[][2] = {{3, 2}, {1024, 200}};
    for (int k = 0; k < 2; k++) {
        int w = shapes[k][0], h = shapes[k][1];
        uint8_t *img = test_image(w, h);
        size_t n = 0;
        uint8_t *want = io_encode_png_on(w, h, img, 2, &n);
        CHECK(want);
        int wrong = 0;
        for (first_out = 1; want && first_out <= 300; first_out += k ? 37 : 1) {
            size_t m = 0;
            uint8_t *got = growing_encode_png_on(w, h, img, 2, &m);
            if (!got || m != n || memcmp(got, want, n)) wrong++;
            free(got);
        }
        CHECK_MSG(!wrong, "%dx%d: %d first sizes gave other bytes or none", w, h, wrong);
        free(want);
        free(img);
    }
}

int main(void)
{
    RUN(test_growing_room_same_bytes);
    return check_finish();
}
