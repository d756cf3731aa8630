/* libFuzzer target for the scene loaders: the input is written to a temporary file whose
 * suffix (FUZZ_SUFFIX: .scene or .obj) picks the parser, then loaded and flattened. A
 * crash, leak or sanitizer report is a bug; error returns are the expected outcome. */
#include "scenes/scene.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef FUZZ_SUFFIX
#define FUZZ_SUFFIX ".scene"
#endif

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/gramps-fuzz-%d" FUZZ_SUFFIX, (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    char err[SC_ERR_MAX];
    sc_scene *s;
    if (sc_load(path, &s, err) == 0) {
        sc_geometry g;
        if (sc_flatten(s, &g, err) == 0) sc_geometry_free(&g);
        sc_free(s);
    }
    unlink(path);
    return 0;
}
