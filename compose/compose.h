/* compose.h — stages as a library, graphs as data (the thesis' grampsh, GStreamer's
 * registry and gst-launch): registered stage types with named ports and parameters,
 * registered packet formats, and graphs described as sections of settings that a graph
 * file, the command line (`--set`) or C code fill in, then instantiated as a GRAMPS
 * graph and run, as many times as wanted.
 *
 * Knows nothing of rendering: a stage type receives the program's frame object as a
 * `void *` (the renderers' is pl_frame, pipelines/frame.h). Sits on gramps/.
 *
 * Life of a graph:
 *   cp_registry_new + cp_register_* (built-ins, plugins: cp_plugin_load)
 *   cp_graph_new, cp_graph_load[_text] / cp_put (C), cp_put again (overrides)
 *   cp_instance_new (checks everything, builds the gr_graph) -> gr_launch/gr_wait
 *   (or cp_instance_run) -> cp_instance_finish (stages fold results into the frame)
 *   -> statistics from cp_instance_graph -> cp_instance_free; repeat per frame.
 *
 * Errors name the file and line (or "command line"), the section, and what was wrong;
 * every call returns a status, nothing aborts. */
#ifndef COMPOSE_H
#define COMPOSE_H

#include "gramps/gramps.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a struct below, or a built-in packet format a plugin may read or
 * write (pipelines/raster/packets.h, pipelines/raytrace/packets.h), changes layout; plugins built
 * against another version are refused. 2: rt.contributions carries floats (16 bytes an
 * element). 3: cp_stage_type.instanced is a cp_instancing. 4: stage types declare the
 * frame resources they use (cp_stage_type.resources). 5: raster.ztile-done names only the
 * depth layer. 6: cp_resource_type.clear_element; sh_ps_frags.linear; the fragment
 * packet's out.linear. */
#define CP_API_VERSION 6
#define CP_ERR_MAX 1024

/* The bounds of a graph file's settings (a value beyond one is refused, naming the
 * section, the setting and the range). */
#define CP_MAX_REPLICAS 4096               /* `replicate` of a queue or stage section */
#define CP_MAX_CAPACITY (1 << 24)          /* a queue's `capacity`, packets */
#define CP_MAX_SUBQUEUES (1 << 20)         /* a static queue set's `subqueues` */
#define CP_MAX_KEYS (1 << 24)              /* a dynamic queue set's `max_keys` */
#define CP_MAX_PRIORITY 1000000            /* a stage's `priority`, either sign */
#define CP_MAX_LOW_WATERMARK (1 << 24)     /* [graph] and [stage] `low_watermark`, tasks */
/* How big a graph description may be: sections (a stage or queue section stands for all
 * its replicas) and distinct keys in one section. Lookups scan a section's keys and the
 * graph's sections, so these bound a description's parse at about 10^7 comparisons
 * (a 200,000-key file took 95 s before they were limits). */
#define CP_MAX_SECTIONS 4096
#define CP_MAX_SECTION_KEYS 4096
/* What one stage type may declare (cp_register_stage refuses more, or a negative count). */
#define CP_MAX_PORTS 64
#define CP_MAX_PARAMS 256

typedef struct cp_registry cp_registry;
typedef struct cp_graph cp_graph;
typedef struct cp_instance cp_instance;
typedef struct cp_stage_init cp_stage_init;

/* ---- packet formats ---------------------------------------------------------------- */

/* A packet layout that ports declare and queues carry. Collections: header (first
 * uint32 = element count) + `elements` elements, where `elements` is the queue's
 * setting (default default_elements). Opaque: packet_bytes, or (packet_bytes 0) a
 * header + `elements` records the runtime never looks into. */
typedef struct cp_format {
    const char *name;
    const char *help;
    gr_packet_kind kind;
    size_t packet_bytes;               /* Opaque of fixed size */
    size_t header_bytes, element_bytes;/* Collection, or Opaque sized by `elements` */
    uint32_t default_elements, max_elements;
} cp_format;

/* ---- stage types ------------------------------------------------------------------- */

typedef struct cp_port {
    const char *name;
    gr_bind_mode mode;                 /* INPUT, OUTPUT, PUSH or INPLACE */
    const char *format;                /* a registered cp_format's name */
    const char *help;
} cp_port;

