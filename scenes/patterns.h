/* patterns.h — procedural textures for the built-in showcase scene (internal): each
 * returns a malloc'ed width x height RGBA8 image (row 0 at the top; NULL when out of
 * memory) that tiles seamlessly when its side is a multiple of the pattern's period.
 * The same image on every run: the noise is a hash of the texel, no random state. */
#ifndef SCENES_PATTERNS_H
#define SCENES_PATTERNS_H

/* Floor tiles: a 2x2 checker of cream and slate stone tiles with grout lines. */
unsigned char *sc_pattern_floor_tiles(int width, int height);
/* Brick courses (two bricks a course, every other one offset by half) in mortar. */
unsigned char *sc_pattern_bricks(int width, int height);
/* Four horizontal planks with grain and dark joints, in a darker frame (a crate's side). */
unsigned char *sc_pattern_crate(int width, int height);
/* Two white pickets with pointed tops on two rails; alpha 0 between them (a cut-out). */
unsigned char *sc_pattern_fence(int width, int height);
/* Leaves on a transparent ground (alpha 0 outside them): a foliage card. */
unsigned char *sc_pattern_leaves(int width, int height);
/* Stained glass: coloured cells at alpha 150 between opaque dark lead lines. */
unsigned char *sc_pattern_stained_glass(int width, int height);
/* A sky: warm at the bottom row (the horizon), blue at the top. */
unsigned char *sc_pattern_sky(int width, int height);

#endif
