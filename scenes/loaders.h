/* loaders.h — file loaders behind sc_load (internal): .scene files (libinih), OBJ files
 * (a reader that keeps faces in file order), other mesh formats (assimp), textures
 * (stb_image), and sc_save_scene, which writes a scene back as .scene + OBJ files. */
#ifndef SCENES_LOADERS_H
#define SCENES_LOADERS_H

#include "scenes/scene.h"

sc_scene *sc_load_scene_file(const char *path, char err[SC_ERR_MAX]);
/* A mesh file as a scene: one instance, its materials (or the default one: grey,
 * reflectivity 0.3), a fitted camera and light. */
sc_scene *sc_load_mesh_file(const char *path, char err[SC_ERR_MAX]);

/* Appends the meshes of a mesh file to s (one sc_mesh per file) and returns the mesh
 * index, or -1 with err set. OBJ through sc_read_obj, anything else through assimp. */
int sc_read_mesh(sc_scene *s, const char *path, char err[SC_ERR_MAX]);
int sc_read_obj(sc_scene *s, const char *path, char err[SC_ERR_MAX]);
int sc_read_assimp(sc_scene *s, const char *path, char err[SC_ERR_MAX]);
/* Loads an image file as a texture of s; returns its index or -1 with err. */
int sc_read_texture(sc_scene *s, const char *path, char err[SC_ERR_MAX]);

/* Writes path (a .scene file) and one OBJ per mesh beside it. 0 or -1 with err. */
int sc_save_scene(const sc_scene *s, const char *path, char err[SC_ERR_MAX]);

#endif
