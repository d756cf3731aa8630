/* assimp_load.c — mesh formats other than OBJ (PLY, glTF/GLB, 3DS, FBX, ...) through
 * assimp's C API. aiProcess_Triangulate fan-triangulates polygons in face order; the
 * file's meshes are appended in assimp's order, and its node transforms are applied
 * (aiProcess_PreTransformVertices) so the result is one mesh in file coordinates.
 *
 * assimp is not safe on malformed files (it hangs, aborts, crashes and allocates what a
 * header declares), so it never runs in our process: PLY headers are checked first
 * (ply_check.c), the import runs in a limited child (isolated_import.c), and inside it
 * aiProcess_ValidateDataStructure turns bad face lists into errors before the other
 * post-processing steps read them, and every face index is checked against its mesh's
 * vertex count before it is used. */
#include "scenes/build.h"
#include "scenes/loaders.h"

#include <assimp/cimport.h>
#include <assimp/material.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <string.h>

static int add_materials(sc_scene *s, const struct aiScene *as, int *map)
{
    for (unsigned i = 0; i < as->mNumMaterials; i++) {
        struct aiColor4D kd = {0.8f, 0.8f, 0.8f, 1};
        struct aiString name;
        char n[SC_NAME_MAX];
        if (aiGetMaterialString(as->mMaterials[i], AI_MATKEY_NAME, &name) == AI_SUCCESS)
            snprintf(n, sizeof n, "%.63s", name.data);
        else
            snprintf(n, sizeof n, "material%u", i);
        aiGetMaterialColor(as->mMaterials[i], AI_MATKEY_COLOR_DIFFUSE, &kd);
        map[i] = sc_scene_add_material(s, n, kd.r, kd.g, kd.b, 0.3f, 0.5f, 32.0f);
        if (map[i] < 0) return -1;
    }
    return 0;
}

/* false when a face refers to a vertex the mesh does not have. */
static bool append_mesh(sc_mesh_builder *b, const struct aiMesh *m, uint32_t material)
{
    uint32_t base = (uint32_t)b->nv;
    for (unsigned v = 0; v < m->mNumVertices; v++) {
        uint32_t i = sc_mb_vertex(b, m->mVertices[v].x, m->mVertices[v].y, m->mVertices[v].z);
        if (m->mNormals) sc_mb_normal(b, i, m->mNormals[v].x, m->mNormals[v].y, m->mNormals[v].z);
        if (m->mTextureCoords[0]) sc_mb_uv(b, i, m->mTextureCoords[0][v].x, m->mTextureCoords[0][v].y);
    }
    for (unsigned f = 0; f < m->mNumFaces; f++) {
        const struct aiFace *face = &m->mFaces[f];
        if (face->mNumIndices != 3) continue;        /* points and lines */
        const unsigned *i = face->mIndices;
        if (i[0] >= m->mNumVertices || i[1] >= m->mNumVertices || i[2] >= m->mNumVertices) return false;
        sc_mb_triangle(b, base + i[0], base + i[1], base + i[2], material);
    }
    return true;
}

/* The import itself: runs in the isolated child only. */
static int import_assimp(sc_scene *s, const char *path, char err[SC_ERR_MAX])
{
    const struct aiScene *as = aiImportFile(path, aiProcess_ValidateDataStructure |
                                            aiProcess_Triangulate |
                                            aiProcess_PreTransformVertices |
                                            aiProcess_GenSmoothNormals);
    if (!as) {
        snprintf(err, SC_ERR_MAX, "%s: %s", path, aiGetErrorString());
        return -1;
    }
    int map[SC_MAX_IMPORT_MATERIALS];
    if (as->mNumMaterials > SC_MAX_IMPORT_MATERIALS || add_materials(s, as, map) != 0) {
        aiReleaseImport(as);
        snprintf(err, SC_ERR_MAX, "%s: more than %d materials (SC_MAX_IMPORT_MATERIALS) or out "
                 "of memory", path, SC_MAX_IMPORT_MATERIALS);
        return -1;
    }
    sc_mesh_builder b = {0};
    bool ok = true;
    for (unsigned i = 0; ok && i < as->mNumMeshes; i++) {
        const struct aiMesh *m = as->mMeshes[i];
        ok = m->mMaterialIndex < as->mNumMaterials || as->mNumMaterials == 0;
        ok = ok && append_mesh(&b, m, as->mNumMaterials ? (uint32_t)map[m->mMaterialIndex] : 0);
    }
    aiReleaseImport(as);
    if (!ok) {
        sc_mb_free(&b);
        snprintf(err, SC_ERR_MAX, "%s: a face refers to a vertex or material the file does not have", path);
        return -1;
    }
    if (b.nt == 0) {
        sc_mb_free(&b);
        snprintf(err, SC_ERR_MAX, "%s: no triangles: the mesh is empty", path);
        return -1;
    }
    if (s->nmaterials == 0) sc_scene_add_material(s, "default", 0.8f, 0.8f, 0.8f, 0.3f, 0.5f, 32.0f);
    const char *base = strrchr(path, '/');
    int m = sc_scene_add_mesh(s, base ? base + 1 : path, &b);
    sc_mb_free(&b);
    if (m < 0) snprintf(err, SC_ERR_MAX, "%s: out of memory", path);
    return m;
}

int sc_read_assimp(sc_scene *s, const char *path, const sc_load_opts *o, char err[SC_ERR_MAX])
{
    if (sc_ply_check(path, err) != 0) return -1;
    return sc_import_isolated(s, path, o, import_assimp, err);
}

static bool is_obj(const char *path)
{
    size_t n = strlen(path);
    return n >= 4 && !strcasecmp(path + n - 4, ".obj");
}

int sc_read_mesh(sc_scene *s, const char *path, const sc_load_opts *o, char err[SC_ERR_MAX])
{
    return is_obj(path) ? sc_read_obj(s, path, o, err) : sc_read_assimp(s, path, o, err);
}

sc_scene *sc_load_mesh_file(const char *path, const sc_load_opts *o, char err[SC_ERR_MAX])
{
    const char *base = strrchr(path, '/');
    sc_scene *s = sc_scene_new(base ? base + 1 : path);
    if (!s) { snprintf(err, SC_ERR_MAX, "%s: out of memory", path); return NULL; }
    int m = sc_read_mesh(s, path, o, err);
    float id[16];
    sc_identity(id);
    if (m < 0 || sc_scene_add_instance(s, (uint32_t)m, id) < 0) {
        if (m >= 0) snprintf(err, SC_ERR_MAX, "%s: out of memory", path);
        sc_free(s);
        return NULL;
    }
    static const float y_up[3] = {0, 1, 0};
    sc_fit_camera(s, y_up);
    return s;
}
