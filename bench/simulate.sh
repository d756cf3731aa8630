#!/bin/sh
# simulate.sh BUILD [PART ...] — the virtual-time simulator's checks and the papers' tables
# at their thread counts (docs/many-cores.md, docs/footprint.md); `make bench-simulate`
# runs every part. Each part writes its gramps-footprint study under BUILD/simulate/PART
# and prints its tables (Markdown) on stdout:
#
#   here     on this machine: --simulate 1 against a real 1-worker frame's CPU time, then
#            real 1 and 2 workers' frames against --simulate 1 and 2: bunny and fairy at
#            1024x1024, raster, raytrace and hybrid, all four schedulers (wall-clock
#            frames mean something only on an otherwise idle machine)
#   16core   --simulate 1,2,4,8,16 against the 16-core Xeon's measured footprint-1024.csv
#            (docs/data/16-core-2026-11-27): simulated frames times one speed factor
#            between the Xeon's cores and this machine's, and peak footprints
#   papers   --simulate 24,32 on teapot, courtyard and fairy at 512x512: Sanchez 2011
#            Table III and Sugerman 2010 Table 4.2 beside ours (the study's footprint.md)
#   speedup  --simulate 1-64 on bunny at 1024x1024, raster and raytrace, all schedulers:
#            the speedup curves (Sanchez Fig. 4 at 1-24) and the frame times beside
#            llvmpipe's and Embree's measured 16-core curves
#
# REPEATS (default 3) sets the measured frames per configuration.
set -eu
build=$1
shift
parts=${*:-here 16core papers speedup}
repeats=${REPEATS:-3}
fp="$build/bin/gramps-footprint"
out="$build/simulate"
data=docs/data/16-core-2026-11-27/footprint-1024.csv
big="--size 1024x1024 --scenes fairy,../shared/scenes/bunny.obj --repeats $repeats -q"
mkdir -p "$out"

# compare MEASURED.csv SIMULATED.csv SCALE TITLE [SCHEDULERS]: bench/sim_compare.awk.
compare() {
    awk -F, -v scale="$3" -v what="$4" -v only="${5:-}" -f bench/sim_compare.awk "$1" "$2"
}

# cpu_frame SCENE PIPELINE: the CPU time one real 1-worker frame takes (ms), from the
# process's user + system time at 12 frames less that at 2, so that loading and the
# warm-up cancel: unlike its wall time, a loaded machine's other work does not count.
cpu_frame() {
    for n in 2 12; do
        /usr/bin/time -f "%U %S" "$build/bin/gramps-render" -q -p "$2" -t 1 --frames $n \
            -o "$out/frame.png" "$1" 2>&1 >/dev/null | tail -1
    done | awk 'NR == 1 { a = $1 + $2 } NR == 2 { printf "%.1f", ($1 + $2 - a) * 100 }'
}

sim_frame() {
    "$build/bin/gramps-render" -p "$2" --simulate 1 --frames 10 -o "$out/frame.png" "$1" |
        awk '/^frame/ { print $2 }'
}

# speedup.awk STUDY.csv: frame ms and speedup over the 1-worker frame per configuration.
speedups() {
    awk -F, '
    FNR == 1 { next }
    { k = $1 " | " $2 " | " $3; if (!(k in seen)) { seen[k] = 1; keys[++nk] = k }
      ms[k, $4] = $8; if (!($4 in hasw)) { hasw[$4] = 1; ws[++nw] = $4 } }
    END {
        printf "\n| scene | pipeline | scheduler |"; for (i = 1; i <= nw; i++) printf " %s |", ws[i]
        printf "\n|---|---|---|"; for (i = 1; i <= nw; i++) printf "---|"; printf "\n"
        for (j = 1; j <= nk; j++) {
            printf "| %s |", keys[j]
            for (i = 1; i <= nw; i++) printf " %.1f ms (%.1fx) |", ms[keys[j], ws[i]], ms[keys[j], ws[1]] / ms[keys[j], ws[i]]
            printf "\n"
        }
    }' "$1"
}

for part in $parts; do
    case $part in
    here)
        echo "\nOne worker, GRAMPS scheduler, 1024x1024: real CPU time per frame against --simulate 1\n"
        echo "| scene | pipeline | real CPU ms | simulated ms | error |"
        echo "|---|---|---|---|---|"
        for scene in ../shared/scenes/bunny.obj fairy; do
            for p in raster raytrace hybrid; do
                real=$(cpu_frame "$scene" $p) sim=$(sim_frame "$scene" $p)
                echo "| $(basename $scene .obj) | $p | $real | $sim | $(awk "BEGIN { printf \"%+.0f%%\", 100 * ($sim / $real - 1) }") |"
            done
        done
        "$fp" --workers 1,2 $big --out "$out/here-real"
        "$fp" --simulate 1,2 $big --out "$out/here-sim"
        compare "$out/here-real/footprint.csv" "$out/here-sim/footprint.csv" 0 \
            "Simulated against real wall-clock frames on this machine (1024x1024, median of $repeats; cores online: $(getconf _NPROCESSORS_ONLN), load average $(cut -d' ' -f1-3 /proc/loadavg))"
        ;;
    16core)
        "$fp" --simulate 1,2,4,8,16 $big --out "$out/16core-sim"
        compare "$data" "$out/16core-sim/footprint.csv" 1 \
            "Simulated against the 16-core Xeon's footprint-1024.csv (build 0ea2b6a: Task-Stealing and Static changed since, marked *, not in the summary)" \
            "gramps breadth-first"
        ;;
    papers)
        "$fp" --simulate 24,32 --size 512x512 --scenes teapot,courtyard,fairy --repeats "$repeats" -q \
            --out "$out/papers"
        sed -n '/^## Beside Sanchez/,/^## Plots/p' "$out/papers/footprint.md" | sed '$d'
        ;;
    speedup)
        "$fp" --simulate 1,4,8,16,24,32,64 --pipelines raster,raytrace --size 1024x1024 \
            --scenes ../shared/scenes/bunny.obj --repeats "$repeats" -q --out "$out/speedup"
        speedups "$out/speedup/footprint.csv"
        ;;
    *) echo "simulate.sh: unknown part '$part' (here, 16core, papers, speedup)" >&2; exit 2 ;;
    esac
done
