#!/bin/sh
# bench/hybrid.sh BUILD: the Extended Direct3D hybrid against the ray tracer it must
# beat (issue 31's target: -p hybrid at most 1.0x -p raytrace), with -p
# hybrid-visibility beside them, on bunny.obj (where ../shared/scenes has it),
# courtyard and fairy. Each configuration's figure is the median over ROUNDS rounds of
# gramps-render's median frame_ms of 10 frames. The pipelines take turns within each
# round, so a change in the machine's load reaches all three alike. Prints lines
# "name value unit".
# SIZE (512x512), ROUNDS (3) and WORKERS ("1 <cores>") choose the runs.
build=$1
size=${SIZE:-512x512}
rounds=${ROUNDS:-3}
workers=${WORKERS:-"1 $(nproc)"}
render=$build/bin/gramps-render
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gramps-bench-hybrid-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

scenes="courtyard fairy"
[ -r ../shared/scenes/bunny.obj ] && scenes="../shared/scenes/bunny.obj $scenes"
pipelines="raytrace hybrid hybrid-visibility"

# One render's median frame_ms (its stats file's "frame_ms" line), or nothing on failure.
frame_median() {
    "$render" -q -t "$1" -p "$2" --size "$size" --frames 10 --stats "$tmp/s.json" \
        -o "$tmp/i.png" "$3" >/dev/null 2>&1 || return 0
    sed -n 's/^"frame_ms": {"median": \([0-9.]*\).*/\1/p' "$tmp/s.json"
}

r=1
while [ "$r" -le "$rounds" ]; do
    for w in $workers; do
        for s in $scenes; do
            for p in $pipelines; do
                echo "$w $(basename "$s" .obj) $p $(frame_median "$w" "$p" "$s")" >>"$tmp/res"
            done
        done
    done
    r=$((r + 1))
done

# Medians per configuration, then each pipeline's ratio to raytrace.
sort -k1,1n -k2,2 -k3,3 -k4,4g "$tmp/res" | awk '
    NF == 4 { key = $1 " " $2 " " $3; v[key, ++n[key]] = $4 }
    END {
        for (key in n) {
            m = n[key]; split(key, f, " ")
            med[key] = m % 2 ? v[key, (m + 1) / 2] : (v[key, m / 2] + v[key, m / 2 + 1]) / 2
            printf "%s_frame_ms_%s_%st %.2f ms\n", f[3], f[2], f[1], med[key]
        }
        for (key in n) {
            split(key, f, " ")
            if (f[3] == "raytrace") continue
            base = f[1] " " f[2] " raytrace"
            if (base in med && med[base] > 0)
                printf "%s_vs_raytrace_%s_%st %.2f ratio\n", f[3], f[2], f[1], med[key] / med[base]
        }
    }' | sort
