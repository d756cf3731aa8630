/* builtin.h — the built-in scenes, which need no files: the Utah teapot tessellated from
 * its Bezier patches, and generated scenes shaped like the thesis' Table 4.1 (courtyard,
 * fairy), a Cornell box with a mirror, and `showcase`, textured, cut-out and blended
 * geometry with its textures generated at load. Each is identical on every run. */
#ifndef SCENES_BUILTIN_H
#define SCENES_BUILTIN_H

#include "scenes/scene.h"

#define SC_TEAPOT_PATCHES 32
#define SC_TEAPOT_LEVEL 10            /* quads per patch edge: 32 x 10 x 10 x 2 = 6,400 */

extern const float sc_teapot_patches[SC_TEAPOT_PATCHES][16][3];

/* The built-ins' names, for messages. */
#define SC_BUILTIN_NAMES "teapot, courtyard, fairy, cornell, showcase"

bool sc_builtin_known(const char *name);
/* NULL (and no error) when name is not a built-in; NULL with err on failure. */
sc_scene *sc_builtin(const char *name, char err[SC_ERR_MAX]);

sc_scene *sc_builtin_teapot(void);
sc_scene *sc_builtin_courtyard(void);
sc_scene *sc_builtin_fairy(void);
sc_scene *sc_builtin_cornell(void);
sc_scene *sc_builtin_showcase(void);     /* scenes/showcase.c */

#endif