typedef enum cp_param_type { CP_INT, CP_FLOAT, CP_BOOL, CP_STRING } cp_param_type;

typedef struct cp_param {
    const char *name;
    cp_param_type type;
    const char *def;                   /* default value as written in a graph file */
    double min, max;                   /* numbers; min == max == 0: any */
    const char *help;
} cp_param;

/* ---- frame resources ---------------------------------------------------------------- */

/* A buffer or structure the frame holds for the stages (an image, a depth buffer, sums,
 * a BVH), registered by name like a packet format and made by the frame only when a
 * stage of the graph asks for it. The frame (pipelines/frame.h) makes, clears and frees
 * them; compose keeps the declarations so that a program can ask a graph what it will
 * need (cp_graph_resources) before making anything. */
typedef enum cp_extent {
    CP_PER_PIXEL,                      /* an element per pixel of the image */
    CP_PER_SAMPLE,                     /* an element per sample of every pixel */
    CP_PER_TILE,                       /* an element per framebuffer tile ([graph] tile) */
    CP_PER_SCENE,                      /* an element per triangle of the scene (a BVH) */
} cp_extent;

typedef enum cp_clear {
    CP_CLEAR_NONE,                     /* the stages initialise it themselves */
    CP_CLEAR_EACH_RUN,                 /* elements set to clear_value(frame) (32-bit
                                          elements) or clear_element (any size) over the
                                          frame's region before every run in which a stage
                                          reads or writes it without overwriting it whole;
                                          the rest once, when it is made */
    CP_CLEAR_KEEP,                     /* as NONE, and made once for all the runs of a kept
                                          frame (pipelines/kept_graph.h), whereas one with
                                          a create hook is otherwise made again before each
                                          run: for content that depends on nothing a frame
                                          changes (a stage's pool of working buffers) */
} cp_clear;

typedef struct cp_resource_type {
    const char *name;                  /* e.g. "depth" */
    const char *help;
    const char *element;               /* its element's format, for people: "f32 bits" */
    size_t element_bytes;              /* bytes per element: sizes and memory estimates */
    cp_extent extent;
    bool per_copy;                     /* one for each stage copy that uses it, private */
    cp_clear clear;
    uint32_t (*clear_value)(void *frame);   /* NULL: 0 */
    /* Makes and frees a resource that is not a plain array of elements (NULL: the frame
     * allocates extent x element_bytes); create gets the frame and the owning stage
     * copy's name ("" unless per_copy) and returns NULL when out of memory. */
    void *(*create)(void *frame, const char *owner);
    void (*destroy)(void *data);
    /* The cleared value of an element of any size (a multiple of 4 bytes): writes
     * element_bytes bytes at `element`. NULL: clear_value's 32 bits. */
    void (*clear_element)(void *frame, void *element);
} cp_resource_type;

/* How a stage type uses a resource (bits). */
typedef enum cp_access {
    CP_READS = 1,
    CP_WRITES = 2,                     /* some elements: it needs the resource cleared */
    CP_OVERWRITES = 4,                 /* every element of the frame's region, each run,
                                          before anything reads it: no clear needed */
    CP_WITH_HDR = 8,                   /* asked for only when the frame keeps linear colour
                                          (hdr-color): --max-memory counts it only then */
} cp_access;

typedef struct cp_resource_use {
    const char *name;                  /* a registered cp_resource_type's name */
    unsigned access;                   /* cp_access bits */
    const char *help;
} cp_resource_use;

/* ---- image-space stages ---------------------------------------------------------------- */

/* A stage that runs after the graph, once the program's image (or the part of it the
 * frame renders) is complete: per tile, tiles in parallel, each tile reading the tile
 * and `halo` pixels around it of the stage's input and writing the tile of its output.
 * Pixels are RGBA, 4 floats each, linear colour; rows of `stride` pixels. A stage with
 * halo 0 gets dst == src (in place: it reads only the pixel it writes); one with a halo
 * writes into another buffer, so a tile never reads what a neighbour tile wrote. The
 * stages of a graph run in the order their sections appear, each after the whole of the
 * previous one. Deterministic by construction: a pixel of the output is a function of
 * the input only. Address pixels through cp_image_src and cp_image_dst: when no stage of
 * the graph has a halo, the buffer holds the tile alone (ox, oy, stride say where). Knows nothing of rendering: the renderers' runner is
 * pipelines/image/image.h (docs/image-space.md). */
