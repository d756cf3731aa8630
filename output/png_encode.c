/* png_encode.c — RGBA images as PNG (see png_encode.h), their bands of rows compressed
 * at once.
 *
 * A PNG's pixels are one zlib stream of filtered rows. The rows are cut into bands of
 * about PNG_BAND_BYTES (the cut depends on the width alone, so the file does not depend
 * on how many threads made it). Each band's rows are filtered with Up (each byte less
 * the one above it; the row above is the image's own, so no band waits for another) and
 * deflated as a raw stream of its own; the bands are dealt round-robin to the threads
 * (gr_parallel). Every band but the last ends with a sync flush (byte-aligned, not
 * final) and refers to nothing before it, so the bands' streams one after another are
 * one deflate stream: the zlib header goes before the first band, the Adler-32 of all
 * filtered rows (adler32_combine of the bands') after the last, each band in an IDAT
 * chunk of its own.
 *
 * stb_image_write, used before, tried all five filters on every row and deflated with a
 * compressor of its own on one thread: 53-93 ms a 1024x1024 frame on the development VM,
 * more than the frame took to render at 2 workers. Up and zlib's level 3 take 13-37 ms
 * on one thread for files 7-33% smaller (docs/performance.md). */
#include "output/png_encode.h"

#include "gramps/gramps.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define PNG_BAND_BYTES (256u * 1024u)
#define PNG_LEVEL 3
#define PNG_FILTER_UP 2
#define PNG_MAX_WIDTH (1 << 28)           /* a row's bytes fit zlib's 32-bit counts */
#ifndef PNG_FIRST_OUT                     /* a band's first output room; tests shrink it */
#define PNG_FIRST_OUT(bound) ((bound) + 64) /* + the sync flush's empty block */
#endif

typedef struct band {
    uint8_t *out;                         /* its raw deflate stream */
    size_t len;
    uLong adler;                          /* of its filtered rows */
    size_t filtered;                      /* how many bytes those are */
} band;

typedef struct png_job {
    const uint8_t *rgba;
    size_t row_bytes;                     /* 4 x width */
    int height, band_rows, nbands;
    band *bands;
    _Atomic(bool) failed;
} png_job;

/* Rows y0..y1-1, each as its filter byte and its bytes less the row above's. */
static size_t filter_up(const png_job *j, int y0, int y1, uint8_t *out)
{
    uint8_t *o = out;
    for (int y = y0; y < y1; y++) {
        const uint8_t *row = j->rgba + (size_t)y * j->row_bytes;
        const uint8_t *above = y ? row - j->row_bytes : NULL;
        *o++ = PNG_FILTER_UP;
        if (above)
            for (size_t i = 0; i < j->row_bytes; i++) o[i] = (uint8_t)(row[i] - above[i]);
        else
            memcpy(o, row, j->row_bytes);
        o += j->row_bytes;
    }
    return (size_t)(o - out);
}

/* Deflates in[0..n) into b->out, growing it as needed: to the end of the stream (last)
 * or to a byte boundary (sync flush). zlib's contract: a sync flush is complete once a
 * call returns with output room left; Z_FINISH is complete at Z_STREAM_END, and until
 * then each call fills the room. */
static bool deflate_band(z_stream *z, const uint8_t *in, size_t n, bool last, band *b)
{
    size_t cap = PNG_FIRST_OUT(deflateBound(z, (uLong)n));
    if (!(b->out = malloc(cap))) return false;
    z->next_in = (Bytef *)in;
    z->avail_in = (uInt)n;
    int flush = last ? Z_FINISH : Z_SYNC_FLUSH;
    for (;;) {
        z->next_out = b->out + b->len;
        z->avail_out = (uInt)(cap - b->len);
        int rc = deflate(z, flush);
        b->len = cap - z->avail_out;
        if (rc == Z_STREAM_END) return true;
        if (rc == Z_STREAM_ERROR) return false;
        if (z->avail_out > 0) return !last;
        uint8_t *grown = realloc(b->out, cap * 2);
        if (!grown) return false;
        b->out = grown;
        cap *= 2;
    }
}

static bool encode_band(png_job *j, z_stream *z, uint8_t *filtered, int k)
{
    int y0 = k * j->band_rows, y1 = y0 + j->band_rows < j->height ? y0 + j->band_rows : j->height;
    band *b = &j->bands[k];
    b->filtered = filter_up(j, y0, y1, filtered);
    b->adler = adler32(adler32(0, NULL, 0), filtered, (uInt)b->filtered);
    return deflateReset(z) == Z_OK &&
           deflate_band(z, filtered, b->filtered, k == j->nbands - 1, b);
}

