/* queue_table.c — the per-queue footprint table (see queue_table.h). */
#include "tools/common/queue_table.h"

#include <string.h>

void qt_bytes(double bytes, char *out, size_t size)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        u++;
    }
    if (u == 0) snprintf(out, size, "%.0f B", bytes);
    else snprintf(out, size, bytes < 10 ? "%.2f %s" : bytes < 100 ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

/* The bytes a queue may hold by its capacity: every subqueue full. A queue closing a
 * cycle (backward) is marked, "exceeded" where it held more than that (a way back that
 * does not wait, or a jammed cycle: runtime-api.md, "Cycles: the way back"). */
static double capacity_bytes(const gr_queue_stats *q)
{
    return (double)q->capacity * (q->subqueues ? q->subqueues : 1) * (double)q->packet_bytes;
}

static int name_width(const gr_stats *st)
{
    int w = 13;                           /* "all (at once)" */
    for (int i = 0; i < st->nqueues; i++) {
        int n = (int)strlen(st->queues[i].name);
        if (n > w) w = n;
    }
    return w;
}

static const char *cycle_mark(const gr_queue_stats *q)
{
    if (!q->backward) return "";
    uint64_t space = (uint64_t)q->capacity * (q->subqueues ? q->subqueues : 1);
    return q->reserved_peak_packets > space ? " (cycle: exceeded)" : " (cycle)";
}

static void print_row(const gr_queue_stats *q, int w, FILE *out)
{
    char packet[24], peak[24], avg[24], cap[24];
    qt_bytes((double)q->packet_bytes, packet, sizeof packet);
    qt_bytes((double)q->peak_bytes, peak, sizeof peak);
    qt_bytes(q->avg_bytes, avg, sizeof avg);
    qt_bytes(capacity_bytes(q), cap, sizeof cap);
    fprintf(out, "%-*s %9u %8u %10s %8llu %9.1f %10s %10s %10s%s\n", w, q->name, q->subqueues,
            q->capacity, packet, (unsigned long long)q->peak_packets, q->avg_packets, peak, avg,
            cap, cycle_mark(q));
}

void qt_print(const gr_stats *st, FILE *out)
{
    int w = name_width(st);
    fprintf(out, "%-*s %9s %8s %10s %8s %9s %10s %10s %10s\n", w, "queue", "subqueues",
            "capacity", "packet", "peak", "average", "peak", "average", "capacity");
    fprintf(out, "%-*s %9s %8s %10s %8s %9s %10s %10s %10s\n", w, "", "", "(each)", "",
            "packets", "packets", "bytes", "bytes", "bytes");
    double cap = 0;
    for (int i = 0; i < st->nqueues; i++) {
        print_row(&st->queues[i], w, out);
        cap += capacity_bytes(&st->queues[i]);
    }
    char peak[24], avg[24], all[24];
    qt_bytes((double)st->peak_footprint_bytes, peak, sizeof peak);
    qt_bytes(st->avg_footprint_bytes, avg, sizeof avg);
    qt_bytes(cap, all, sizeof all);
    fprintf(out, "%-*s %9s %8s %10s %8s %9s %10s %10s %10s\n", w, "all (at once)", "", "", "", "",
            "", peak, avg, all);
}
