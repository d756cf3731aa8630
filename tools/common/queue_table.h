/* queue_table.h — a run's queues as a table for people (gramps-render -v or
 * --stats-table, gramps-footprint --table): per queue its subqueues, capacity, packet
 * size, peak and average packets held, and those in bytes against what the capacity
 * allows, in the unit that fits (B, KiB, MiB, GiB). */
#ifndef TOOLS_COMMON_QUEUE_TABLE_H
#define TOOLS_COMMON_QUEUE_TABLE_H

#include "gramps/gramps.h"

#include <stddef.h>
#include <stdio.h>

/* bytes as "512 B", "12.5 KiB", "3.25 MiB", "1.50 GiB" into out. */
void qt_bytes(double bytes, char *out, size_t size);

/* The table of st's queues, a line per queue and a total, on out. */
void qt_print(const gr_stats *st, FILE *out);

#endif
