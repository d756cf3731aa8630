/* libFuzzer target for graph files (compose/graph_file.c, compose/instance.c and the
 * built-in stages behind them): see fuzz_graph.h. */
#include "tests/fuzz/fuzz_graph.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    char err[CP_ERR_MAX];
    fuzz_graph_run((const char *)data, size, err);
    return 0;
}