typedef struct cp_image_tile {
    const float *src;
    float *dst;
    size_t stride;                     /* pixels per row of src and dst */
    int ox, oy;                        /* the image pixel at src[0] and dst[0] (a buffer
                                          of the tile alone, or 0, 0: of the image) */
    int width, height;                 /* the whole image */
    int x0, y0, x1, y1;                /* the tile to write, [x0,x1) x [y0,y1) */
    int vx0, vy0, vx1, vy1;            /* where src holds this run's pixels: the image, or
                                          the rendered part of it; reads clamp to it */
} cp_image_tile;

/* The input pixel (x, y), coordinates clamped to where src is valid (so reading past
 * the image's border repeats its edge pixels). */
static inline const float *cp_image_src(const cp_image_tile *t, int x, int y)
{
    x = x < t->vx0 ? t->vx0 : x >= t->vx1 ? t->vx1 - 1 : x;
    y = y < t->vy0 ? t->vy0 : y >= t->vy1 ? t->vy1 - 1 : y;
    return t->src + 4 * ((size_t)(y - t->oy) * t->stride + (size_t)(x - t->ox));
}

/* The output pixel (x, y), inside the tile. */
static inline float *cp_image_dst(const cp_image_tile *t, int x, int y)
{
    return t->dst + 4 * ((size_t)(y - t->oy) * t->stride + (size_t)(x - t->ox));
}

/* How many instances a Thread stage runs. */
typedef enum cp_instancing {
    CP_ONE_INSTANCE = 0,               /* one (false) */
    CP_PER_SUBQUEUE = 1,               /* one per subqueue of its input set that gets a packet
                                          (true; gr_stage_desc.instanced) */
    CP_PER_EVERY_SUBQUEUE = 2,         /* one per subqueue, also those that get none, once
                                          the input has ended (gr_stage_desc.every_subqueue):
                                          for a stage that must finish each subqueue's share
                                          of the output */
} cp_instancing;

/* ---- kernels for an accelerator ---------------------------------------------------------- */

/* An OpenCL C kernel a Shader stage type brings beside its C function (docs/opencl.md).
 * A stage placed on the device (`device = opencl|auto`) runs each task as one launch:
 * work-item i of the input packet's n elements runs
 *     kernel void NAME(global ELEMENT *elements, uint n, global RESULT *results,
 *                      global const T0 *buffer0, ...)
 * reading element i (and, with `inplace`, rewriting it: the packet goes on with the
 * new elements, as the C function's in-place output would) and writing its result at
 * results[i] (result_bytes each). Then `emit` runs on the host with the packet and the
 * results, in element order, and makes the task's pushes and outputs there: push
 * coalescing, keys and in-place forwarding keep their meaning. The input must be a
 * Collection queue. */
struct ac_buffer;
#define CP_KERNEL_BUFFERS 12
#define CP_KERNEL_APPENDS 2
/* A push output whose new elements the kernel may make on the device (docs/opencl.md,
 * appends): when the queue's only reader runs on the device too, each launch appends
 * the leading `device_bytes` of the elements (at most `most(state)` per input element)
 * into the queue's device memory, and emit pushes each as a handle
 * (cp_device_appended) with the rest of the element filled on the host. */
