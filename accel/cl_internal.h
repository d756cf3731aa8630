/* cl_internal.h — what accel/'s files share: the device record, its per-worker command
 * queues, and the kernels and their per-worker launch state. */
#ifndef ACCEL_CL_INTERNAL_H
#define ACCEL_CL_INTERNAL_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include "accel/opencl.h"

#include <pthread.h>

/* What one worker needs to launch one kernel: its own kernel object (arguments are
 * per kernel object, so two workers never share one) and device memory for one
 * packet's elements and results, grown as needed. */
typedef struct ac_slot {
    cl_kernel kernel;
    cl_mem elements, results;
    size_t elements_cap, results_cap;
    cl_mem index, ctl[AC_MAX_APPENDS];     /* cl_append.c: a gather's entries, appends' counters */
    size_t index_cap, ctl_cap[AC_MAX_APPENDS];
} ac_slot;

struct ac_kernel {
    ac_kernel *next;                   /* the device's list */
    const char *source;                /* identity: the stage type's static text */
    char name[128];
    char file[256];
    cl_program program;
    ac_slot *slots[GR_MAX_WORKERS];    /* made by each worker on its first launch */
};

struct ac_device {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    char name[600];                    /* "DEVICE (PLATFORM)" */
    pthread_mutex_t lock;              /* the kernel list, the queues' creation */
    ac_kernel *kernels;
    cl_command_queue queues[GR_MAX_WORKERS];   /* one per worker, in order, profiled */
    pthread_mutex_t mem_lock;          /* mem_used */
    size_t mem_limit, mem_used;        /* cl_memory.c: the budget and the buffers' bytes */
    char mem_limit_from[160];          /* what set the limit, for messages */
};

struct ac_buffer {
    cl_mem mem;
    size_t bytes;
};

/* The process's device once opened, else NULL. */
ac_device *ac_device_opened(void);
/* Worker w's command queue, made on first use. NULL with a message. */
cl_command_queue ac_queue(ac_device *d, unsigned w, char err[AC_ERR_MAX]);
/* An OpenCL error code's name ("CL_OUT_OF_RESOURCES"). */
const char *ac_error_name(cl_int e);
/* The memory budget (cl_memory.c): read when the device opens (-1 with a message for a
 * bad GRAMPS_OPENCL_MAX_MEMORY). ac_reserve takes bytes from it for a buffer (`what`
 * names it in the message when they do not fit), ac_unreserve gives them back. */
int ac_memory_init(ac_device *d, char err[AC_ERR_MAX]);
int ac_reserve(ac_device *d, size_t bytes, const char *what, char err[AC_ERR_MAX]);
void ac_unreserve(ac_device *d, size_t bytes);
/* Device memory of at least `bytes` in *mem, kept between launches (cl_run.c). */
int ac_ensure(ac_device *d, cl_mem *mem, size_t *cap, size_t bytes, char err[AC_ERR_MAX]);
/* Worker w's launch state of kernel k, made on first use (cl_run.c). */
ac_slot *ac_slot_of(ac_kernel *k, unsigned w, char err[AC_ERR_MAX]);
/* cl_append.c: the appends' arguments after the buffers (their counters written), and the
 * gather of appended elements into the launch buffer before the kernel runs. */
/* 0, or -1 with a message. */
int ac_append_args(ac_device *d, cl_command_queue q, ac_slot *s, const ac_launch *l,
                   gr_device_work *work, char err[AC_ERR_MAX]);
/* The appends' counters read back into l->appended (not blocking: clFinish after). */
cl_int ac_append_counts(cl_command_queue q, ac_slot *s, const ac_launch *l, gr_device_work *work);
int ac_gather_enqueue(ac_device *d, cl_command_queue q, unsigned worker, ac_slot *s,
                      const ac_launch *l, cl_uint n, cl_event *ev, gr_device_work *work,
                      char err[AC_ERR_MAX]);
/* cl_results.c: the launch's results (their leading parts where it has spills) read
 * back into l->results, not blocking. */
cl_int ac_results_enqueue(cl_command_queue q, ac_slot *s, const ac_launch *l, size_t n,
                          gr_device_work *work);
/* Frees every kernel (ac_close). */
void ac_kernels_free(ac_device *d);

#endif
