#!/bin/sh
# Runs every test program given on the command line and adds up their results.
# A program that crashes, times out or prints no RESULT line counts as one failure.
# Each program's output follows a "== NAME (SECONDS s)" line; the last line is
# "N passed, N failed".
build=$1; shift
timeout_s=${GRAMPS_TEST_TIMEOUT:-600}
passed=0; failed=0
for t in "$@"; do
    name=${t#"$build"/tests/}
    # Tests read ../shared/scenes relative to the repository root.
    t0=$(date +%s)
    out=$(timeout "$timeout_s" "$t" 2>&1); rc=$?
    echo "== $name ($(( $(date +%s) - t0 )) s)"
    echo "$out" | grep -v '^RESULT ' | sed 's/^/   /'
    res=$(echo "$out" | grep '^RESULT ' | tail -n 1)
    if [ -z "$res" ]; then
        echo "   CRASH or TIMEOUT (exit $rc)"; failed=$((failed + 1)); continue
    fi
    p=$(echo "$res" | cut -d' ' -f2); f=$(echo "$res" | cut -d' ' -f3)
    passed=$((passed + p)); failed=$((failed + f))
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "   exited $rc after reporting success"; failed=$((failed + 1))
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
