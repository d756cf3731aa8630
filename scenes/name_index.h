/* name_index.h — a hash index over the names of an array's items (the scene's
 * materials), so that looking a name up is O(1) instead of a scan: OBJ files with tens
 * of thousands of materials made loading quadratic (80k names: 10 s). Each item's name
 * is a NUL-terminated char array at offset 0; the index stores item positions only, so
 * the array may be reallocated freely. */
#ifndef SCENES_NAME_INDEX_H
#define SCENES_NAME_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sc_name_index {
    uint32_t *slots;              /* item position + 1, 0 = empty; capacity a power of 2 */
    size_t cap, count;
} sc_name_index;

/* The position of the first item added under name, or -1. */
long sc_name_index_find(const sc_name_index *ix, const void *items, size_t stride, const char *name);
/* Records item pos (whose name is in items); a name already present keeps its first
 * item. false when out of memory. */
bool sc_name_index_add(sc_name_index *ix, const void *items, size_t stride, uint32_t pos);
void sc_name_index_free(sc_name_index *ix);

#endif
