/* pl_keep_freed_memory (pipelines/frame_memory.h): on glibc it must really change the
 * allocator, so that a frame's big buffers come from the heap the previous frame freed
 * instead of fresh mappings that page-fault again. Its first version compiled to a stub
 * (its glibc check came before any header defined __GLIBC__) and nothing noticed. */
#include "pipelines/frame_memory.h"
#include "tests/check.h"

#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

/* The sanitizers replace malloc, so glibc's settings and counters mean nothing there. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define OWN_MALLOC 0
#else
#define OWN_MALLOC 1
#endif

static void test_big_blocks_come_from_the_heap(void)
{
#if defined(__GLIBC__) && OWN_MALLOC
    CHECK(pl_keep_freed_memory() == 0);
    size_t mapped = mallinfo2().hblks;
    char *frame = malloc(24u << 20);          /* a 1024x1024 Blend buffer */
    CHECK(frame != NULL);
    CHECK_MSG(mallinfo2().hblks == mapped, "a 24 MB block was mmapped (%zu mappings, %zu before)",
              mallinfo2().hblks, mapped);
    free(frame);
#else
    printf("     skipped: not glibc's own malloc\n");
#endif
}

int main(void)
{
    RUN(test_big_blocks_come_from_the_heap);
    return check_finish();
}
