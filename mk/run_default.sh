#!/bin/sh
# `make run`: renders the built-in default scene once the renderer exists; until then
# runs the runtime demo graph and prints its statistics.
build=$1
mkdir -p out
if [ -x "$build/bin/gramps-render" ]; then
    exec "$build/bin/gramps-render" -o out/teapot.png --stats out/teapot.json teapot
fi
exec "$build/bin/gramps-demo"
