#!/bin/sh
# Runs every test program given on the command line and adds up their results.
# A program that crashes, times out or prints no RESULT line counts as one failure.
# Each program's output follows a "== NAME (SECONDS s)" line, in command-line order
# whatever order they finish in; the last line is "N passed, N failed".
# GRAMPS_TEST_JOBS programs run at a time (default 2: CI has two cores, and no test
# program keeps both busy for long). Tests must therefore not depend on having the
# machine to themselves, and must not share scratch paths with each other.
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
    timeout "$1" "$4" >"$2/$3.out" 2>&1; rc=$?
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
        echo "   CRASH or TIMEOUT (exit $rc)"; failed=$((failed + 1)); continue
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
