/* validate.h — checks of scene data where it enters (validate.c): what sc_load and
 * sc_flatten refuse, and the pieces the loaders and the CLI reuse to name a file line or
 * a flag. Every "problem" function returns NULL when the value is usable, else a short
 * reason (a static string). */
#ifndef SCENES_VALIDATE_H
#define SCENES_VALIDATE_H

#include "scenes/scene.h"

/* Whole scene in object space: mesh attributes and indices, materials, lights, camera.
 * 0, or -1 with a message starting with what. */
int sc_validate(const sc_scene *s, const char *what, char err[SC_ERR_MAX]);

/* World-space vertices after a transform: coordinates within +-SC_COORD_MAX, normals
 * finite. 0, or -1 with a message starting with what. */
int sc_validate_world(const float *positions, const float *normals, size_t nv, const char *what,
                      char err[SC_ERR_MAX]);

/* The first vertex of m that transform takes out of +-SC_COORD_MAX, or m->nvertices. */
size_t sc_first_bad_vertex(const sc_mesh *m, const float transform[16]);

const char *sc_camera_problem(const sc_camera *c);
const char *sc_light_problem(const sc_light *l);
/* A material's factors (albedo, specular, reflectivity, exponent, alpha and cutoff,
 * metallic, roughness, emissive, normal scale, occlusion strength), modes and texture
 * references (index below s->ntextures or -1, sampler enums, finite transform). */
const char *sc_material_problem(const sc_scene *s, const sc_material *m);

#endif
