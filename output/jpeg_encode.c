/* jpeg_encode.c — JPEG through libjpeg's compressor into memory (see jpeg_encode.h).
 * libjpeg reports errors by calling error_exit, which must not return: ours jumps back
 * to io_encode_jpeg, which frees what was made and returns NULL, where the default
 * handler would exit the program. */
#include "output/jpeg_encode.h"

#include <stdio.h>              /* before jpeglib.h, which uses FILE */
#include <jpeglib.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

enum { JPEG_QUALITY = 95, JPEG_MAX_SIDE = 65500 };

typedef struct jpeg_failure {
    struct jpeg_error_mgr mgr;    /* first: libjpeg passes &mgr as the common error pointer */
    jmp_buf back;
} jpeg_failure;

static void jump_back(j_common_ptr c)
{
    longjmp(((jpeg_failure *)c->err)->back, 1);
}

static void quiet(j_common_ptr c) { (void)c; }

static void set_up(struct jpeg_compress_struct *c, int width, int height)
{
    c->image_width = (JDIMENSION)width;
    c->image_height = (JDIMENSION)height;
    c->input_components = 3;
    c->in_color_space = JCS_RGB;
    jpeg_set_defaults(c);
    jpeg_set_quality(c, JPEG_QUALITY, TRUE);
    for (int i = 0; i < c->num_components; i++)      /* 4:4:4: no chroma subsampling */
        c->comp_info[i].h_samp_factor = c->comp_info[i].v_samp_factor = 1;
}

/* Each RGBA row as RGB through one row buffer. */
static void write_rows(struct jpeg_compress_struct *c, const uint8_t *rgba, uint8_t *row)
{
    while (c->next_scanline < c->image_height) {
        const uint8_t *src = rgba + (size_t)c->next_scanline * c->image_width * 4;
        for (JDIMENSION x = 0; x < c->image_width; x++) memcpy(row + 3 * x, src + 4 * x, 3);
        JSAMPROW rows[1] = {row};
        jpeg_write_scanlines(c, rows, 1);
    }
}

/* What the encoder writes outside io_encode_jpeg's automatic variables, which a longjmp
 * would leave indeterminate had they changed after setjmp. */
typedef struct jpeg_out {
    unsigned char *buf;           /* jpeg_mem_dest's buffer (malloc'ed by libjpeg) */
    unsigned long len;
    uint8_t *row;                 /* one row as RGB */
} jpeg_out;

static uint8_t *finish(jpeg_out *o, size_t *size)
{
    uint8_t *buf = o->buf;
    if (buf) *size = o->len;
    free(o->row);
    free(o);
    return buf;
}

uint8_t *io_encode_jpeg(int width, int height, const uint8_t *rgba, size_t *size)
{
    if (width < 1 || height < 1 || width > JPEG_MAX_SIDE || height > JPEG_MAX_SIDE) return NULL;
    jpeg_out *o = calloc(1, sizeof *o);
    if (o) o->row = malloc((size_t)width * 3);
    if (!o || !o->row) return o ? finish(o, size) : NULL;
    struct jpeg_compress_struct c;
    jpeg_failure fail;
    c.err = jpeg_std_error(&fail.mgr);
    fail.mgr.error_exit = jump_back;
    fail.mgr.output_message = quiet;
    jpeg_create_compress(&c);
    if (setjmp(fail.back)) {
        jpeg_destroy_compress(&c);
        free(o->buf);
        o->buf = NULL;
        return finish(o, size);
    }
    jpeg_mem_dest(&c, &o->buf, &o->len);
    set_up(&c, width, height);
    jpeg_start_compress(&c, TRUE);
    write_rows(&c, rgba, o->row);
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    return finish(o, size);
}
