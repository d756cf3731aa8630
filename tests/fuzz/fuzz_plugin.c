/* libFuzzer target for hostile plugin stages: packets corrupted between two built-in
 * stages of a rendering graph (see fuzz_plugin.h). */
#include "tests/fuzz/fuzz_plugin.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    char err[CP_ERR_MAX] = "";
    fuzz_plugin_run(data, size, err);
    return 0;
}