typedef struct cp_kernel_append {
    int output;                        /* the stage's output slot, a PUSH port */
    size_t device_bytes;               /* at least 8 (a handle), at most the element */
    uint32_t (*most)(void *state);     /* NULL: one per input element */
} cp_kernel_append;
#define CP_KERNEL_RESULTS_MAX 16384    /* result bytes of one packet (a stack buffer) */
typedef struct cp_kernel {
    const char *file;                  /* where the source lives, named in messages */
    const char *source;                /* OpenCL C, static text (programs are cached by it) */
    const char *name;                  /* its kernel function */
    size_t result_bytes;               /* per element; 0: no results */
    /* The result bytes per element this instance's kernel writes, at most result_bytes
     * (e.g. only as many lights as the scene has); NULL: result_bytes */
    size_t (*results_of)(void *state);
    /* The last spill_bytes of each result (within result_bytes) come back to the host
     * only for the elements whose leading part says so (`spills`, from the first one to
     * the last one that does): what the host reads rarely, e.g. only where the kernel's
     * device appends did not fit. 0: every result comes back whole. */
    size_t spill_bytes;
    bool (*spills)(const void *result);
    bool inplace;                      /* the kernel rewrites the elements */
    /* emit reads only element fields that no kernel of the packet format rewrites (a
     * ray's depth, not its hit), so with `inplace` the rewritten elements may stay on
     * the device when the next stage runs there too (docs/opencl.md, device queues),
     * emit reading the host's copy from before the launch */
    bool resident_emit;
    /* The buffer arguments after the fixed ones (device copies the instance's create
     * made, e.g. from a frame resource); returns how many (at most CP_KERNEL_BUFFERS). */
    int (*buffers)(void *state, const struct ac_buffer *out[CP_KERNEL_BUFFERS]);
    /* NULL, or why this instance cannot run on the device (a feature the kernel lacks):
     * `auto` keeps it on the CPU, `opencl` is refused with this reason. NULL hook: it
     * always can. */
    const char *(*unsupported)(void *state);
    /* After each launch, on the host: the task's pushes and outputs; NULL: none. */
    void (*emit)(gr_ctx *c, void *state, void *packet, const void *results, uint32_t n);
    /* Pushes it may append on the device; the kernel takes two arguments per append after
     * its buffers (accel/opencl.h, ac_append), whether or not the queue is on the device. */
    cp_kernel_append appends[CP_KERNEL_APPENDS];
    int nappends;
    /* emit reads its input elements only from this byte on (0: all of them): a producer's
     * appended elements may come to this stage with their leading bytes on the device */
    size_t emit_reads_from;
    /* As the reader of an in-place producer's device queue (resident_emit above): emit
     * takes what it needs of the rewritten fields from the kernel's result, and the rest
     * from fields the producer leaves as they were, so this instance may read its input
     * from the device (the host's copy of the elements stale); NULL: only if `inplace`,
     * `resident_emit` or no emit */
    bool (*reads_resident)(void *state);
    /* For batches (gr_stage_desc.set_pushes): the keys of the queue set bound to push
     * output `output` that emit may push into for `packet`, each with at most how many
     * elements; how many it wrote (at most GR_SET_PUSHES_MAX) or GR_SET_PUSHES_UNKNOWN.
     * NULL: a batch estimates from the set's fullest subqueue */
    uint32_t (*set_pushes)(void *state, const void *packet, int output, gr_set_push *pushes);
} cp_kernel;

/* In a kernel stage's emit: makes `element` (of append `append`'s output format) a
 * handle of the element this task's launch appended at `position` of that append's
 * sequence; the caller fills the rest of the element and pushes it. False (element
 * untouched) when the position is AC_NO_ENTRY or the output's queue is on the host:
 * the caller makes the whole element. */
GR_API bool cp_device_appended(gr_ctx *c, int append, uint32_t position, void *element);

/* A stage's program sees its ports as gramps slots: inputs numbered in the order they
 * appear in `ports`, outputs (OUTPUT, PUSH, INPLACE) likewise. The composer binds every
 * port in that order, so an enum next to the port table is always the right slot. */
typedef struct cp_stage_type {
    const char *name;                  /* e.g. "raster.ps" */
    const char *help;
    gr_stage_kind kind;
    cp_instancing instanced;           /* Thread: see cp_instancing (false/true work too) */
    const cp_port *ports;
    int nports;
    const cp_param *params;
    int nparams;
    gr_stage_fn main;
    /* The instance's state (handed to main by gr_user), made before the run from its
     * parameters and the frame; NULL with a message in err fails the instantiation.
     * NULL create: the state is the frame itself. */
    void *(*create)(const cp_stage_init *init, char err[CP_ERR_MAX]);
    /* After a successful run, in graph order: fold results into the frame. */
    void (*finish)(void *state, void *frame);
    void (*destroy)(void *state);
    /* The frame resources its instances may ask the frame for (a type asks only for
     * what it declares; parameters may decide that it asks for less). */
    const cp_resource_use *resources;
    int nresources;
} cp_stage_type;

