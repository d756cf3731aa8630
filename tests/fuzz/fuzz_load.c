/* libFuzzer target for the scene loaders and both renderers: the input is written to a
 * temporary file whose suffix (FUZZ_SUFFIX: .scene, .obj, .ply or .gltf) picks the
 * parser; a scene that loads is flattened and rendered by the raster and the ray-tracing
 * graphs (16x16, one worker). A crash, hang, leak or sanitizer report is a bug; error
 * returns are the expected outcome for most inputs. tests/render/test_fuzz_corpus.c
 * replays the corpora and every saved crash the same way on each `make test`. */
#include "tests/fuzz/fuzz_render.h"

#include <stdio.h>
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
    fuzz_load_and_render(path, err);
    unlink(path);
    return 0;
}
