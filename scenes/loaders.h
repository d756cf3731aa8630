/* loaders.h — file loaders behind sc_load (internal): .scene files (libinih), OBJ files
 * (a reader that keeps faces in file order), other mesh formats (assimp), textures
 * (stb_image), and sc_save_scene, which writes a scene back as .scene + OBJ files. */
#ifndef SCENES_LOADERS_H
#define SCENES_LOADERS_H

#include "scenes/scene.h"

sc_scene *sc_load_scene_file(const char *path, const sc_load_opts *o, char err[SC_ERR_MAX]);
/* A mesh file as a scene: one instance, its materials (or the default one: grey,
 * reflectivity 0.3), a fitted camera and light. */
sc_scene *sc_load_mesh_file(const char *path, const sc_load_opts *o, char err[SC_ERR_MAX]);

/* Appends the meshes of a mesh file to s (one sc_mesh per file) and returns the mesh
 * index, or -1 with err set. OBJ through sc_read_obj, anything else through assimp. */
int sc_read_mesh(sc_scene *s, const char *path, const sc_load_opts *o, char err[SC_ERR_MAX]);
int sc_read_obj(sc_scene *s, const char *path, const sc_load_opts *opts, char err[SC_ERR_MAX]);
/* assimp, isolated (sc_import_isolated) after sc_ply_check. */
int sc_read_assimp(sc_scene *s, const char *path, const sc_load_opts *o, char err[SC_ERR_MAX]);
/* Loads an image file as a texture of s (at most o->max_texture_pixels); returns its
 * index or -1 with err. */
int sc_read_texture(sc_scene *s, const char *path, const sc_load_opts *o, char err[SC_ERR_MAX]);
/* Appends a texture of width x height RGBA8 texels (malloc'ed; s owns them from now on,
 * also on failure) named `name`, with its mip chain; its index or -1 with err. */
int sc_add_texture(sc_scene *s, const char *name, int width, int height, unsigned char *rgba,
                   char err[SC_ERR_MAX]);

/* A loader that appends one mesh to s: the mesh index, or -1 with err set. */
typedef int (*sc_mesh_loader)(sc_scene *s, const char *path, char err[SC_ERR_MAX]);
/* Runs load in a child process limited to o->max_memory bytes of address space and
 * o->import_seconds, and appends the mesh (and its materials) it made to s. A crash,
 * hang or exhausted memory in the child is an error naming path. */
int sc_import_isolated(sc_scene *s, const char *path, const sc_load_opts *o,
                       sc_mesh_loader load, char err[SC_ERR_MAX]);
/* 0 when path is not PLY or its header is consistent with the file; else -1 with err
 * (header cut short, unknown lines, more data declared than the file holds). */
int sc_ply_check(const char *path, char err[SC_ERR_MAX]);

/* Writes path (a .scene file) and one OBJ per mesh beside it. 0 or -1 with err. */
int sc_save_scene(const sc_scene *s, const char *path, char err[SC_ERR_MAX]);

#endif