/* A Shader stage type with an OpenCL kernel beside its C function (cp_kernel): `stage`
 * is the type as any other (its main runs where it is placed on the CPU), registered
 * with cp_register_kernel_stage. */
typedef struct cp_kernel_stage_type {
    cp_stage_type stage;
    cp_kernel kernel;
} cp_kernel_stage_type;

/* An image-space stage type (see cp_image_tile): `stage` names it and gives its help,
 * parameters, create / finish / destroy hooks and resources, and has no ports and no
 * main (it is not a GRAMPS stage: the program runs it after the graph; finish runs after
 * its last tile). Registered with cp_register_image_stage. */
typedef struct cp_image_stage_type {
    cp_stage_type stage;
    int halo;                          /* pixels it reads on each side of a tile */
    /* The halo from an instance's state (a blur's radius); NULL: `halo`. */
    int (*halo_of)(const void *state);
    /* Writes tile t of the output (every pixel of it), reading only src within the
     * halo; called on several threads at once, for different tiles. */
    void (*tile)(void *state, const cp_image_tile *t);
} cp_image_stage_type;

/* What create gets. */
struct cp_stage_init {
    const char *name;                  /* the stage's name in the graph ("vs-3") */
    const cp_stage_type *type;
    void *frame;
    uint32_t replica, replicas;        /* position among a replicated stage's copies */
    const cp_instance *instance;
    bool on_device;                    /* placed on the OpenCL device: create makes what the
                                          kernel's buffers hook hands out */
};

/* The stage's parameter values (checked against the type's declaration). */
GR_API int64_t cp_int(const cp_stage_init *i, const char *param);
GR_API double cp_float(const cp_stage_init *i, const char *param);
GR_API bool cp_bool(const cp_stage_init *i, const char *param);
GR_API const char *cp_string(const cp_stage_init *i, const char *param);
/* A queue bound to one of the stage's ports: its packet size and elements per packet. */
GR_API size_t cp_port_packet_bytes(const cp_stage_init *i, const char *port);
GR_API uint32_t cp_port_elements(const cp_stage_init *i, const char *port);
/* The number of subqueues of the queue set bound to a port (0: not a set). */
GR_API uint32_t cp_port_subqueues(const cp_stage_init *i, const char *port);
/* The queues an output port sends to: 1, or the copies of a replicated queue the graph
 * binds with `QUEUE[*]` (the stage's last port only), as outputs port, port + 1, ... */
GR_API uint32_t cp_port_copies(const cp_stage_init *i, const char *port);

/* The resource `name` as stage i's type declares it: its registered type, and the
 * declared cp_access bits in *access. NULL when the type does not declare it. */
GR_API const cp_resource_type *cp_stage_resource(const cp_stage_init *i, const char *name,
                                          unsigned *access);
/* The cp_access bits every stage of the instance declares for resource `name` (0: none
 * does), for create hooks: rt.blend leaves the sums to a graph's tile cutters when one
 * overwrites them. */
GR_API unsigned cp_instance_resource_access(const cp_instance *in, const char *name);

/* ---- the registry ------------------------------------------------------------------ */

GR_API cp_registry *cp_registry_new(void);
GR_API void cp_registry_free(cp_registry *r);
/* Types and formats are referenced, not copied: they must outlive the registry (static
 * tables, or a plugin kept loaded by the registry). A name registered twice is an
 * error. 0 on success, -1 with a message in err. */
GR_API int cp_register_format(cp_registry *r, const cp_format *f, char err[CP_ERR_MAX]);
GR_API int cp_register_stage(cp_registry *r, const cp_stage_type *t, char err[CP_ERR_MAX]);
/* Resources before the stage types that use them; create and destroy come as a pair, a
 * resource cleared each run has 4-byte elements and no create. */
