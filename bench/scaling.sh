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
# The bench_rs_llvmpipe names end in _<scene>_<n>t, the bench_rt_embree ones in _<n>t_<scene>.
function key(style, s, t) { return style == "raster" ? "_" s "_" t "t" : "_" t "t_" s }
function table(title, peer, list, style, ours_ms, peer_ms, ours_sp, peer_sp, ratio,    n, i, t, k, sc) {
    n = split(list, sc, " ")
    for (i = 1; i <= n; i++) {
        printf "\n%s, %s\n\n| threads | ours ms | %s ms | our speedup | %s speedup | ours / %s |\n|---|---|---|---|---|---|\n", title, sc[i], peer, peer, peer
        for (t = 1; t <= nt; t++) {
            k = key(style, sc[i], th[t])
            printf "| %s | %s | %s | %s | %s | %s |\n", th[t], cell(ours_ms k), cell(peer_ms k),
                   cell(ours_sp k), cell(peer_sp k), cell(ratio k)
        }
    }
}
{ v[$1] = $2 }
/^raster_frame_ms_/ { s = $1; sub(/^raster_frame_ms_/, "", s); sub(/_[0-9]+t$/, "", s); if (!(s in rs)) { rs[s] = 1; rlist = rlist " " s } }
/^rt_frame_[0-9]+t_/ { s = $1; sub(/^rt_frame_[0-9]+t_/, "", s); if (!(s in ts)) { ts[s] = 1; tlist = tlist " " s } }
END {
    nt = split(threads, th, ",")
    table("raster graph against llvmpipe", "llvmpipe", rlist, "raster", "raster_frame_ms",
          "llvmpipe_frame_ms", "raster_speedup", "llvmpipe_speedup", "raster_vs_llvmpipe")
    table("ray tracer against Embree", "Embree", tlist, "rt", "rt_frame", "embree_frame",
          "rt_speedup", "embree_speedup", "ratio_frame")
}' threads="$threads" "$log"
