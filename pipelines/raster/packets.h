/* packets.h — the packet formats of the rasterization stages, for graph files and
 * for plugin stages that read or change them (examples/plugins/fog.c).
 *
 * An IA packet (raster.batch) names a batch of triangles; a primitive packet
 * (raster.primitives) carries a batch of set-up (or, when the planes cut them, raw)
 * triangles with its sequence number; a fragment packet (raster.fragments) carries
 * covered pixels of up to TRIS_PER_PACKET triangles inside one tile. The PS writes depth
 * and colour over the coverage data in place, so the same packet flows on to the Output
 * Merger: a stage between them sees out.z (INFINITY: killed by early-Z, the OM skips it)
 * and out.rgba (RGBA8, R in the low byte); when the frame keeps the linear colour
 * (pl_frame.hdr), out.linear holds the fragment's linear RGB (plr_linear_pack,
 * pipelines/raster/linear21.h), which the OM uses only while out.rgba still encodes from
 * it: a stage that changes out.rgba alone gets its colour decoded. With multisampling (msaa > 1) a fragment is a
 * pixel with at least one covered sample: cover[] says which, in.e0/e1 and out.z are its
 * centre's (where the PS shades), and the OM finds each sample's depth from edges[]. */
#ifndef PIPELINES_RASTER_PACKETS_H
#define PIPELINES_RASTER_PACKETS_H

#include "rasterizer/raster.h"
#include "rasterizer/samples.h"
#include "shaders/raster_shading.h"

#include <stddef.h>
#include <stdint.h>

#define MAX_BATCH 128
#define FRAGS_PER_PACKET SH_PS_MAX
#define TRIS_PER_PACKET 16                /* triangles one fragment packet can refer to */
#define BINNED_PER_PACKET 16              /* triangles per tile per Setup/Bin packet */
#define OPEN_TILES 64                     /* tiles a stager fills at once */
/* The sort-middle Bin's stager (any order: it sends a tile's full packets in runs when
 * it needs a chunk, tile_stager.h): two packets per tile of the frame, so that about
 * half its chunks hold runs however many tiles it reaches, and at most 256 (866 KiB per
 * Bin: a 1024x1024 frame's 64-pixel tiles reached by the textured bunny, 91, leave 165
 * for runs). */
#define BIN_STAGED_PACKETS 256

typedef struct ia_pkt { uint32_t seq, first, count; } ia_pkt;

/* A triangle ready to rasterize: its setup and what the PS needs of it. */
typedef struct plr_prim { sh_ps_tri tri; rs_setup su; } plr_prim;

/* What the VS sends on for one input triangle. Clipping and setup are per-triangle
 * work, so the VS (a Shader stage, run in parallel) does them and the Rast singleton
 * only walks tiles. A triangle the near/far/guard planes cut (rare) goes on as it is,
 * and Rast clips it: its pieces would not fit a fixed-size packet. */
typedef struct prim_rec {
    uint32_t cut;
    union { plr_prim set; rs_triangle raw; };
} prim_rec;

/* A batch of primitives after the VS, in draw order within the batch; its queues'
 * packets have room for `batch` records (culled triangles leave none). */
typedef struct prim_pkt { uint32_t seq, count; prim_rec rec[]; } prim_pkt;

static inline size_t prim_pkt_bytes(uint32_t records)
{
    return offsetof(prim_pkt, rec) + records * sizeof(prim_rec);
}

/* Covered pixels of up to TRIS_PER_PACKET triangles inside one tile, in draw order, as
 * arrays. Rast only finds coverage (x, y and two exact edge values); the PS (parallel)
 * turns those into depth and weights, drops what fails early-Z (z = +inf), shades the
 * rest and writes depth and colour over the edge values, in place, for the OM. */
typedef struct frag_pkt {
    uint32_t count, ntris;
    uint32_t last_uid;                    /* Rast's id of tris[ntris - 1] */
    uint16_t x[FRAGS_PER_PACKET], y[FRAGS_PER_PACKET];
    union {
        struct { int64_t e0[FRAGS_PER_PACKET], e1[FRAGS_PER_PACKET]; } in;   /* from Rast */
        struct {
            float z[FRAGS_PER_PACKET];
            uint32_t rgba[FRAGS_PER_PACKET];
            uint64_t linear[FRAGS_PER_PACKET];   /* in e1's place: the packet's size is
                                                    the same with or without it */
        } out;                                           /* from PS */
    };
    uint8_t tri[FRAGS_PER_PACKET];        /* index into tris and interp */
    uint8_t cover[FRAGS_PER_PACKET];      /* msaa > 1: the covered samples (bit k: sample
                                             k); the pixel's centre need not be covered */
    sh_ps_tri tris[TRIS_PER_PACKET];
    rs_interp interp[TRIS_PER_PACKET];
    rs_edge01 edges[TRIS_PER_PACKET];     /* for the OM: depth per sample (msaa > 1) and the
                                             weights at the centre (pipelines/surface.h) */
} frag_pkt;
_Static_assert(sizeof(((frag_pkt *)0)->out) <= sizeof(((frag_pkt *)0)->in),
               "the PS's output fits in the coverage data it replaces");

/* Up to BINNED_PER_PACKET set-up triangles for one tile, in draw order. */
typedef struct binned_pkt {
    uint32_t count, pad;
    struct { plr_prim prim; uint32_t uid; } t[BINNED_PER_PACKET];
} binned_pkt;

/* The depth-only pass (raster.zraster -> raster.ztile): one copy of the rasterizer is
 * done with its depth layer (`layer`: its index among the frame's resources). Where it
 * drew, the layer itself says (Z-Tile reads it only after every rasterizer is done). */
typedef struct ztile_done_pkt {
    uint32_t layer, pad;
} ztile_done_pkt;

#endif