GR_API int cp_register_resource(cp_registry *r, const cp_resource_type *t, char err[CP_ERR_MAX]);
GR_API const cp_stage_type *cp_find_stage(const cp_registry *r, const char *name);
/* An image-space stage type: its name beside the other stage types'; checked for a tile
 * function, a halo >= 0, no ports and no main. */
GR_API int cp_register_image_stage(cp_registry *r, const cp_image_stage_type *t, char err[CP_ERR_MAX]);
/* The image-space type that t is the `stage` of, or NULL: t is a GRAMPS stage type. */
GR_API const cp_image_stage_type *cp_image_stage_of(const cp_registry *r, const cp_stage_type *t);
GR_API const cp_format *cp_find_format(const cp_registry *r, const char *name);
GR_API const cp_resource_type *cp_find_resource(const cp_registry *r, const char *name);
/* Every stage type with its kind, ports (mode, format), parameters and resources, then
 * every format and every resource. */
GR_API void cp_registry_print(const cp_registry *r, FILE *out);
/* A Shader type with a kernel: checked as cp_register_stage checks any type, and for a
 * source, a kernel name, a file and a buffers hook. */
GR_API int cp_register_kernel_stage(cp_registry *r, const cp_kernel_stage_type *t, char err[CP_ERR_MAX]);
/* The kernel stage type t brings, or NULL: it runs on the CPU only. */
GR_API const cp_kernel *cp_kernel_of(const cp_registry *r, const cp_stage_type *t);
/* Stage type `name` as cp_registry_print lists it, then the formats of its ports; -1
 * when the registry has no such type. */
GR_API int cp_registry_print_stage(const cp_registry *r, const char *name, FILE *out);

/* ---- plugins ----------------------------------------------------------------------- */

/* A plugin is a shared object exporting `gramps_plugin`, a cp_plugin whose api_version
 * is the CP_API_VERSION it was built with, and whose register_stages adds its formats
 * and stage types (see examples/plugins/). */
typedef struct cp_plugin {
    unsigned api_version;
    const char *name;
    int (*register_stages)(cp_registry *r, char err[CP_ERR_MAX]);
} cp_plugin;

#define CP_PLUGIN_SYMBOL "gramps_plugin"

/* dlopens a plugin (kept open until the registry is freed) and registers it. `name` is
 * a path when it holds a '/', else a file name looked for in the registry's plugin path
 * (the first directory that has it). */
GR_API int cp_plugin_load(cp_registry *r, const char *name, char err[CP_ERR_MAX]);

/* Appends directories (a ':'-separated list; empty entries skipped) to the plugin path.
 * The path starts empty: programs add theirs (gramps-render and gramps-run:
 * GRAMPS_PLUGIN_PATH, then the plugins/ directory beside their bin/). */
GR_API int cp_plugin_path_add(cp_registry *r, const char *dirs, char err[CP_ERR_MAX]);

/* ---- graph descriptions ------------------------------------------------------------ */

/* A graph is sections of `key = value` settings:
 *   [graph]          name, plugins (paths, comma-separated), low_watermark, and any
 *                    variable that values elsewhere use as $name
 *   [queue NAME]     format, capacity, elements, ordered, subqueues, dynamic_keys,
 *                    max_keys, replicate
 *   [stage NAME]     type, replicate, priority, fifo (a Shader's tasks oldest first),
 *                    low_watermark (the stage's own, gr_stage_desc.low_watermark),
 *                    coalesce_input, recirculate, reduce_per_key, ticket_order (a Shader's
 *                    gr_stage_desc flags of those names),
 *                    device (cpu, opencl or auto: where a type with a kernel runs;
 *                    [graph] device sets it for every such stage), PORT = QUEUE for
 *                    every port, and the type's parameters
 * A value `$name` is the [graph] setting `name`, or else a variable the program
 * supplies (cp_vars). A replicated stage or queue NAME becomes NAME-0 .. NAME-(n-1); a
 * replicated stage's port bound to a queue replicated as often binds copy k to copy k,
 * to a plain queue binds every copy to it. */
GR_API cp_graph *cp_graph_new(const cp_registry *r);
GR_API void cp_graph_free(cp_graph *g);
/* The registry the graph was made for. */
GR_API const cp_registry *cp_graph_registry(const cp_graph *g);

