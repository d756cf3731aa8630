#!/bin/sh
# Prints a C file that defines the OpenCL C source $1 as a string, named after its path:
# raytracer/opencl/traverse.cl -> `const char cl_raytracer_opencl_traverse[]`, exported
# (GR_API) so plugins and tests can launch the built-in kernels too.
set -e
name=cl_$(printf '%s' "${1%.cl}" | tr -c 'A-Za-z0-9\n' '_')
printf '/* Generated from %s by mk/cl_embed.sh. */\n#include "gramps/api.h"\n' "$1"
printf 'GR_API extern const char %s[];\nconst char %s[] =\n' "$name" "$name"
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$/\\n"/' "$1"
printf ';\n'
