/* limits.h — the renderer's limits, in one place (as llvmpipe's lp_limits.h): every bound
 * that a scene, a program's option or a graph setting is checked against is named here
 * once, and a refusal reports it by name and value (LIMIT_RANGE). A name keeps the prefix
 * of the module whose data it bounds (SC_ scenes, SH_ shaders, PL_ the frame and every
 * pipeline, PLR_ the raster family).
 *
 * It sits in scenes/, the lowest module of the renderer, and includes nothing, so that
 * every module above it (the kernels, shaders, pipelines and programs) can use it. The
 * runtime's own limits (GR_MAX_WORKERS, GR_DEFAULT_CAPACITY, ...) are in gramps/gramps.h,
 * the graph files' (CP_MAX_REPLICAS, ...) in compose/compose.h. */
#ifndef SCENES_LIMITS_H
#define SCENES_LIMITS_H

/* ---- scenes: what a scene may hold (scenes/validate.c checks these at load) ---------- */

/* |coordinate| of a vertex, eye, target or light, the same for every pipeline: the ray
 * tracer's watertight triangle test multiplies three coordinate differences, which
 * overflows float beyond about 7e12 (3e13 rendered unlit: every shadow ray 'hit');
 * 1e11 keeps that product below 1e36 with the fitted camera's margin. */
#define SC_COORD_MAX 1e11f
/* |coordinate| of an eye, target or light, fitted or given: ten times the geometry's, so
 * a camera fitted around a mesh at the limit is valid; vertex-to-eye differences stay
 * below 1.1e12, whose cube the ray tracer's test still holds. */
#define SC_VIEW_COORD_MAX 1e12f
#define SC_LIGHT_MAX 1e6f         /* a light's colour component, in [0, SC_LIGHT_MAX] */
#define SC_FACTOR_MAX 1e3f        /* a material's albedo and specular factors */
#define SC_EXPONENT_MAX 1e6f      /* a material's specular exponent */
#define SC_MAX_FILE_MESHES 256    /* [mesh.*] sections of one scene file */
#define SC_MAX_IMPORT_MATERIALS 256   /* materials of one imported mesh file */
#define SC_MAX_IMPORT_TEXTURES 256    /* distinct textures of one imported mesh file */
#define SC_MAX_TEXTURE_SIDE 32768     /* a texture's width and height (16 mip levels reach 1x1) */
#define SC_WARNINGS_MAX 8192          /* bytes of load warnings a scene keeps */

/* ---- images and shading --------------------------------------------------------------- */

/* Pixels on each side of an image, and so of a tile or a band of rows: the rasterizer's
 * 64-bit edge arithmetic is proven safe up to it (rasterizer/raster.h). */
#define PL_MAX_IMAGE_SIDE 16384
#define PL_MAX_SPP 4096           /* samples per pixel (the fixed-point sums have room) */
#define PL_MAX_BOUNCES 64         /* the ray tracer's reflection depth */
#define PL_MAX_FRAMES 100000      /* frames one program run renders (--frames) */
/* Lights that are shaded; a scene's further lights are ignored (a shading env holds
 * this many, and a hit casts at most one shadow ray per light). */
#define SH_MAX_LIGHTS 8

/* ---- the raster family ------------------------------------------------------------------ */

#define PLR_MIN_TILE 8            /* framebuffer tile edge in pixels, */
#define PLR_MAX_TILE 256          /* ... up to this (a tile's Hi-Z blocks fit one mask) */
#define PLR_MAX_GROUPS 256        /* IA/VS groups of one graph */

/* "value (NAME)" and "lo..value (NAME)" as string literals: what a refusal message
 * quotes, naming the limit. `limit` must be a macro whose value is a plain integer
 * literal (the ones above, GR_MAX_WORKERS...). */
#define LIMIT_NAMED(limit) LIMIT_STR_(limit) " (" #limit ")"
#define LIMIT_RANGE(lo, limit) #lo ".." LIMIT_STR_(limit) " (" #limit ")"
#define LIMIT_STR_(x) LIMIT_STR2_(x)
#define LIMIT_STR2_(x) #x

#endif
