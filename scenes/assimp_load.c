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
#include "scenes/input_file.h"
#include "scenes/build.h"
#include "scenes/loaders.h"

#include <assimp/GltfMaterial.h>
#include <assimp/cimport.h>
#include <assimp/material.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- materials ---------------------------------------------------------------------------- */

typedef struct import_ctx {
    sc_scene *s;
    const struct aiScene *as;
    const char *path;
    const sc_load_opts *o;
    sc_texture_cache cache;       /* files and embedded images ("*N"), each decoded once */
} import_ctx;

static float unit(float v, float fallback)
{
    return !isfinite(v) ? fallback : v < 0 ? 0 : v > 1 ? 1 : v;
}

static float factor(float v)
{
    return !isfinite(v) || v < 0 ? 0 : v > SC_FACTOR_MAX ? SC_FACTOR_MAX : v;
}

/* Embedded image k of the file, decoded here (in the import child): compressed bytes
 * (PNG, JPEG: mHeight 0) or raw BGRA texels. */
static int embedded_texture(import_ctx *c, unsigned k, char why[SC_ERR_MAX])
{
    char key[SC_PATH_MAX + 16], name[SC_NAME_MAX];
    snprintf(key, sizeof key, "%.1000s#%u", c->path, k);
    int t = sc_texture_cache_find(&c->cache, key, why);
    if (t != -2) return t;
    const char *base = strrchr(c->path, '/');
    snprintf(name, sizeof name, "%.50s#%u", base ? base + 1 : c->path, k);
    const struct aiTexture *at = c->as->mTextures[k];
    unsigned char *px = NULL;
    int w = 0, h = 0;
    const char *problem;
    if (!at || !at->pcData) {
        snprintf(why, SC_ERR_MAX, "%s: embedded texture %u has no data", c->path, k);
    } else if (at->mHeight == 0) {
        px = sc_decode_texture_memory(at->pcData, at->mWidth, key, c->o, &w, &h, why);
    } else if ((problem = sc_texture_size_problem(at->mWidth, at->mHeight, c->o))) {
        snprintf(why, SC_ERR_MAX, "%.400s: %s", key, problem);
    } else if (!(px = malloc((size_t)at->mWidth * at->mHeight * 4))) {
        snprintf(why, SC_ERR_MAX, "%.400s: out of memory", key);
    } else {
        w = (int)at->mWidth;
        h = (int)at->mHeight;
        for (size_t i = 0; i < (size_t)w * h; i++) {
            const struct aiTexel *x = &at->pcData[i];
            px[4 * i] = x->r; px[4 * i + 1] = x->g; px[4 * i + 2] = x->b; px[4 * i + 3] = x->a;
        }
    }
    t = px ? sc_texture_cache_add(&c->cache, c->s, name, w, h, px, why) : -1;
    sc_texture_cache_put(&c->cache, key, t, why);
    return t;
}

/* A texture a material names: "*N" (embedded image N), an embedded image of that file
 * name (FBX), else a file relative to the model. */
static int texture_index(import_ctx *c, const char *file, char why[SC_ERR_MAX])
{
    if (file[0] == '*') {
        char *e;
        unsigned long k = strtoul(file + 1, &e, 10);
        if (e == file + 1 || *e || k >= c->as->mNumTextures) {
            snprintf(why, SC_ERR_MAX, "%s: no embedded texture %.40s", c->path, file);
            return -1;
        }
        return embedded_texture(c, (unsigned)k, why);
    }
    const char *fb = strrchr(file, '/');
    for (unsigned k = 0; k < c->as->mNumTextures; k++) {
        const struct aiString *n = &c->as->mTextures[k]->mFilename;
        const char *nb = n->length ? strrchr(n->data, '/') : NULL;
        if (n->length && (!strcmp(n->data, file) || !strcmp(nb ? nb + 1 : n->data, fb ? fb + 1 : file)))
            return embedded_texture(c, k, why);
    }
    char p[SC_PATH_MAX];
    sc_texture_path(c->path, file, p);
    return sc_texture_cache_get(&c->cache, c->s, p, c->o, why);
}

