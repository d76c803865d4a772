#!/usr/bin/env bash
# Builds everything with a sanitizer and runs the tests on it: the integration suite by default
# (real wallnode and wallctl processes, built with the same sanitizer), or the tests FILTER names.
#
#   scripts/sanitize.sh thread|address [FILTER]
#
# A report from the sanitizer fails the run (halt_on_error), naming the race or the memory error;
# GStreamer, GLib and FFmpeg are not instrumented, so races inside them are not seen, and what
# crosses into them is checked only on the Swift side. Each sanitizer builds in its own folder
# (.build-thread, .build-address). Results: docs/BENCHMARKS.md, "Sanitizers".
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sanitizer=${1:?usage: scripts/sanitize.sh thread|address [FILTER]}
filter=${2:-WallIntegrationTests}
case "$sanitizer" in thread | address) ;; *) echo "sanitize: thread or address, not $sanitizer" >&2; exit 2 ;; esac
scratch="$root/.build-$sanitizer"
cd "$root"
echo "sanitize: building with -sanitize=$sanitizer in $scratch"
# ThreadSanitizer cannot see Synchronization's Mutex on Linux (futexes inside the uninstrumented
# standard library): LOCKSTEP_TSAN swaps in LockstepLocks' pthread Mutex, which it can, and turns
# the hand-off annotations on where objects pass through GStreamer (CLockstepShims, Handoff.swift).
defines=()
[ "$sanitizer" = thread ] && defines=(-Xswiftc -DLOCKSTEP_TSAN -Xcc -DLOCKSTEP_TSAN)
swift build --build-tests --sanitize="$sanitizer" --scratch-path "$scratch" "${defines[@]}" 2>&1 | grep -E 'error|Build' | grep -v '^\[' || true
# Every process (the tests, and the wallnode and wallctl they start) writes its reports to a file
# of its own in $reports, so a node's report is counted even when the test around it passes.
reports_dir="$root/out/sanitize-$sanitizer-reports"
rm -rf "$reports_dir"
mkdir -p "$reports_dir"
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 log_path=$reports_dir/report suppressions=$root/scripts/tsan-suppressions.txt ${TSAN_OPTIONS:-}"
# Swift's runtime keeps some allocations for the process's life on purpose: leaks are not errors here.
export ASAN_OPTIONS="halt_on_error=1 detect_leaks=0 log_path=$reports_dir/report ${ASAN_OPTIONS:-}"
# GLib's slice allocator recycles memory in uninstrumented code, so a sanitizer would see a new
# GstBuffer written where an old one was read; with plain malloc it sees the free in between.
export G_SLICE=always-malloc
log="$root/out/sanitize-$sanitizer.log"
mkdir -p "$root/out"
echo "sanitize: running $filter (log: $log)"
status=0
swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" "${defines[@]}" --filter "$filter" >"$log" 2>&1 || status=$?
grep -E 'Executed [0-9]+ tests' "$log" | tail -1 | sed 's/^[[:space:]]*/sanitize: /'
reports=$(cat "$reports_dir"/report.* 2>/dev/null | grep -cE 'WARNING: ThreadSanitizer|ERROR: AddressSanitizer' || true)
echo "sanitize: $reports sanitizer reports (in $reports_dir)"
grep -hE '^SUMMARY' "$reports_dir"/report.* 2>/dev/null | sed 's/ in .*//' | sort | uniq -c | sort -rn | head -20 || true
if [ "$status" -ne 0 ] || [ "$reports" -ne 0 ]; then
    cat "$reports_dir"/report.* 2>/dev/null | grep -E -A12 'WARNING: ThreadSanitizer|ERROR: AddressSanitizer' | head -60 >&2 || true
    grep -E 'error: .*Tests' "$log" | head -20 >&2 || true
    exit 1
fi
