/* internal.h — what the compose/ sources share: the registry's tables, a graph
 * description's sections, and the text helpers.
 *
 * A description is a list of sections ("graph", "queue NAME", "stage NAME"), each a
 * list of settings that remember where they came from (file:line or "command line"),
 * so that any later check can name the line at fault. */
#ifndef COMPOSE_INTERNAL_H
#define COMPOSE_INTERNAL_H

#include "compose/compose.h"

#include <stdarg.h>
#include <stdio.h>

#define GR_NAME_MAX_CP 64              /* longest stage or queue name, as gramps keeps them */

typedef struct cp_list { void **items; int n, cap; } cp_list;

/* Where stage type t came from, for crash reports and the statistics: "type T, built in"
 * or "type T, plugin FILE", the shared object that holds t's main unless it is the one
 * holding this code (dladdr). cp_stage_origin: as found when t was registered in r (a
 * graph is built every frame; dladdr is slow), NULL if t is not r's. */
void cp_origin_of(const cp_stage_type *t, char out[GR_ORIGIN_MAX]);
const char *cp_stage_origin(const cp_registry *r, const cp_stage_type *t);

struct cp_registry {
    cp_list formats, stages;           /* const cp_format *, const cp_stage_type * */
    cp_list origins;                   /* char *, stages[i]'s "type T, built in|plugin F" */
    cp_list images;                    /* const cp_image_stage_type *, also in stages */
    cp_list kernels;                   /* const cp_kernel_stage_type *, also in stages */
    cp_list resources;                 /* const cp_resource_type * */
    cp_list plugins;                   /* dlopen handles */
    cp_list plugin_dirs;               /* char *, searched in order for bare plugin names */
};

typedef struct cp_setting {
    char *key, *value;
    char *where;                       /* "file:line" or "command line" */
} cp_setting;

typedef enum cp_section_kind { CP_SEC_GRAPH, CP_SEC_QUEUE, CP_SEC_STAGE } cp_section_kind;

typedef struct cp_section {
    cp_section_kind kind;
    char *name;                        /* NULL for [graph] */
    char *where;                       /* where it was opened */
    cp_setting *settings;
    int n, cap;
} cp_section;

struct cp_graph {
    const cp_registry *r;
    cp_section *sections;
    int n, cap;
    char *base_dir;                    /* of the last graph file read (plugin paths) */
    cp_list layers;                    /* char *: the graphs loaded by cp_graph_layer, each
                                          by its name or its file's real path */
};

/* description.c: drops a section's setting of `key`, if any. */
void cp_unset(cp_section *s, const char *key);

/* graph_file.c: a graph file's text (malloc'd), or NULL with a message naming it. */
char *cp_read_graph_file(const char *path, char err[CP_ERR_MAX]);

/* edits.c: applies the `after` and `remove` settings of the layer just loaded into g
 * (docs/graph-files.md); sections from first_new on are those the layer opened. */
int cp_apply_edits(cp_graph *g, int first_new, char err[CP_ERR_MAX]);

/* list.c */
int cp_list_add(cp_list *l, void *item);
void cp_list_free(cp_list *l);

