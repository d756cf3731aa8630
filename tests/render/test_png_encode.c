/* io_encode_png (output/png_encode.c), read back by other decoders: every chunk's
 * CRC holds, the IDAT stream inflates with zlib (which checks its Adler-32) to every row
 * with its filter byte, and stb_image decodes the very pixels given; the bytes do not
 * depend on the thread count; shapes that cut the rows into one band, many bands, a
 * short last band and bands of a single over-long row; bad sizes are refused. */
#include "tests/check.h"
#include "output/png_encode.h"

#include <stb/stb_image.h>                /* stbi_load_from_memory: compiled into librender */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Noise, flat runs and gradients, so that every band has something to compress. */
static uint8_t *test_image(int w, int h, uint32_t seed)
{
    uint8_t *p = malloc((size_t)w * h * 4);
    for (size_t i = 0; p && i < (size_t)w * h * 4; i++) {
        seed = seed * 1664525u + 1013904223u;
        size_t x = i / 4 % (size_t)w, y = i / 4 / (size_t)w;
        p[i] = (uint8_t)(y % 3 == 0 ? seed >> 24 : x < (size_t)w / 2 ? 200 : x + y);
    }
    return p;
}

/* The chunks' CRCs and the IDAT stream: the inflated rows, each filter byte and size. */
static bool stream_ok(const uint8_t *png, size_t n, int w, int h)
{
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (n < 8 || memcmp(png, sig, 8)) return false;
    size_t row = (size_t)w * 4 + 1, raw_n = row * h, idat_n = 0;
    uint8_t *idat = malloc(n), *raw = malloc(raw_n + 1);
    bool ok = idat && raw, ended = false;
    for (size_t i = 8; ok && !ended; ) {
        ok = i + 12 <= n;
        uint32_t len = ok ? be32(png + i) : 0;
        ok = ok && i + 12 + len <= n &&
             crc32(0, png + i + 4, len + 4) == be32(png + i + 8 + len);
        if (ok && !memcmp(png + i + 4, "IDAT", 4)) {
            memcpy(idat + idat_n, png + i + 8, len);
            idat_n += len;
        }
        ended = ok && !memcmp(png + i + 4, "IEND", 4);
        ok = ok && (!ended || i + 12 + len == n);
        i += 12 + len;
    }
    uLongf got = raw_n + 1;
    ok = ok && uncompress(raw, &got, idat, idat_n) == Z_OK && got == raw_n;
    for (int y = 0; ok && y < h; y++) ok = raw[(size_t)y * row] == 2;   /* Up */
    free(idat);
    free(raw);
    return ok;
}

static void check_shape(int w, int h)
{
    uint8_t *img = test_image(w, h, (uint32_t)(w * 31 + h));
    size_t n1 = 0, n3 = 0;
    uint8_t *one = io_encode_png_on(w, h, img, 1, &n1), *three = io_encode_png_on(w, h, img, 3, &n3);
    CHECK_MSG(one && three, "%dx%d: encoded", w, h);
    if (!one || !three) goto done;
    CHECK_MSG(n1 == n3 && !memcmp(one, three, n1), "%dx%d: the same bytes on 1 and 3 threads", w, h);
    CHECK_MSG(stream_ok(one, n1, w, h), "%dx%d: chunks and zlib stream", w, h);
    int dw = 0, dh = 0, dc = 0;
    uint8_t *back = stbi_load_from_memory(one, (int)n1, &dw, &dh, &dc, 4);
    CHECK_MSG(back && dw == w && dh == h && !memcmp(back, img, (size_t)w * h * 4),
              "%dx%d: stb_image decodes the same pixels", w, h);
    stbi_image_free(back);
done:
    free(one);
    free(three);
    free(img);
}

static void test_shapes(void)
{
    static const int shapes[][2] = {
        {1, 1}, {3, 2}, {7, 1000},       /* one band */
        {1024, 70},                      /* two bands, the second of 6 rows */
        {1024, 1024},                    /* 16 bands: more than threads */
        {2000, 333},                     /* bands of 32 rows, a short last one */
        {70000, 3},                      /* each row over a band's bytes: a band a row */
    };
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) check_shape(shapes[i][0], shapes[i][1]);
}

/* A flat 1024x1024 image (4 MiB) takes under 64 KiB: its rows are deflated, not stored. */
static void test_flat_image_small(void)
{
    uint8_t *img = calloc((size_t)1024 * 1024, 4);
    size_t n = 0;
    uint8_t *png = io_encode_png(1024, 1024, img, &n);
    CHECK_MSG(png && n < 65536, "flat 1024x1024: %zu bytes", n);
    free(png);
    free(img);
}

static void test_bad_sizes(void)
{
    uint8_t px[4] = {0};
    size_t n = 1;
    CHECK(!io_encode_png(0, 1, px, &n) && n == 0);
    CHECK(!io_encode_png(1, 0, px, &n) && n == 0);
    CHECK(!io_encode_png(-5, 1, px, &n) && n == 0);
    CHECK(!io_encode_png_on((1 << 28) + 1, 1, px, 1, &n) && n == 0);
}

int main(void)
{
    RUN(test_shapes);
    RUN(test_flat_image_small);
    RUN(test_bad_sizes);
    return check_finish();
}
