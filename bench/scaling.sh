#!/bin/sh
# scaling.sh BUILD [THREADS] — the many-core figures: the raster graph against llvmpipe
# and the ray tracer against Embree (their best configurations, bench_rs_llvmpipe and
# bench_rt_embree --frames-only) at each thread count of THREADS (default
# 1,2,4,8,16), then one table per renderer and scene: frame times, speedups over each
# one's own 1-thread frame, and ours / the peer's. `make bench-scaling THREADS=...` runs
# it. The benchmarks' own lines go to BUILD/scaling.log.
set -eu
build=$1
threads=${2:-1,2,4,8,16}
log=$build/scaling.log
: >"$log"
"$build/bench/bench_rs_llvmpipe" --threads "$threads" >>"$log"
"$build/bench/bench_rt_embree" --frames-only --threads "$threads" >>"$log"
echo "# cores online: $(getconf _NPROCESSORS_ONLN); thread counts: $threads; lines in $log"
# Lines are "name value unit"; the thread count is the "<n>t" field of the name.
awk '
function cell(k) { return (k in v) ? v[k] : "-" }
function raster_key(s, t) { return "_" s "_" t "t" }
function rt_key(s, t) { return "_" t "t_" s }
{ v[$1] = $2 }
/^raster_frame_ms_/ { s = $1; sub(/^raster_frame_ms_/, "", s); sub(/_[0-9]+t$/, "", s); if (!(s in rs)) { rs[s] = 1; rlist = rlist " " s } }
/^rt_frame_[0-9]+t_/ { s = $1; sub(/^rt_frame_[0-9]+t_/, "", s); if (!(s in ts)) { ts[s] = 1; tlist = tlist " " s } }
END {
    nt = split(threads, th, ",")
    n = split(rlist, sc, " ")
    for (i = 1; i <= n; i++) {
        s = sc[i]
        printf "\nraster graph against llvmpipe, %s\n\n| threads | ours ms | llvmpipe ms | our speedup | llvmpipe speedup | ours / llvmpipe |\n|---|---|---|---|---|---|\n", s
        for (t = 1; t <= nt; t++) {
            k = raster_key(s, th[t])
            printf "| %s | %s | %s | %s | %s | %s |\n", th[t], cell("raster_frame_ms" k),
                   cell("llvmpipe_frame_ms" k), cell("raster_speedup" k),
                   cell("llvmpipe_speedup" k), cell("raster_vs_llvmpipe" k)
        }
    }
    n = split(tlist, sc, " ")
    for (i = 1; i <= n; i++) {
        s = sc[i]
        printf "\nray tracer against Embree, %s\n\n| threads | ours ms | Embree ms | our speedup | Embree speedup | ours / Embree |\n|---|---|---|---|---|---|\n", s
        for (t = 1; t <= nt; t++) {
            k = rt_key(s, th[t])
            printf "| %s | %s | %s | %s | %s | %s |\n", th[t], cell("rt_frame" k),
                   cell("embree_frame" k), cell("rt_speedup" k), cell("embree_speedup" k),
                   cell("ratio_frame" k)
        }
    }
}' threads="$threads" "$log"