static sc_wrap wrap_of(int mode)
{
    return mode == aiTextureMapMode_Clamp || mode == aiTextureMapMode_Decal ? SC_WRAP_CLAMP
           : mode == aiTextureMapMode_Mirror ? SC_WRAP_MIRROR : SC_WRAP_REPEAT;
}

/* glTF's sampler filters (OpenGL enums; 0: not given) as one sc_filter: the
 * minification filter decides (mip levels or not, linear or nearest), the magnification
 * filter where the minification one leaves it open. */
static sc_filter filter_of(int mag, int min)
{
    enum { NEAREST = 9728, LINEAR = 9729, N_MIP_N = 9984, L_MIP_N = 9985, N_MIP_L = 9986,
           L_MIP_L = 9987 };
    switch (min) {
    case NEAREST: return SC_FILTER_NEAREST_NO_MIPS;
    case LINEAR: return SC_FILTER_LINEAR_NO_MIPS;
    case N_MIP_N: return SC_FILTER_NEAREST;
    case L_MIP_N: return SC_FILTER_BILINEAR;
    case N_MIP_L: return mag == NEAREST ? SC_FILTER_NEAREST : SC_FILTER_TRILINEAR;
    case L_MIP_L: return SC_FILTER_TRILINEAR;
    default: return mag == NEAREST ? SC_FILTER_NEAREST : SC_FILTER_TRILINEAR;
    }
}

static float snap(float v, float to) { return fabsf(v - to) < 1e-6f ? to : v; }

/* assimp's aiUVTransform (translation, scaling, rotation) as sc_texture_ref's transform,
 * which sh_texture_transform applies to our uv (v up): uv' = offset + M(rotation) scale uv,
 * M(r) = [cos r, sin r; -sin r, cos r].
 *
 * glTF (KHR_texture_transform: uv_g' = offset + M(rotation) scale uv_g in glTF's uv, v
 * down; M's direction is the one Khronos' TextureTransformTest model checks, where the
 * arrow rotated the other way points at its red marker): assimp 5.2's glTF2 importer
 * stores rotation = -r, scaling = s and a translation it derives from the offset
 * (glTF2Importer.cpp, SetMaterialTextureProperty); that is undone to get glTF's values,
 * which become ours through the v flip F (v = 1 - v_g): the same scale, F M(r) F = M(-r),
 * offset (o_u + sin r s_v, 1 - o_v - cos r s_v).
 *
 * Other formats: assimp's own convention (its TextureTransform step: uv' = S R(r)
 * (uv + t - 1/2) + 1/2 in our uv), exact when the scale is uniform or nothing rotates. */
static void uv_transform(const float t[5], bool gltf, sc_texture_ref *ref)
{
    float sx = t[2], sy = t[3];
    if (gltf) {
        float r = -t[4], c = cosf(r), s = sinf(r);
        float ox = t[0] - 0.5f * sx * (-c + s + 1), oy = 1 - sy - t[1] + 0.5f * sy * (s + c - 1);
        ref->rotation = -r;
        ref->offset[0] = ox + s * sy;
        ref->offset[1] = 1 - oy - c * sy;
    } else {
        float r = t[4], c = cosf(r), s = sinf(r), dx = t[0] - 0.5f, dy = t[1] - 0.5f;
        ref->rotation = -r;
        ref->offset[0] = sx * (c * dx - s * dy) + 0.5f;
        ref->offset[1] = sy * (s * dx + c * dy) + 0.5f;
    }
    ref->scale[0] = snap(sx, 1);
    ref->scale[1] = snap(sy, 1);
    ref->rotation = snap(ref->rotation, 0);
    ref->offset[0] = snap(ref->offset[0], 0);
    ref->offset[1] = snap(ref->offset[1], 0);
    float all[5] = {ref->offset[0], ref->offset[1], ref->scale[0], ref->scale[1], ref->rotation};
    for (int i = 0; i < 5; i++)
        if (!isfinite(all[i])) {                  /* a file's nonsense: no transform */
            ref->offset[0] = ref->offset[1] = ref->rotation = 0;
            ref->scale[0] = ref->scale[1] = 1;
            break;
        }
}

