#!/bin/sh
# Runs every test program given on the command line and adds up their results.
# A program that crashes, times out or prints no RESULT line counts as one failure.
# Each program's output follows a "== NAME (SECONDS s)" line, in command-line order
# whatever order they finish in; the last line is "N passed, N failed".
# GRAMPS_TEST_JOBS programs run at a time (default 2: CI has two cores, and no test
# program keeps both busy for long). Tests must therefore not depend on having the
# machine to themselves, and must not share scratch paths with each other.
# GRAMPS_TEST_TIMEOUT (default 600) is a program's budget in seconds of an otherwise idle
# machine: as CPU time, at most that many seconds on every core (ulimit -t, for each of
# its processes), and as wall time that many seconds times the load per core when it
# starts (at least 1). A loaded machine gives a program a fraction of a core (under
# ThreadSanitizer at load 10-14 on 2 cores, test_simulate got 14 s of CPU in 155 s), which
# must not fail it; a program spinning past its budget still fails, and one that hangs
# without using CPU is still stopped by the wall-time limit.
build=$1; shift
timeout_s=${GRAMPS_TEST_TIMEOUT:-600}
jobs=${GRAMPS_TEST_JOBS:-2}
results=$(mktemp -d "${TMPDIR:-/tmp}/gramps-tests-XXXXXX") || exit 1
runner_pid=
trap 'rm -rf "$results"' EXIT
trap '[ -n "$runner_pid" ] && kill "$runner_pid" 2>/dev/null; exit 130' INT TERM

# One program: its output, exit status and wall seconds in $results/INDEX.{out,rc,s};
# .rc is written last, so its presence means the other two are complete. Programs run in
# the current directory: tests read ../shared/scenes relative to the repository root.
run_one='
    t0=$(date +%s)
    load=$(cut -d" " -f1 /proc/loadavg 2>/dev/null || echo 0)
    share=$(awk -v l="$load" -v n="$(nproc)" "BEGIN { f = int(l / n + 0.999); print f < 1 ? 1 : f }")
    cpu_s=$(( $1 * $(nproc) ))
    { (ulimit -t $(( cpu_s + 10 )) && ulimit -S -t "$cpu_s" && exec timeout "$(( $1 * share ))" "$4"); } >"$2/$3.out" 2>&1; rc=$?
    echo $(( $(date +%s) - t0 )) >"$2/$3.s"
    echo $rc >"$2/$3.rc.tmp" && mv "$2/$3.rc.tmp" "$2/$3.rc"'
i=0
for t in "$@"; do i=$((i + 1)); printf '%s %s\n' "$i" "$t"; done |
    xargs -P "$jobs" -n 2 sh -c "$run_one" sh "$timeout_s" "$results" &
runner_pid=$!

passed=0; failed=0; i=0
for t in "$@"; do
    i=$((i + 1))
    while [ ! -e "$results/$i.rc" ] && kill -0 "$runner_pid" 2>/dev/null; do sleep 0.2; done
    name=${t#"$build"/tests/}
    if [ ! -e "$results/$i.rc" ]; then
        echo "== $name (not run)"; failed=$((failed + 1)); continue
    fi
    rc=$(cat "$results/$i.rc")
    echo "== $name ($(cat "$results/$i.s") s)"
    grep -v '^RESULT ' "$results/$i.out" | sed 's/^/   /'
    res=$(grep '^RESULT ' "$results/$i.out" | tail -n 1)
    if [ -z "$res" ]; then
        case $rc in
            124) why="TIMEOUT: wall time";;
            152) why="TIMEOUT: CPU time";;      # SIGXCPU: the soft ulimit -t (the hard one is 10 s later)
            *) why="CRASH or TIMEOUT";;
        esac
        echo "   $why (exit $rc)"; failed=$((failed + 1)); continue
    fi
    p=$(echo "$res" | cut -d' ' -f2); f=$(echo "$res" | cut -d' ' -f3)
    passed=$((passed + p)); failed=$((failed + f))
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "   exited $rc after reporting success"; failed=$((failed + 1))
    fi
done
wait "$runner_pid"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
