/* options.h — gramps-render-mpi's command line: gramps-render's scene, graph, image and
 * runtime options (tools/common/render_opts.h), its -o and --stats, and how the work is
 * cut and handed out (--chunk-rows, --handout). Every rank parses the same arguments;
 * only rank 0's messages are shown (main.c), so a bad option is reported once. */
#ifndef TOOLS_MPI_OPTIONS_H
#define TOOLS_MPI_OPTIONS_H

#include "tools/common/render_opts.h"
#include "tools/mpi/plan.h"

#define MP_CHUNK_TIMEOUT_S 300          /* --chunk-timeout default, seconds */

typedef struct mp_options {
    ro_options c;
    const char *output, *stats;
    int chunk_rows;                  /* 0: mp_default_rows */
    mp_handout handout;
    int chunk_timeout_s;             /* a rank silent this long stops the job (0: default) */
} mp_options;

#define MP_PROG "gramps-render-mpi"

/* 0; -1 after --help or --version (printed); or exit status 2 with the message printed. */
int mp_parse_args(int argc, char **argv, mp_options *o);
void mp_options_free(mp_options *o);

#endif
