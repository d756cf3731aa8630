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

/* The same without the mip chain (level 0 only): what an import child sends. */
int sc_add_texture_level0(sc_scene *s, const char *name, int width, int height,
                          unsigned char *rgba, char err[SC_ERR_MAX]);
/* NULL when a width x height texture is within the limits (sides up to
 * SC_MAX_TEXTURE_SIDE, at most o->max_texture_pixels), else why not. */
const char *sc_texture_size_problem(size_t width, size_t height, const sc_load_opts *o);
/* An image file or encoded bytes (PNG, JPEG, ... as stb_image reads them) decoded to
 * RGBA8 within o's limits (the header's size is checked before the pixels are decoded):
 * malloc'ed texels, or NULL with err naming path / name. */
unsigned char *sc_decode_texture(const char *path, const sc_load_opts *o, int *w, int *h,
                                 char err[SC_ERR_MAX]);
unsigned char *sc_decode_texture_memory(const void *data, size_t n, const char *name,
                                        const sc_load_opts *o, int *w, int *h, char err[SC_ERR_MAX]);

/* The file a model names as a texture: relative to the directory of dir_of (the model or
 * MTL file), backslashes as slashes, "file://" and "./" dropped, and when no file has
 * that name, the directory's entry matching it but for case (3DS files name TEST.PNG). */
#define SC_PATH_MAX 1024
void sc_texture_path(const char *dir_of, const char *name, char path[SC_PATH_MAX]);

/* Textures a loader has read, by path, so that each file is read once (and a file that
 * could not be read is not tried again): level0_only for an import child. */
typedef struct sc_texture_cache {
    bool level0_only;
    size_t n;
    struct { char path[SC_PATH_MAX]; int index; char why[SC_ERR_MAX]; } *e;
} sc_texture_cache;
/* key's texture index, -1 (with why) when it could not be read, -2 when not tried. */
int sc_texture_cache_find(const sc_texture_cache *c, const char *key, char why[SC_ERR_MAX]);
void sc_texture_cache_put(sc_texture_cache *c, const char *key, int index, const char *why);
/* Adds decoded texels (owned by s from now on, freed on failure) as a texture of s,
 * within SC_MAX_IMPORT_TEXTURES: its index or -1 with why. */
int sc_texture_cache_add(sc_texture_cache *c, sc_scene *s, const char *name, int w, int h,
                         unsigned char *px, char why[SC_ERR_MAX]);
/* path's texture index in s (read now or before), or -1 with why. */
int sc_texture_cache_get(sc_texture_cache *c, sc_scene *s, const char *path, const sc_load_opts *o,
                         char why[SC_ERR_MAX]);
void sc_texture_cache_free(sc_texture_cache *c);

/* A loader that appends one mesh to s: the mesh index, or -1 with err set. */
typedef int (*sc_mesh_loader)(sc_scene *s, const char *path, const sc_load_opts *o,
                              char err[SC_ERR_MAX]);
/* Runs load in a child process limited to o->max_memory bytes of address space and
 * o->import_seconds, and appends the mesh, materials and textures (level 0 in the
 * child, mip chains built here) it made to s, with its warnings and count of unreadable
 * textures. A crash, hang or exhausted memory in the child is an error naming path, and
 * so is a reply beyond the limits (a texture larger than o allows, an index out of range). */
int sc_import_isolated(sc_scene *s, const char *path, const sc_load_opts *o,
                       sc_mesh_loader load, char err[SC_ERR_MAX]);
/* 0 when path is not PLY or its header is consistent with the file; else -1 with err
 * (header cut short, unknown lines, more data declared than the file holds). */
int sc_ply_check(const char *path, char err[SC_ERR_MAX]);

/* Writes path (a .scene file) and one OBJ per mesh beside it. 0 or -1 with err. */
int sc_save_scene(const sc_scene *s, const char *path, char err[SC_ERR_MAX]);

#endif