/* Formats a message into err (always NUL-terminated); returns -1. */
int cp_fail(char err[CP_ERR_MAX], const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *cp_strdup(const char *s);

/* resources.c: a stage type's resource declarations checked against the registry, and
 * the listing lines of cp_registry_print. */
int cp_check_resource_uses(const cp_registry *r, const cp_stage_type *t, char err[CP_ERR_MAX]);
void cp_print_resource_uses(const cp_stage_type *t, FILE *out);
void cp_print_resource(const cp_resource_type *t, FILE *out);

/* instance.c */
const cp_registry *cp_instance_registry(const cp_instance *in);

/* description.c */
cp_section *cp_section_find(const cp_graph *g, cp_section_kind kind, const char *name);
const cp_setting *cp_setting_find(const cp_section *s, const char *key);
const char *cp_section_label(const cp_section *s, char buf[160]);   /* "stage 'ps'" */

/* Parses "graph", "queue NAME" or "stage NAME"; false if malformed. */
bool cp_parse_section(const char *text, cp_section_kind *kind, char *name, size_t name_max);

/* The value of a setting with $variables resolved; NULL with a message naming the
 * setting's line when a variable is unknown or refers to itself. */
const char *cp_resolve(const cp_graph *g, const cp_vars *vars, const cp_setting *s,
                       char buf[256], char err[CP_ERR_MAX]);

/* Text to values, with a message naming the setting on failure. */
int cp_parse_int(const cp_setting *s, const char *text, int64_t *out, char err[CP_ERR_MAX]);
int cp_parse_float(const cp_setting *s, const char *text, double *out, char err[CP_ERR_MAX]);
int cp_parse_bool(const cp_setting *s, const char *text, bool *out, char err[CP_ERR_MAX]);

/* ---- stages on the OpenCL device (device.c) ---- */

typedef enum cp_placement { CP_PLACE_CPU, CP_PLACE_OPENCL, CP_PLACE_AUTO } cp_placement;
/* "cpu", "opencl" or "auto"; -1 for anything else. */
int cp_placement_parse(const char *v, cp_placement *out);
/* A stage placed on the device: opens the device and builds the type's kernel for stage
 * `stage` whose input queue is `input`. NULL with a message; *no_device tells a missing
 * device (which `auto` falls back from) from a kernel that does not build. */
typedef struct cp_device_stage cp_device_stage;
cp_device_stage *cp_device_stage_new(const char *stage, const cp_stage_type *t,
                                     const cp_kernel *k, const gr_queue_desc *input, bool *no_device,
                                     char err[CP_ERR_MAX]);
/* After the type's create: the state the kernel's hooks get. NULL, or why this
 * instance cannot run on the device. */
const char *cp_device_stage_bind(cp_device_stage *d, void *state);
void cp_device_stage_free(cp_device_stage *d);
/* The gr_stage_fn of a placed stage (user: its cp_device_stage), and its batch hook: a
 * worker's ready tasks of the stage, up to CP_DEVICE_BATCH packets, in one launch. */
#define CP_DEVICE_BATCH 32
void cp_device_stage_main(gr_ctx *c);
void cp_device_stage_batch(gr_ctx *c, void *const packets[], uint32_t n);
/* Its gr_stage_desc.set_pushes: the kernel's (NULL when the kernel has none). */
gr_set_pushes_fn cp_device_stage_set_pushes(const cp_device_stage *d);
/* Whether the stage's kernel rewrites its packets in place and its emit reads only what
 * no kernel rewrites, so its output may stay on the device (device_queue.c). */
bool cp_device_stage_resident_ok(const cp_device_stage *d);
/* The device queue the stage's input packets may be in (they leave it as its tasks
 * run), and the one its in-place output goes to (NULL: the host). */
typedef struct cp_device_queue cp_device_queue;
void cp_device_stage_link(cp_device_stage *d, cp_device_queue *in, cp_device_queue *out);

/* The device memory a push output's appended elements go to, for the stage's kernel
 * append `append` (NULL: the host), and the one its input's come from. */
typedef struct cp_device_append cp_device_append;
void cp_device_stage_link_append(cp_device_stage *d, int append, cp_device_append *out);
void cp_device_stage_link_gather(cp_device_stage *d, cp_device_append *in);

/* ---- `device = auto` by measured time per task (placement.c) ---- */

#define CP_PLACEMENT_WHY 200
/* Whether a stage of type t that may run on the device should, and why (for the
 * statistics); input_on_device: the stage that feeds it is placed there. */
bool cp_auto_place(const cp_stage_type *t, bool input_on_device, char why[CP_PLACEMENT_WHY]);
/* After a run: a stage of type t (its copies summed) was busy busy_ms over tasks tasks,
 * on the device or on the CPU. */
void cp_auto_measured(const cp_stage_type *t, bool on_device, double busy_ms, uint64_t tasks);

/* ---- queues between two stages on the device (device_queue.c) ---- */

struct ac_place;
/* Device memory for `desc`'s capacity in packets of its elements. NULL with a message. */
cp_device_queue *cp_device_queue_new(const char *queue, const gr_queue_desc *desc,
                                     char err[CP_ERR_MAX]);
void cp_device_queue_free(cp_device_queue *q);
/* Where packet's elements are on the device, if they are. */
bool cp_device_queue_holds(cp_device_queue *q, const void *packet, struct ac_place *where);
/* A slot for packet's elements (its own if it has one); false when every slot is taken:
 * the elements go to the host instead. */
bool cp_device_queue_claim(cp_device_queue *q, const void *packet, struct ac_place *where);
/* Packet's slot is free again (its consumer has read it). */
void cp_device_queue_release(cp_device_queue *q, const void *packet);
/* The most packets held at once, and the capacity. */
void cp_device_queue_usage(cp_device_queue *q, uint32_t *peak, uint32_t *capacity);

/* ---- queues filled by kernels' appends on the device (device_append.c) ---- */

struct ac_append;
/* Device memory for `desc`'s capacity in packets of its elements' leading part_bytes,
 * in slots of a packet's elements. NULL with a message. */
cp_device_append *cp_device_append_new(const char *queue, const gr_queue_desc *desc,
                                       size_t part_bytes, char err[CP_ERR_MAX]);
void cp_device_append_free(cp_device_append *q);
size_t cp_device_append_part(const cp_device_append *q);
const struct ac_buffer *cp_device_append_entries(const cp_device_append *q);
/* Free slots for a launch to append up to `entries` elements into (at most
 * AC_APPEND_SLOTS), held until cp_device_append_drop; a->entries NULL when none is free. */
void cp_device_append_claim(cp_device_append *q, uint64_t entries, struct ac_append *a);
void cp_device_append_drop(cp_device_append *q, struct ac_append *a);
/* After the launch: the slots of a that no position below `asked` (its counter) reached
 * are given back now, not when a is dropped. */
void cp_device_append_trim(cp_device_append *q, struct ac_append *a, uint32_t asked);
/* The entry at `position` of launch a's appends, now pushed (its slot stays taken until
 * the entry is released). AC_NO_ENTRY past what a may hold. */
uint32_t cp_device_append_take(cp_device_append *q, const struct ac_append *a, uint32_t position);
/* An entry its consumer has read. */
void cp_device_append_release(cp_device_append *q, uint32_t entry);
/* The most slots taken at once, and the capacity (packets). */
void cp_device_append_usage(cp_device_append *q, uint32_t *peak, uint32_t *capacity);
/* A pushed element whose leading bytes are on the device carries the entry instead:
 * its first word is CP_DEVICE_HANDLE (a NaN's bits no producer makes), the second the
 * entry. */
#define CP_DEVICE_HANDLE 0xffffffffu
void cp_device_handle_set(void *element, uint32_t entry);
bool cp_device_handle_of(const void *element, uint32_t *entry);

#endif
