#!/bin/sh
# gallery.sh — renders the README's gallery: each model of the table below, and the
# built-in showcase, through the raster, ray-tracing and hybrid graphs at 256x256, to
# docs/gallery/NAME-PIPELINE.png (make gallery). The models are Debian's
# assimp-testmodels with textures (3DS/test1.3ds is left out: its three textured boxes
# lie on top of each other, so one texture shows); a model that is not installed is
# skipped with a message.
#
# usage: tools/gallery.sh [BUILD_DIR [OUT_DIR [MODELS_DIR]]]
set -eu
build=${1:-build}
out=${2:-docs/gallery}
models=${3:-/usr/share/assimp/models}
render="$build/bin/gramps-render"
size=256x256

# name            file under MODELS_DIR ("builtin:NAME" for a built-in scene)
list="showcase            builtin:showcase
cesium-milk-truck   glTF/CesiumMilkTruck/CesiumMilkTruck.gltf
box-textured        glTF2/BoxTextured-glTF/BoxTextured.gltf
box-textured-glb    glTF2/BoxTextured-glTF-Binary/BoxTextured.glb
box-textured-embedded glTF2/BoxTextured-glTF-Embedded/BoxTextured.gltf
box-textured-specgloss glTF2/BoxTextured-glTF-pbrSpecularGlossiness/BoxTextured.gltf
box-textured-webgl  glTF2/BoxTextured-glTF-techniqueWebGL/BoxTextured.gltf
box-texcoords       glTF2/BoxTexcoords-glTF/boxTexcoords.gltf
cube-3ds            3DS/cube_with_diffuse_texture.3DS
spider-obj          OBJ/spider.obj"

[ -x "$render" ] || { echo "gallery.sh: $render not found: run make first" >&2; exit 1; }
mkdir -p "$out"
echo "$list" | while read -r name file; do
    case $file in
        builtin:*) scene=${file#builtin:} ;;
        *) scene="$models/$file"
           [ -f "$scene" ] || { echo "gallery.sh: skipping $name: $scene not found (apt-get install assimp-testmodels)" >&2; continue; } ;;
    esac
    for p in raster raytrace hybrid; do
        "$render" -q --size $size -p $p -o "$out/$name-$p.png" "$scene"
    done
    echo "$out/$name-{raster,raytrace,hybrid}.png"
done
