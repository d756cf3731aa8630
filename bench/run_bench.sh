#!/bin/sh
# Runs every benchmark program; each prints lines "name value unit".
build=$1
for b in "$build"/bench/*; do
    [ -x "$b" ] || continue
    echo "# $(basename "$b")"
    "$b" || echo "# $(basename "$b") failed (exit $?)"
done
