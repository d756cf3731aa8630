/* float_aovs.c — colour (the sinks' linear colour, or decoded), depth and normal (the
 * graph's "surface") as float planes (see the header). */
#include "tools/common/float_aovs.h"

#include "pipelines/image/image.h"

#include <stdlib.h>

static const char *const names[FA_CHANNELS] = {"R", "G", "B", "A", "Z", "N.X", "N.Y", "N.Z"};

/* The sinks' linear colour, as it is: values above 1 kept. */
static void split_colour(const float *hdr, size_t n, float *plane[4])
{
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 4; c++) plane[c][i] = hdr[4 * i + c];
}

static void decode_colour(const uint8_t *rgba, size_t n, float *plane[4])
{
    for (size_t i = 0; i < n; i++) {
        for (int c = 0; c < 3; c++) plane[c][i] = pli_decode_srgb8(rgba[4 * i + c]);
        plane[3][i] = rgba[4 * i + 3] / 255.0f;
    }
}

static void split_surface(const pl_surface *s, size_t n, float *plane[4])
{
    for (size_t i = 0; i < n; i++) {
        plane[0][i] = s[i].z;
        for (int c = 0; c < 3; c++) plane[1 + c][i] = s[i].n[c];
    }
}

int fa_make(int width, int height, const uint8_t *rgba, const float *hdr, const pl_surface *surface,
            io_exr_channel ch[FA_CHANNELS])
{
    const size_t n = (size_t)width * height;
    const int used = surface ? FA_CHANNELS : 4;
    float *plane[FA_CHANNELS];
    bool ok = true;
    for (int c = 0; c < FA_CHANNELS; c++) {
        plane[c] = c < used ? malloc(n * sizeof(float)) : NULL;
        ch[c] = (io_exr_channel){names[c], plane[c]};
        ok = ok && (c >= used || plane[c]);
    }
    if (!ok) return 0;
    if (hdr) split_colour(hdr, n, plane);
    else decode_colour(rgba, n, plane);
    if (surface) split_surface(surface, n, plane + 4);
    return used;
}

void fa_free(io_exr_channel ch[FA_CHANNELS])
{
    for (int c = 0; c < FA_CHANNELS; c++) free((void *)ch[c].data);
}
