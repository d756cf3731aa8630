/* opencl.h — the accelerator backend: one OpenCL device for the whole process, the
 * kernels Shader stages bring (built once per source), device copies of read-only data
 * (a scene's BVH) and kernel launches over one packet's elements.
 *
 * Why a module of its own: the runtime (gramps/) knows nothing of devices and builds
 * without OpenCL; compose/ places stages (compose/device.c) and pipelines/ upload their
 * frame data, both through this header. Only accel/ includes CL/cl.h.
 *
 * Any OpenCL 1.2 platform the ICD loader (libOpenCL, Debian's ocl-icd) finds works: PoCL
 * on the CPU (the tests), the NVIDIA driver's ICD on a GPU. Kernels are built with
 * -cl-fp32-correctly-rounded-divide-sqrt and without fast-math options, and their
 * sources turn FMA contraction off, so float arithmetic rounds as the C kernels'.
 *
 * Thread safety: ac_open, ac_kernel_get and ac_upload may be called from any thread;
 * ac_run from several workers at once, each with its own worker index. */
#ifndef ACCEL_OPENCL_H
#define ACCEL_OPENCL_H

#include "gramps/gramps.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define AC_ERR_MAX 8192            /* room for a kernel's build log */
#define AC_MAX_BUFFERS 12          /* buffer arguments after a kernel's fixed ones */

/* The device every placed stage runs on: the first device of the first platform that
 * has one, or the one GRAMPS_OPENCL_DEVICE=P.D names (platform P, device D, as
 * ac_list numbers them). Opened on first use and kept until ac_close. NULL with a
 * message naming what was looked for when there is none (no ICD file under
 * /etc/OpenCL/vendors or OCL_ICD_VENDORS, or platforms without devices). */
typedef struct ac_device ac_device;
GR_API ac_device *ac_open(char err[AC_ERR_MAX]);
/* True the first time it is called in the process, false after: for a program that
 * falls back to the CPU to say so once, not once a frame. */
GR_API bool ac_first_fallback(void);
/* The opened device's name and platform, for messages ("" before ac_open). */
GR_API const char *ac_device_name(void);
/* Whether `bytes` more would fit in the device memory left (the device's global memory,
 * or GRAMPS_OPENCL_MAX_MEMORY); 0, or -1 with a message naming `what` and the limit. For
 * a check before a run of memory its launches will ask for. */
GR_API int ac_room(ac_device *d, size_t bytes, const char *what, char err[AC_ERR_MAX]);
/* Releases the device and everything made on it (programs, buffers must be freed
 * first). For the end of a program, so leak checkers see nothing. */
GR_API void ac_close(void);

/* Prints every platform and device found, numbered as GRAMPS_OPENCL_DEVICE takes them,
 * or why there is none. Returns the number of devices. */
GR_API int ac_list(FILE *out);

/* A kernel of a program built from `source` (OpenCL C; `file` names it in messages).
 * Programs are built once per source text and kept until ac_close. NULL with the
 * compiler's build log in err when the source does not build or has no such kernel. */
typedef struct ac_kernel ac_kernel;
GR_API ac_kernel *ac_kernel_get(ac_device *d, const char *source, const char *file,
                                const char *name, char err[AC_ERR_MAX]);

/* Read-only device memory holding a copy of host data (a BVH's nodes). */
typedef struct ac_buffer ac_buffer;
GR_API ac_buffer *ac_upload(ac_device *d, const void *data, size_t bytes, char err[AC_ERR_MAX]);
GR_API void ac_buffer_free(ac_buffer *b);
GR_API size_t ac_buffer_bytes(const ac_buffer *b);

/* Read-write device memory for packets that stay on the device (a device queue's
 * slots): `bytes` of it, uninitialised. */
GR_API ac_buffer *ac_alloc(ac_device *d, size_t bytes, char err[AC_ERR_MAX]);

/* Where a run of elements is: in host memory, or at `offset` in device memory. */
typedef struct ac_place {
    void *host;                    /* used when device is NULL */
    const ac_buffer *device;
    size_t offset;
} ac_place;

/* n elements of a launch: read from `from`; with an in-place kernel, the rewritten
 * elements go to `to` (copied within the device when it is device memory). With
 * `rest_only` only the bytes after the launch's gather_bytes of each element are
 * written from the host: the leading ones all come from the device (ac_launch.gather). */
