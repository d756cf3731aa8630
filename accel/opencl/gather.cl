/* gather.cl — the leading part_bytes of a launch's elements from the entries a
 * producer kernel appended to a device queue (accel/cl_append.c): element i gets entry
 * index[i], or keeps what the host wrote when index[i] is NO_ENTRY. Bytes are copied
 * as they are, so the elements are bit for bit the producer's. */
#define NO_ENTRY 0xffffffffu

kernel void ac_gather(global uchar *elements, uint element_bytes, uint part_bytes,
                      global const uint *index, uint n, global const uchar *entries)
{
    const size_t i = get_global_id(0);
    if (i >= n || index[i] == NO_ENTRY) return;
    global uchar *to = elements + i * element_bytes;
    global const uchar *from = entries + (size_t)index[i] * part_bytes;
    for (uint b = 0; b < part_bytes; b++) to[b] = from[b];
}