/* The material's texture of `type` into ref, with its uv set, sampler and transform.
 * false when the material has none; a texture that cannot be read is warned about
 * (and counted) and leaves ref without a texture. */
static bool read_ref(import_ctx *c, const struct aiMaterial *am, enum aiTextureType type,
                     const char *material, bool gltf, sc_texture_ref *ref)
{
    struct aiString file;
    if (aiGetMaterialTextureCount(am, type) == 0 ||
        aiGetMaterialString(am, AI_MATKEY_TEXTURE(type, 0), &file) != AI_SUCCESS || file.length == 0 ||
        !strncmp(file.data, "$texture_dummy", 14))     /* assimp's name for "no skin" (MD2) */
        return false;
    char why[SC_ERR_MAX];
    int t = texture_index(c, file.data, why);
    if (t < 0) {
        sc_warn_unreadable_texture(c->s, c->path, material, why);
        return true;
    }
    ref->texture = t;
    int v;
    if (aiGetMaterialInteger(am, AI_MATKEY_UVWSRC(type, 0), &v) == AI_SUCCESS && v > 0 && v < 8) {
        ref->uv_set = v;
        if (v > 1)
            sc_scene_warn(c->s, "%.300s: material '%s': %.100s uses texture coordinate set %d; meshes "
                          "carry sets 0 and 1, and it is sampled with set 0", c->path, material, file.data, v);
    }
    if (aiGetMaterialInteger(am, AI_MATKEY_MAPPINGMODE_U(type, 0), &v) == AI_SUCCESS)
        ref->sampler.wrap_u = wrap_of(v);
    if (aiGetMaterialInteger(am, AI_MATKEY_MAPPINGMODE_V(type, 0), &v) == AI_SUCCESS)
        ref->sampler.wrap_v = wrap_of(v);
    int mag = 0, min = 0;
    aiGetMaterialInteger(am, AI_MATKEY_GLTF_MAPPINGFILTER_MAG(type, 0), &mag);
    aiGetMaterialInteger(am, AI_MATKEY_GLTF_MAPPINGFILTER_MIN(type, 0), &min);
    ref->sampler.filter = filter_of(mag, min);
    float tr[5];
    unsigned n = 5;
    if (aiGetMaterialFloatArray(am, AI_MATKEY_UVTRANSFORM(type, 0), tr, &n) == AI_SUCCESS && n == 5)
        uv_transform(tr, gltf, ref);
    return true;
}

