# sim_compare.awk — a simulated gramps-footprint study against a measured one (both
# footprint.csv; bench/simulate.sh runs it):
#
#   awk -F, -v scale=0|1 -v what="TITLE" [-v only="gramps breadth-first"] -f sim_compare.awk MEASURED.csv SIMULATED.csv
#
# For each configuration (scene, pipeline, scheduler, workers) in both: the measured and
# predicted frame time (median) and peak footprint (median) and their errors, then the
# errors per worker count: mean and largest absolute, and how many are within 15% (time)
# and 25% (peak), the issue's tolerances. scale=1 (another machine's measurements): the
# predicted time is the simulated one times the median over all 1-worker configurations
# of measured / simulated, the one speed factor between that machine's cores and this
# one's. `only` restricts the summary to those schedulers (the others' rows are listed,
# marked *).
FNR == 1 { next }
{ k = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4 }
FILENAME == ARGV[1] { ms[k] = $8; peak[k] = $11; next }
(k in ms) { order[++n] = k; sim_ms[k] = $8; sim_peak[k] = $11; if ($4 == 1) ratios[++nr] = ms[k] / $8 }

function median(a, m,    i, j, t) {
    for (i = 2; i <= m; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
function abs(x) { return x < 0 ? -x : x }
function counted(sched,    i, m, s) {
    if (only == "") return 1
    m = split(only, s, " ")
    for (i = 1; i <= m; i++) if (s[i] == sched) return 1
    return 0
}

END {
    factor = scale && nr ? median(ratios, nr) : 1
    printf "\n%s\n\n", what
    if (scale) printf "Speed factor (median over the 1-worker configurations of measured / simulated ms): %.3f\n\n", factor
    printf "| scene | pipeline | scheduler | workers | measured ms | predicted ms | error | measured peak KiB | predicted peak KiB | error |\n|---|---|---|---|---|---|---|---|---|---|\n"
    for (i = 1; i <= n; i++) {
        k = order[i]; split(k, f, SUBSEP)
        t = sim_ms[k] * factor; e = 100 * (t / ms[k] - 1)
        p = peak[k] > 0 ? 100 * (sim_peak[k] / peak[k] - 1) : 0
        mark = counted(f[3]) ? "" : " *"
        printf "| %s | %s | %s%s | %s | %.1f | %.1f | %+.0f%% | %.0f | %.0f | %+.0f%% |\n", f[1], f[2], f[3], mark,
               f[4], ms[k], t, e, peak[k] / 1024, sim_peak[k] / 1024, p
        if (!counted(f[3])) continue
        w = f[4]; if (!(w in cnt)) ws[++nw] = w
        cnt[w]++; se[w] += abs(e); sp[w] += abs(p)
        if (abs(e) > me[w]) me[w] = abs(e); if (abs(p) > mp[w]) mp[w] = abs(p)
        if (abs(e) <= 15) ok[w]++; if (abs(p) <= 25) okp[w]++
    }
    printf "\n| workers | mean abs. time error | largest | within 15%% | mean abs. peak error | largest | within 25%% |\n|---|---|---|---|---|---|---|\n"
    for (i = 1; i <= nw; i++) { w = ws[i]
        printf "| %s | %.0f%% | %.0f%% | %d of %d | %.0f%% | %.0f%% | %d of %d |\n", w, se[w] / cnt[w], me[w],
               ok[w], cnt[w], sp[w] / cnt[w], mp[w], okp[w], cnt[w] }
}
