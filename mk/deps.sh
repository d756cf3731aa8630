#!/bin/sh
# Checks that the Debian packages the build needs are present. As root it installs the
# missing ones with apt-get; otherwise it stops with the exact command to run.
set -e
need=""
have_header() { [ -f "/usr/include/$1" ]; }
have_header stb/stb_image.h       || need="$need libstb-dev"
have_header ini.h                 || need="$need libinih-dev"
have_header zlib.h                || need="$need zlib1g-dev"
have_header jpeglib.h             || need="$need libjpeg62-turbo-dev"
have_header OpenEXR/openexr.h     || need="$need libopenexr-dev"
have_header assimp/cimport.h      || need="$need libassimp-dev"
have_header metis.h               || need="$need libmetis-dev"
have_header glpk.h                || need="$need libglpk-dev"
# OpenCL (accel/): Khronos headers, the ICD loader to link against, and PoCL, the CPU
# implementation the tests run on where no GPU driver installs its own ICD.
have_header CL/cl.h               || need="$need opencl-headers"
[ -f /usr/lib/$(gcc -print-multiarch 2>/dev/null)/libOpenCL.so ] || [ -f /usr/lib/libOpenCL.so ] || need="$need ocl-icd-opencl-dev"
[ -f /etc/OpenCL/vendors/pocl.icd ] || need="$need pocl-opencl-icd"
command -v pkg-config >/dev/null 2>&1 || need="$need pkg-config"
# gramps-view (mk/viewer.mk): SDL2, SDL2_ttf and a TrueType font. Installed as root; a
# user without them still builds and tests everything else, so they only get a note.
view=""
have_header SDL2/SDL.h     || view="$view libsdl2-dev"
have_header SDL2/SDL_ttf.h || view="$view libsdl2-ttf-dev"
[ -d /usr/share/fonts/truetype/dejavu ] || view="$view fonts-dejavu-core"
if [ -n "$view" ] && [ "$(id -u)" = 0 ]; then
    need="$need$view"
elif [ -n "$view" ]; then
    echo "deps: gramps-view will not be built without:$view (sudo apt-get install -y$view)" >&2
fi
# gramps-render-mpi (mk/mpi.mk): Open MPI's headers, library and mpirun; the same deal.
mpi=""
pkg-config --exists ompi-c 2>/dev/null || mpi="$mpi libopenmpi-dev"
command -v mpirun >/dev/null 2>&1     || mpi="$mpi openmpi-bin"
if [ -n "$mpi" ] && [ "$(id -u)" = 0 ]; then
    need="$need$mpi"
elif [ -n "$mpi" ]; then
    echo "deps: gramps-render-mpi will not be built without:$mpi (sudo apt-get install -y$mpi)" >&2
fi
# Debian's assimp test models (glTF, 3DS, OBJ with textures): tests/render/test_materials
# loads them and skips, saying so, without them.
if [ ! -d /usr/share/assimp/models ] && [ "$(id -u)" = 0 ]; then
    need="$need assimp-testmodels"
elif [ ! -d /usr/share/assimp/models ]; then
    echo "deps: test_materials skips Debian's models without assimp-testmodels (sudo apt-get install -y assimp-testmodels)" >&2
fi
[ -z "$need" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "deps: installing$need" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq $need >/dev/null
else
    echo "deps: missing Debian packages. Run:" >&2
    echo "    sudo apt-get install -y$need" >&2
    exit 1
fi