static int add_material(import_ctx *c, const struct aiMaterial *am, unsigned i)
{
    struct aiString name, mode;
    char n[SC_NAME_MAX];
    if (aiGetMaterialString(am, AI_MATKEY_NAME, &name) == AI_SUCCESS && name.length)
        snprintf(n, sizeof n, "%.63s", name.data);
    else
        snprintf(n, sizeof n, "material%u", i);
    /* the base colour (glTF baseColorFactor; assimp also writes it as diffuse), else the
     * diffuse colour of the other formats */
    struct aiColor4D base = {0.8f, 0.8f, 0.8f, 1};
    if (aiGetMaterialColor(am, AI_MATKEY_BASE_COLOR, &base) != AI_SUCCESS)
        aiGetMaterialColor(am, AI_MATKEY_COLOR_DIFFUSE, &base);
    int k = sc_scene_add_material(c->s, n, base.r, base.g, base.b, 0.3f, 0.5f, 32.0f);
    if (k < 0) return -1;
    sc_material *m = &c->s->materials[k];
    bool gltf = aiGetMaterialString(am, AI_MATKEY_GLTF_ALPHAMODE, &mode) == AI_SUCCESS;
    float f;
    m->alpha = unit(aiGetMaterialFloat(am, AI_MATKEY_OPACITY, &f) == AI_SUCCESS ? f : base.a, 1);
    int two;
    if (aiGetMaterialInteger(am, AI_MATKEY_TWOSIDED, &two) == AI_SUCCESS) m->double_sided = two != 0;
    struct aiColor4D e = {0, 0, 0, 1};
    if (aiGetMaterialColor(am, AI_MATKEY_COLOR_EMISSIVE, &e) == AI_SUCCESS) {
        m->emissive[0] = factor(e.r); m->emissive[1] = factor(e.g); m->emissive[2] = factor(e.b);
    }
    if (!read_ref(c, am, aiTextureType_BASE_COLOR, n, gltf, &m->albedo_map))
        read_ref(c, am, aiTextureType_DIFFUSE, n, gltf, &m->albedo_map);
    if (!read_ref(c, am, aiTextureType_EMISSIVE, n, gltf, &m->emissive_map))
        read_ref(c, am, aiTextureType_EMISSION_COLOR, n, gltf, &m->emissive_map);
    if (read_ref(c, am, aiTextureType_NORMALS, n, gltf, &m->normal_map) &&
        aiGetMaterialFloat(am, AI_MATKEY_GLTF_TEXTURE_SCALE(aiTextureType_NORMALS, 0), &f) == AI_SUCCESS)
        m->normal_scale = isfinite(f) ? f : 1;
    if (!gltf) {
        /* Some exporters write opacity 0 for opaque materials (FBX's TransparencyFactor
         * read backwards): a material nobody could see is taken as opaque, and said. */
        if (m->alpha == 0) {
            m->alpha = 1;
            sc_scene_warn(c->s, "%.300s: material '%s': opacity 0 taken as opaque", c->path, n);
        }
        /* no alpha mode: blend where something is see-through (as for OBJ) */
        const sc_texture *t = m->albedo_map.texture >= 0 ? &c->s->textures[m->albedo_map.texture] : NULL;
        if (m->alpha < 1 || (t && t->has_alpha)) m->alpha_mode = SC_ALPHA_BLEND;
        read_ref(c, am, aiTextureType_AMBIENT_OCCLUSION, n, gltf, &m->occlusion_map);
        return k;
    }
    /* glTF 2.0: metallic-roughness, alphaMode and alphaCutoff, the metallic-roughness
     * texture (assimp 5.2: aiTextureType_UNKNOWN) and occlusion (aiTextureType_LIGHTMAP) */
    m->model = SC_SHADING_METALLIC_ROUGHNESS;
    /* KHR_materials_emissive_strength */
    if (aiGetMaterialFloat(am, AI_MATKEY_EMISSIVE_INTENSITY, &f) == AI_SUCCESS && isfinite(f) && f >= 0)
        for (int e3 = 0; e3 < 3; e3++) m->emissive[e3] = factor(m->emissive[e3] * f);
    m->alpha_mode = !strcmp(mode.data, "MASK") ? SC_ALPHA_MASK : !strcmp(mode.data, "BLEND")
                    ? SC_ALPHA_BLEND : SC_ALPHA_OPAQUE;
    if (aiGetMaterialFloat(am, AI_MATKEY_GLTF_ALPHACUTOFF, &f) == AI_SUCCESS) m->alpha_cutoff = unit(f, 0.5f);
    m->metallic = aiGetMaterialFloat(am, AI_MATKEY_METALLIC_FACTOR, &f) == AI_SUCCESS ? unit(f, 1) : 1;
    m->roughness = aiGetMaterialFloat(am, AI_MATKEY_ROUGHNESS_FACTOR, &f) == AI_SUCCESS ? unit(f, 1) : 1;
    if (!read_ref(c, am, aiTextureType_UNKNOWN, n, gltf, &m->metallic_roughness_map))
        read_ref(c, am, aiTextureType_METALNESS, n, gltf, &m->metallic_roughness_map);
    enum aiTextureType occ = aiTextureType_LIGHTMAP;
    if (!read_ref(c, am, occ, n, gltf, &m->occlusion_map) &&
        read_ref(c, am, aiTextureType_AMBIENT_OCCLUSION, n, gltf, &m->occlusion_map))
        occ = aiTextureType_AMBIENT_OCCLUSION;
    if (aiGetMaterialFloat(am, AI_MATKEY_GLTF_TEXTURE_STRENGTH(occ, 0), &f) == AI_SUCCESS)
        m->occlusion_strength = unit(f, 1);
    return k;
}