/* Reads a graph file (INI syntax; `#` and `;` start comments). Plugin paths with a
 * '/' are relative to the file. */
GR_API int cp_graph_load(cp_graph *g, const char *path, char err[CP_ERR_MAX]);
/* The same from text; `origin` names it in messages. */
GR_API int cp_graph_load_text(cp_graph *g, const char *text, const char *origin,
                       char err[CP_ERR_MAX]);

/* ---- layers: a graph file over other graphs --------------------------------------- */

/* The graphs a program knows by name (gramps-render: the built-in graphs,
 * pl_builtin_graph): text(ctx, name) is one's text, or NULL. */
typedef struct cp_named_graphs {
    const char *(*text)(void *ctx, const char *name);
    void *ctx;
} cp_named_graphs;

/* Loads the graph `name` (path NULL; one of `named`) or the file `path` over what g
 * holds: first its [graph] `base` (a name, or a file: a value with a '/' or ending in
 * .graph, relative to this file), with the base's own base before it, unless g holds
 * that graph already; then its sections, which add to and override what is there; then
 * its edits, settings of a stage or queue section that change the graph below:
 *   after = STAGE[.PORT]   (a new stage) inserts it into the edge that leaves STAGE's
 *                          output PORT (the one output STAGE binds when PORT is left
 *                          out): STAGE's port then binds a new queue NAME-in, a copy of
 *                          the edge's queue without its subqueues, which the new stage
 *                          reads through its one input of that format, and its one
 *                          output of that format binds the edge's queue
 *   remove = true          removes the stage or queue; a stage with one input and one
 *                          output of the same format is spliced out (what wrote its
 *                          input queue writes its output queue; the input queue goes)
 * Each file's `plugins` are loaded into `plugins` (NULL: none are) as it is read, so
 * its edits may name their types. A graph is loaded once; a base that g does not hold
 * over a g that holds another graph, a cycle of bases, an unknown base, and an edit
 * naming an unknown stage, port or type are refused with the file and line. 0 or -1. */
GR_API int cp_graph_layer(cp_graph *g, cp_registry *plugins, const cp_named_graphs *named,
                          const char *name, const char *path, char err[CP_ERR_MAX]);

/* A one-line edit (gst-launch's pipeline strings are the model), as a file layered over
 * g would make it:
 *   TYPE [name=NAME] [after|before STAGE[.PORT]] [KEY=VALUE]...   adds stage NAME (else
 *                                  TYPE's last dotted part) with those settings
 *   remove NAME                    removes stage or queue NAME
 * e.g. "fog after ps start=0.3", "image.fxaa span=4", "remove tonemap". 0, or -1 with a
 * message quoting the line. */
GR_API int cp_graph_edit_line(cp_graph *g, const char *line, char err[CP_ERR_MAX]);

/* Sets one value, as a graph file line would (a later value replaces an earlier one).
 * section: "graph", "queue NAME" or "stage NAME"; creates the section if new. `where`
 * names the source in later messages ("command line"). */
GR_API int cp_put(cp_graph *g, const char *section, const char *key, const char *value,
           const char *where, char err[CP_ERR_MAX]);
/* `--set SECTION.KEY=VALUE`: SECTION is "graph" or the name of an existing stage or
 * queue. */
GR_API int cp_set(cp_graph *g, const char *assignment, char err[CP_ERR_MAX]);
/* Removes a stage or queue section (to replace a stage: put a new "type"). */
GR_API int cp_remove(cp_graph *g, const char *section, char err[CP_ERR_MAX]);

/* Loads the plugins the [graph] section names (`plugins = a.so, b.so`) into r, each
 * once: a name with a '/' is relative to the graph file, a bare name is looked for in
 * the plugin path (cp_plugin_path_add). Errors name the setting's file and line. */
GR_API int cp_graph_load_plugins(const cp_graph *g, cp_registry *r, char err[CP_ERR_MAX]);

/* The description as text, every section and setting in order (malloc'd; NULL when out
 * of memory): equal texts, equal graphs. What a program keeping a graph's instance
 * across frames compares to see whether the graph changed. */
GR_API char *cp_graph_text(const cp_graph *g);

/* A [graph] setting after overrides, or NULL. */
GR_API const char *cp_graph_value(const cp_graph *g, const char *key);