/* Part i of n: bands i, i + n, ... */
static void encode_part(void *arg, unsigned i, unsigned n)
{
    png_job *j = arg;
    z_stream z = {0};
    uint8_t *filtered = malloc((size_t)j->band_rows * (j->row_bytes + 1));
    bool ready = filtered && deflateInit2(&z, PNG_LEVEL, Z_DEFLATED, -15, 8,
                                          Z_DEFAULT_STRATEGY) == Z_OK;
    bool ok = ready;
    for (int k = (int)i; ok && k < j->nbands && !atomic_load(&j->failed); k += (int)n)
        ok = encode_band(j, &z, filtered, k);
    if (ready) deflateEnd(&z);
    free(filtered);
    if (!ok) atomic_store(&j->failed, true);
}

/* ---- the file: signature, IHDR, an IDAT per band, IEND -------------------------------- */

typedef struct png_out {
    uint8_t *p;
    size_t n;
} png_out;

static void put32(png_out *o, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    memcpy(o->p + o->n, b, 4);
    o->n += 4;
}

static void put(png_out *o, const void *data, size_t n)
{
    if (n) memcpy(o->p + o->n, data, n);
    o->n += n;
}

/* A chunk whose data is head, body and tail one after another (each may be empty). */
static void chunk(png_out *o, const char type[4], const uint8_t *head, size_t nhead,
                  const uint8_t *body, size_t nbody, const uint8_t *tail, size_t ntail)
{
    put32(o, (uint32_t)(nhead + nbody + ntail));
    size_t start = o->n;
    put(o, type, 4);
    put(o, head, nhead);
    put(o, body, nbody);
    put(o, tail, ntail);
    put32(o, (uint32_t)crc32(crc32(0, NULL, 0), o->p + start, (uInt)(o->n - start)));
}

/* The zlib header: deflate with a 32 KiB window, "fast" compression level, check bits. */
static void zlib_header(uint8_t h[2])
{
    h[0] = 0x78;
    h[1] = 1 << 6;
    h[1] = (uint8_t)(h[1] + 31 - (h[0] * 256 + h[1]) % 31);
}

static uint8_t *assemble(const png_job *j, int width, size_t *size)
{
    static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    size_t total = sizeof signature + 3 * 12 + 13 + 2 + 4;
    for (int k = 0; k < j->nbands; k++) total += 12 + j->bands[k].len;
    png_out o = {malloc(total), 0};
    if (!o.p) return NULL;
    uint8_t ihdr[13] = {0}, zhead[2], ztail[4];
    png_out h = {ihdr, 0};
    put32(&h, (uint32_t)width);
    put32(&h, (uint32_t)j->height);
    ihdr[8] = 8;                          /* bits per channel */
    ihdr[9] = 6;                          /* RGBA; compression, filter, interlace 0 */
    zlib_header(zhead);
    uLong adler = j->bands[0].adler;
    for (int k = 1; k < j->nbands; k++)
        adler = adler32_combine(adler, j->bands[k].adler, (z_off_t)j->bands[k].filtered);
    png_out t = {ztail, 0};
    put32(&t, (uint32_t)adler);
    put(&o, signature, sizeof signature);
    chunk(&o, "IHDR", ihdr, sizeof ihdr, NULL, 0, NULL, 0);
    for (int k = 0; k < j->nbands; k++) {
        bool first = k == 0, last = k == j->nbands - 1;
        chunk(&o, "IDAT", zhead, first ? 2 : 0, j->bands[k].out, j->bands[k].len, ztail,
              last ? 4 : 0);
    }
    chunk(&o, "IEND", NULL, 0, NULL, 0, NULL, 0);
    *size = o.n;
    return o.p;
}

static unsigned parts_for(unsigned threads, int nbands)
{
    unsigned n = gr_parallel_parts(threads);
    return n < (unsigned)nbands ? n : (unsigned)nbands;
}

uint8_t *io_encode_png_on(int width, int height, const uint8_t *rgba, unsigned threads,
                          size_t *size)
{
    *size = 0;
    if (width <= 0 || width > PNG_MAX_WIDTH || height <= 0) return NULL;
    png_job j = {.rgba = rgba, .row_bytes = (size_t)width * 4, .height = height};
    size_t rows = PNG_BAND_BYTES / (j.row_bytes + 1);
    j.band_rows = rows < 1 ? 1 : rows > (size_t)height ? height : (int)rows;
    j.nbands = (height + j.band_rows - 1) / j.band_rows;
    j.bands = calloc((size_t)j.nbands, sizeof *j.bands);
    if (!j.bands) return NULL;
    atomic_init(&j.failed, false);
    gr_parallel(parts_for(threads, j.nbands), encode_part, &j);
    uint8_t *png = atomic_load(&j.failed) ? NULL : assemble(&j, width, size);
    for (int k = 0; k < j.nbands; k++) free(j.bands[k].out);
    free(j.bands);
    return png;
}

uint8_t *io_encode_png(int width, int height, const uint8_t *rgba, size_t *size)
{
    return io_encode_png_on(width, height, rgba, 0, size);
}
