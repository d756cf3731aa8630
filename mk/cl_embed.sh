#!/bin/sh
# Prints a C file that defines the OpenCL C source $1 as a string, named after its path:
# pipelines/raytrace/opencl/trace.cl -> `const char cl_pipelines_raytrace_opencl_trace[]`
# (hidden, as every library symbol not in an installed header).
set -e
name=cl_$(printf '%s' "${1%.cl}" | tr -c 'A-Za-z0-9\n' '_')
printf '/* Generated from %s by mk/cl_embed.sh. */\n' "$1"
printf 'extern const char %s[];\nconst char %s[] =\n' "$name" "$name"
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$/\\n"/' "$1"
printf ';\n'