/* Variables the program supplies (frame size, worker count, ...), asked for `$name`
 * values that the [graph] section does not set. Returns the value's text or NULL. */
typedef const char *(*cp_var_fn)(void *ctx, const char *name, char buf[64]);
typedef struct cp_vars { cp_var_fn get; void *ctx; } cp_vars;

/* A [graph] setting after overrides with its $variables resolved (through the [graph]
 * section, then vars) into buf; NULL when it is not set or a variable is unknown. */
GR_API const char *cp_graph_resolved(const cp_graph *g, const cp_vars *vars, const char *key,
                                     char buf[256]);

/* What a graph's stages may ask the frame for: one entry per resource type a stage
 * type of the graph declares, with every declaring stage's access bits and how many
 * stage copies write it (replicas counted, `replicate` resolved with vars; with vars
 * NULL every stage counts once): a per-copy resource has that many. */
typedef struct cp_resource_need {
    const cp_resource_type *type;
    unsigned access;
    unsigned copies;
} cp_resource_need;
#define CP_MAX_RESOURCES 32
/* The number of entries in needs[CP_MAX_RESOURCES], or -1 with a message (a `replicate`
 * that is not a number). Stages of unknown types are skipped: cp_instance_new names
 * them. */
GR_API int cp_graph_resources(const cp_graph *g, const cp_vars *vars,
                       cp_resource_need needs[CP_MAX_RESOURCES], char err[CP_ERR_MAX]);
/* The entry for resource `name` in needs[0..n), or NULL: the graph does not use it. */
GR_API const cp_resource_need *cp_resource_needed(const cp_resource_need *needs, int n,
                                           const char *name);

/* ---- instances: one run of a graph ------------------------------------------------- */

/* Checks the description (types, parameters, formats of every binding) and builds the
 * GRAMPS graph with the stages' states made for `frame`. NULL with a message. */
GR_API cp_instance *cp_instance_new(cp_graph *g, void *frame, const cp_vars *vars,
                             char err[CP_ERR_MAX]);
GR_API gr_graph *cp_instance_graph(const cp_instance *in);
/* Hands the GRAMPS graph (and its statistics) to the caller, who destroys it; the
 * instance no longer owns it. */
GR_API gr_graph *cp_instance_take_graph(cp_instance *in);
/* The [graph] launch settings (low_watermark) over `base` (workers etc.). */
GR_API gr_launch_opts cp_instance_launch_opts(const cp_instance *in, const gr_launch_opts *base);
/* Launches, waits and runs the finish hooks; GR_OK or the run's error (message in err).
 * After a run that succeeded the next call relaunches the same graph (gr_relaunch: the
 * launch settings of the first run; `base` must be the same). */
GR_API gr_status cp_instance_run(cp_instance *in, const gr_launch_opts *base, char err[CP_ERR_MAX]);
/* For the next run of an instance that ran: every stage's state destroyed and made
 * again by its create hook from the frame as the program left it (a new camera, say),
 * so that a run of the kept graph computes what a new instance would. -1 (message in
 * err; the instance is then only for cp_instance_free) when a create hook fails, when
 * the instance has not run, or when it is not renewable. */
GR_API int cp_instance_renew(cp_instance *in, char err[CP_ERR_MAX]);
/* Can its stages' states be made again for another run? Not when a stage runs on a
 * device (its bindings there are made once) or is placed `device = auto` (each new
 * instance chooses its side from the runs before: a kept one would not). */
GR_API bool cp_instance_renewable(const cp_instance *in);
/* The image-space stages of the instance in the order they run (their sections'
 * order), with their states and halos: *passes points into the instance. */
typedef struct cp_image_pass {
    const char *name;
    const cp_image_stage_type *type;
    void *state;
    int halo;
} cp_image_pass;
GR_API int cp_instance_image_passes(const cp_instance *in, const cp_image_pass **passes);

/* The state create made for stage NAME (replicas: NAME-k), or NULL. */
GR_API void *cp_instance_state(const cp_instance *in, const char *stage);
GR_API void cp_instance_free(cp_instance *in);

#ifdef __cplusplus
}
#endif
#endif
