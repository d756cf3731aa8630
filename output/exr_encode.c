/* exr_encode.c — OpenEXR through the core C API into a growing memory buffer (see
 * exr_encode.h). The library writes through write_fn at the offsets it chooses (the
 * chunk table is written last, before the chunks it points to), so the buffer grows to
 * the furthest byte written. */
#include "output/exr_encode.h"

#include <OpenEXR/openexr.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct mem_file { uint8_t *data; size_t size, cap; bool failed; } mem_file;

static int64_t write_mem(exr_const_context_t c, void *user, const void *buf, uint64_t sz,
                         uint64_t offset, exr_stream_error_func_ptr_t error_cb)
{
    (void)c;
    (void)error_cb;
    mem_file *m = user;
    size_t end = (size_t)(offset + sz);
    if (end > m->cap) {
        size_t cap = m->cap ? m->cap : 65536;
        while (cap < end) cap *= 2;
        uint8_t *p = realloc(m->data, cap);
        if (!p) { m->failed = true; return -1; }
        memset(p + m->cap, 0, cap - m->cap);
        m->data = p;
        m->cap = cap;
    }
    memcpy(m->data + offset, buf, (size_t)sz);
    if (end > m->size) m->size = end;
    return (int64_t)sz;
}

/* The part's header: size, no compression, the channels (the library sorts them). */
static exr_result_t write_header(exr_context_t c, int w, int h, const io_exr_channel *ch, int n)
{
    int part;
    exr_result_t r = exr_add_part(c, "image", EXR_STORAGE_SCANLINE, &part);
    if (!r) r = exr_initialize_required_attr_simple(c, part, w, h, EXR_COMPRESSION_NONE);
    for (int i = 0; !r && i < n; i++)
        r = exr_add_channel(c, part, ch[i].name, EXR_PIXEL_FLOAT, EXR_PERCEPTUALLY_LINEAR, 1, 1);
    return r ? r : exr_write_header(c);
}

/* Points the pipeline's channels (in the file's order) at row y of ours. */
static void point_channels(exr_encode_pipeline_t *e, int w, int y, const io_exr_channel *ch, int n)
{
    for (int k = 0; k < e->channel_count; k++) {
        exr_coding_channel_info_t *c = &e->channels[k];
        for (int i = 0; i < n; i++)
            if (!strcmp(c->channel_name, ch[i].name))
                c->encode_from_ptr = (const uint8_t *)(ch[i].data + (size_t)y * w);
        c->user_pixel_stride = sizeof(float);
        c->user_line_stride = (int32_t)(w * sizeof(float));
        c->user_bytes_per_element = sizeof(float);
        c->user_data_type = EXR_PIXEL_FLOAT;
    }
}

/* Every scanline chunk (one line each, uncompressed). */
static exr_result_t write_lines(exr_context_t c, int w, int h, const io_exr_channel *ch, int n)
{
    exr_encode_pipeline_t e = {0};
    exr_result_t r = EXR_ERR_SUCCESS;
    bool started = false;
    for (int y = 0; !r && y < h; y++) {
        exr_chunk_info_t ci;
        r = exr_write_scanline_chunk_info(c, 0, y, &ci);
        if (!r) r = started ? exr_encoding_update(c, 0, &ci, &e) : exr_encoding_initialize(c, 0, &ci, &e);
        if (!r) point_channels(&e, w, y, ch, n);
        if (!r && !started) r = exr_encoding_choose_default_routines(c, 0, &e);
        started = started || !r;
        if (!r) r = exr_encoding_run(c, 0, &e);
    }
    if (started) exr_encoding_destroy(c, &e);
    return r;
}

uint8_t *io_encode_exr(int width, int height, const io_exr_channel *ch, int n, size_t *size,
                       char *err, size_t errlen)
{
    mem_file m = {0};
    exr_context_initializer_t init = EXR_DEFAULT_CONTEXT_INITIALIZER;
    init.user_data = &m;
    init.write_fn = write_mem;
    exr_context_t c = NULL;
    exr_result_t r = n < 1 || n > IO_EXR_MAX_CHANNELS ? EXR_ERR_INVALID_ARGUMENT
                     : exr_start_write(&c, "memory", EXR_WRITE_FILE_DIRECTLY, &init);
    if (!r) r = write_header(c, width, height, ch, n);
    if (!r) r = write_lines(c, width, height, ch, n);
    exr_result_t fin = c ? exr_finish(&c) : EXR_ERR_SUCCESS;
    if (!r) r = fin;
    if (r || m.failed) {
        snprintf(err, errlen, "OpenEXR: %s", m.failed ? "out of memory" : exr_get_default_error_message(r));
        free(m.data);
        return NULL;
    }
    *size = m.size;
    return m.data;
}
