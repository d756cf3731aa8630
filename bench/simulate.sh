#!/bin/sh
# simulate.sh BUILD [PART ...] — the virtual-time simulator's checks and the papers' tables
# at their thread counts (docs/many-cores.md, docs/footprint.md); `make bench-simulate`
# runs every part. Each part writes its gramps-footprint study under BUILD/simulate/PART
# and prints its tables (Markdown) on stdout:
#
#   here     real 1 and 2 workers against --simulate 1 and 2 on this machine: bunny and
#            fairy at 1024x1024, raster, raytrace and hybrid, all four schedulers
#   16core   --simulate 1,4,8,16 against the 16-core Xeon's measured footprint-1024.csv
#            (docs/data/16-core-2026-11-27): predicted speedup times the Xeon's own
#            1-worker frame against its measured frame, and peak footprints
#   papers   --simulate 24,32 on teapot, courtyard and fairy at 1024x1024: Sanchez 2011
#            Table III and Sugerman 2010 Table 4.2 beside ours (the study's footprint.md)
#   speedup  --simulate 1-64 on bunny and fairy at 1024x1024, raster and raytrace, all
#            schedulers: the speedup curves (Sanchez Fig. 4 at 1-24) and the frame
#            times beside llvmpipe's and Embree's measured 16-core curves
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

# compare.awk A.csv B.csv: for the configurations in both (scene, pipeline, scheduler,
# workers), B's frame time and peak against A's; `scale` multiplies B's times by A's
# 1-worker frame over B's (the same graph on a faster or slower core).
compare() {
    awk -F, -v scale="$3" -v what="$4" '
    FNR == 1 { next }
    { k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4 }
    FILENAME == ARGV[1] { ms[k] = $8; peak[k] = $11; if ($4 == 1) one[$1, $2, $3] = $8; next }
    (k in ms) {
        t = $8
        if (scale) { if ($4 == 1) own[$1, $2, $3] = $8; t = $8 * one[$1, $2, $3] / own[$1, $2, $3] }
        e = 100 * (t / ms[k] - 1); p = peak[k] > 0 ? 100 * ($11 / peak[k] - 1) : 0
        rows[++n] = sprintf("| %s | %s | %s | %s | %.1f | %.1f | %+.0f%% | %.0f | %.0f | %+.0f%% |",
                            $1, $2, $3, $4, ms[k], t, e, peak[k] / 1024, $11 / 1024, p)
        if ($4 > 1 || !scale) { ae = e < 0 ? -e : e; ap = p < 0 ? -p : p
            se[$4] += ae; sp[$4] += ap; cnt[$4]++; if (ae > me[$4]) me[$4] = ae; if (ap > mp[$4]) mp[$4] = ap
            if (ae <= 15) ok[$4]++; if (ap <= 25) okp[$4]++ }
    }
    END {
        printf "\n%s\n\n| scene | pipeline | scheduler | workers | measured ms | predicted ms | error | measured peak KiB | predicted peak KiB | error |\n|---|---|---|---|---|---|---|---|---|---|\n", what
        for (i = 1; i <= n; i++) print rows[i]
        printf "\n| workers | mean abs. frame error | largest | within 15%% | mean abs. peak error | largest | within 25%% |\n|---|---|---|---|---|---|---|\n"
        for (w in cnt) printf "| %s | %.0f%% | %.0f%% | %d of %d | %.0f%% | %.0f%% | %d of %d |\n", w,
            se[w] / cnt[w], me[w], ok[w], cnt[w], sp[w] / cnt[w], mp[w], okp[w], cnt[w]
    }' "$1" "$2"
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
        "$fp" --workers 1,2 $big --out "$out/here-real"
        "$fp" --simulate 1,2 $big --out "$out/here-sim"
        echo "# cores online: $(getconf _NPROCESSORS_ONLN); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
        compare "$out/here-real/footprint.csv" "$out/here-sim/footprint.csv" 0 \
            "Simulated against real on this machine (1024x1024, median of $repeats frames)"
        ;;
    16core)
        "$fp" --simulate 1,4,8,16 $big --out "$out/16core-sim"
        compare "$data" "$out/16core-sim/footprint.csv" 1 \
            "Simulated against the 16-core Xeon (predicted ms: the Xeon's 1-worker frame x simulated 1-worker frame / simulated P-worker frame)"
        ;;
    papers)
        "$fp" --simulate 24,32 --size 1024x1024 --scenes teapot,courtyard,fairy --repeats "$repeats" -q \
            --out "$out/papers"
        sed -n '/^## Beside Sanchez/,/^## Plots/p' "$out/papers/footprint.md" | sed '$d'
        ;;
    speedup)
        "$fp" --simulate 1,2,4,8,16,24,32,48,64 --pipelines raster,raytrace $big --out "$out/speedup"
        speedups "$out/speedup/footprint.csv"
        ;;
    *) echo "simulate.sh: unknown part '$part' (here, 16core, papers, speedup)" >&2; exit 2 ;;
    esac
done
