/* frame_memory.h — keeping the memory one frame frees for the next.
 *
 * Every plr_render / plrt_render call builds a graph with its own packet pools, fiber
 * stacks and frame buffers (depth, tiles, Blend's 24 bytes per pixel) and frees them
 * at the end. With glibc's defaults, blocks that large go back to the kernel, and the
 * next frame pays one page fault per 4 KiB page to get them again: measured on the
 * development VM at ~16 us a fault, 1,200-2,900 faults and 20-30 ms of system time per
 * 1024x1024 frame, a fifth to a third of a raster frame. */
#ifndef PIPELINES_FRAME_MEMORY_H
#define PIPELINES_FRAME_MEMORY_H

/* Makes the C library keep freed blocks (up to its largest heap block, 32 MiB) in the
 * process for reuse instead of unmapping or trimming them. It changes the whole
 * process's allocator, so it is a program's decision: gramps-render and the benchmarks
 * call it once at start; a program embedding the renderers can do the same. Returns 0,
 * or -1 where the C library offers no such setting (then nothing changes). */
int pl_keep_freed_memory(void);

#endif