typedef struct ac_span {
    ac_place from, to;
    uint32_t n;
    bool rest_only;
} ac_span;

/* Appending on the device: a kernel that pushes into a queue another device stage reads
 * writes its new elements' leading bytes into the queue's entries, a device buffer cut
 * into slots of per_slot entries. Each launch gets the slots the host claimed for it and
 * appends by an atomic counter, at most nslots * per_slot entries; an element that does
 * not fit is not appended (the kernel says so in its results and the host makes it, so
 * nothing overflows). Kernel arguments, after the buffers, per append: (global ENTRY
 * *entries, global append_ctl *ctl), append_ctl being {uint counter, limit, per_slot,
 * nslots, slots[AC_APPEND_SLOTS]} (counter 0 and limit nslots * per_slot at the start).
 * Position p of the append sequence is entry slots[p / per_slot] * per_slot +
 * p % per_slot. Which element gets which position depends on the device's timing; the
 * host decides the packets, in element order, so the images do not. */
#define AC_APPEND_SLOTS 64
#define AC_MAX_APPENDS 2
#define AC_NO_ENTRY 0xffffffffu
typedef struct ac_append {
    const ac_buffer *entries;      /* NULL: nowhere to append (limit 0) */
    uint32_t per_slot, nslots;
    uint32_t slots[AC_APPEND_SLOTS];
} ac_append;

/* One launch: work-item i gets element i of the spans' elements side by side
 * (element_bytes each). The kernel's arguments are (global elements, uint n, global
 * results, buffers...): `results` has result_bytes per element and comes back into
 * `results`; with `inplace` the elements go back to each span's `to`. Only the spans
 * in host memory cross between host and device. */
#define AC_MAX_SPANS 64
typedef struct ac_launch {
    ac_span spans[AC_MAX_SPANS];
    int nspans;
    size_t element_bytes;
    bool inplace;
    void *results;                 /* NULL when result_bytes is 0 */
    size_t result_bytes;
    /* The last spill_bytes of each result: on the device after every element's leading
     * part (the kernel writes element i's at n * (result_bytes - spill_bytes) + i *
     * spill_bytes), and not read back by ac_run (ac_read_spill). 0: none. */
    size_t spill_bytes;
    const ac_buffer *buffers[AC_MAX_BUFFERS];
    int nbuffers;
    ac_append appends[AC_MAX_APPENDS];
    int nappends;
    /* Out: each append's counter after the launch (positions asked for, those that did
     * not fit included), for the host to give back the slots no position reached. */
    uint32_t *appended;
    /* Elements whose leading gather_bytes a producer appended on the device: element i
     * (of the spans side by side) gets entry gather_index[i] of gather_entries before
     * the kernel runs, or keeps the host's bytes for AC_NO_ENTRY. NULL: no gather. */
    const ac_buffer *gather_entries;
    size_t gather_bytes;
    const uint32_t *gather_index;
} ac_launch;

/* Whether the device memory left holds one worker's launch buffers for `elements`
 * elements of element_bytes and results of result_bytes each, with a gather's entry
 * indices and `nappends` appends' counters (beyond what an earlier frame's launches
 * hold already): 0, or -1 with a message. Each worker that launches makes its own, when
 * it first launches. */
GR_API int ac_launch_room(ac_kernel *k, size_t elements, size_t element_bytes, size_t result_bytes,
                          int nappends, char err[AC_ERR_MAX]);

/* Runs the launch on worker `worker`'s command queue and waits for it; adds the launch,
 * its device time and the bytes copied to *work. 0, or -1 with a message. */
GR_API int ac_run(ac_kernel *k, unsigned worker, const ac_launch *l, gr_device_work *work,
                  char err[AC_ERR_MAX]);

/* After ac_run of `l` on the same worker: the spills (ac_launch.spill_bytes) of elements
 * first .. first + count - 1 into the end of their results in l->results; adds the bytes
 * copied to *work. 0, or -1 with a message. */
GR_API int ac_read_spill(ac_kernel *k, unsigned worker, const ac_launch *l, uint32_t first,
                         uint32_t count, gr_device_work *work, char err[AC_ERR_MAX]);

#endif