static int add_materials(import_ctx *c, int *map)
{
    for (unsigned i = 0; i < c->as->mNumMaterials; i++)
        if ((map[i] = add_material(c, c->as->mMaterials[i], i)) < 0) return -1;
    return 0;
}

/* Each of the file's materials (map: their indices in s) that reads texture coordinate
 * set 1 when no mesh of the file has one (set 0 is read there): a warning. */
static void warn_missing_set1(const import_ctx *c, const int *map, unsigned nmat)
{
    for (unsigned i = 0; i < nmat; i++) {
        const sc_material *m = &c->s->materials[map[i]];
        const sc_texture_ref *refs[] = {&m->albedo_map, &m->metallic_roughness_map, &m->emissive_map,
                                        &m->normal_map, &m->occlusion_map};
        for (size_t k = 0; k < sizeof refs / sizeof refs[0]; k++)
            if (refs[k]->texture >= 0 && refs[k]->uv_set == 1) {
                sc_scene_warn(c->s, "%.300s: material '%s' reads texture coordinate set 1, which the "
                              "file's meshes do not have; it reads set 0", c->path, m->name);
                break;
            }
    }
}

/* false when a face refers to a vertex the mesh does not have. set1: some mesh of the
 * file has a texture coordinate set 1; then every vertex gets one, set 0's where its
 * mesh has none (as sc_flatten does for meshes without it). */
static bool append_mesh(sc_mesh_builder *b, const struct aiMesh *m, uint32_t material, bool set1)
{
    uint32_t base = (uint32_t)b->nv;
    const struct aiVector3D *uv = m->mTextureCoords[0], *uv1 = m->mTextureCoords[1] ? m->mTextureCoords[1] : uv;
    for (unsigned v = 0; v < m->mNumVertices; v++) {
        uint32_t i = sc_mb_vertex(b, m->mVertices[v].x, m->mVertices[v].y, m->mVertices[v].z);
        if (m->mNormals) sc_mb_normal(b, i, m->mNormals[v].x, m->mNormals[v].y, m->mNormals[v].z);
        if (uv) sc_mb_uv(b, i, uv[v].x, uv[v].y);
        if (set1) sc_mb_uv1(b, i, uv1 ? uv1[v].x : 0.0f, uv1 ? uv1[v].y : 0.0f);
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
static int import_assimp(sc_scene *s, const char *path, const sc_load_opts *o, char err[SC_ERR_MAX])
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
    import_ctx c = {s, as, path, o, {.level0_only = true}};
    bool mats = as->mNumMaterials <= SC_MAX_IMPORT_MATERIALS && add_materials(&c, map) == 0;
    sc_texture_cache_free(&c.cache);
    if (!mats) {
        aiReleaseImport(as);
        snprintf(err, SC_ERR_MAX, "%s: more than %d materials (SC_MAX_IMPORT_MATERIALS) or out "
                 "of memory", path, SC_MAX_IMPORT_MATERIALS);
        return -1;
    }
    sc_mesh_builder b = {0};
    bool ok = true, set1 = false;
    for (unsigned i = 0; i < as->mNumMeshes; i++) set1 |= as->mMeshes[i]->mTextureCoords[1] != NULL;
    for (unsigned i = 0; ok && i < as->mNumMeshes; i++) {
        const struct aiMesh *m = as->mMeshes[i];
        ok = m->mMaterialIndex < as->mNumMaterials || as->mNumMaterials == 0;
        ok = ok && append_mesh(&b, m, as->mNumMaterials ? (uint32_t)map[m->mMaterialIndex] : 0, set1);
    }
    if (ok && !set1) warn_missing_set1(&c, map, as->mNumMaterials);
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
    FILE *f = sc_open_input(path, "rb", o->max_memory, err);   /* a FIFO would stall the child */
    if (!f) return -1;
    fclose(f);
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
