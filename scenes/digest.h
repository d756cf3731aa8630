/* digest.h — a 64-bit fingerprint of what a scene renders: the flattened geometry, the
 * camera, the lights, the materials' factors and texture indices, and every texture's
 * texels. Programs that load the same file in several processes (gramps-render-mpi's
 * ranks) compare it to know that they read the same thing. FNV-1a: a fingerprint
 * against accidents (different files under one name), not against an adversary. */
#ifndef SCENES_DIGEST_H
#define SCENES_DIGEST_H

#include "scenes/scene.h"

#include <stdint.h>

uint64_t sc_digest(const sc_scene *s, const sc_geometry *g);

#endif
