#!/usr/bin/env bash
# `make test`: every test, the release build's checks included, in the order that fits CI's 30 minutes
# on two cores without letting any test judged on timing share the machine.
#
#   1. Two lanes at once, neither judged on timing:
#      - the build lane (its log in out/test/build-lane.log, printed when it ends): the release build
#        in its own scratch folder, then the fuzz run, both compiles and CPU loops at the lowest CPU
#        priority (no real-time thread, no socket, no window);
#      - the quiet lane: the suites no timing judges (memory, hostile peers, content, network items,
#        commands and their errors), then the suites that play HLS (run again, at most twice, when
#        GStreamer 1.22.0's hlsdemux2 abort and nothing else ended them), then `bench/chaos --quick`,
#        which fails only on crashes, lost versions, unrecovered faults and console misses.
#   2. The release build's checks, alone (`make check-release`): every wallctl and wallnode command
#      smoke-tested against a live wall, the install with the toolchain hidden, the .deb booted and
#      power-cut, the .deb's lintian, install and purge. (Beside the quiet lane, a smoke wall's node
#      once met a pipeline that did not stop within 5 s, 2026-11-30: they run apart.)
#   3. Then the rest of `swift test`, alone: every suite judged on timing (skew, lateness, a frame's
#      time on the glass), and the console driven in chromium.
#
# Every step says how long it took (`test-time:` lines). The exit status is 1 if any step failed;
# every step runs whatever failed before it, so one run reports everything.
#
#   scripts/test.sh     (make test; SWIFT, BUILD_FLAGS, FUZZ_SECONDS and RELEASE_SCRATCH as make passes them)
set -uo pipefail
cd "$(dirname "$0")/.."
swift=${SWIFT:-swift}
read -r -a flags <<<"${BUILD_FLAGS:-}"
release_scratch=${RELEASE_SCRATCH:-.build-release}
out=out/test
mkdir -p "$out"
# What failed in any `swift test` step, printed again at the very end: a CI log is read from its tail,
# and later steps push a step's own summary out of it.
failures=$out/failures.txt
: >"$failures"
export FAILURES_FILE=$failures

# The suites of `swift test` no timing judges, by name (a regex on Target.Suite/test).
quiet_suites='NodeMemoryTests|DoorHardeningTests|NetworkObservationTests|ContentWallTests'
quiet_suites+='|ContentDaemonTests|ControlHardeningTests|ControlTimeoutTests|ControlSecurityTests|WallCtlTests'
quiet_suites+='|WallNodeCommandTests|WallCheckTests|TimelineAdmissionTests|WallEditTests|CueEditTests'
quiet_suites+='|CalibrateCommandTests|ShowInputTests|BadInputTests|SystemdTests|ConsoleTLSTests'
quiet_suites+='|NodeRobustnessTests|ConsoleRoutesTests|NodeContentTests|ContentStoreTests|PartialFileTests'
quiet_suites+='|ChunkListTests|ChunkPlannerTests|ContentInputTests|MediaSignatureTests|TransferPacerTests'
# The tests that play HLS through GStreamer 1.22.0's hlsdemux2, which now and then aborts its
# process when a seek or a rendition change meets a fragment download still queued
# (downloadrequest.c:245; fixed upstream in 1.22.7 by f4a5b6623b, not in Debian 12). They run on
# their own, beside the quiet lane's, not judged on timing either.
# libsoup 3.2 (Debian 12) has crashed souphttpsrc's own thread once in 55 runs of the HLS VOD test
# under load (a NULL dereference inside libsoup-3.0.so, 2026-12-01): the same rerun covers it, and
# only it.
hls_suites='NetworkAssetTests|MediaSelectionTests/testSubtitles_turnOnAndOff_inThePicture_hlsWebVTTRendition'
hls_abort='downloadrequest.c:245:download_request_set_uri: assertion failed'
soup_crash='Thread [0-9]+ "souphttpsrc[0-9]*:sr" crashed:'

# Runs a step, and says how long it took and how it ended.
step() {
    local name=$1
    shift
    local start
    start=$(date +%s%N)
    "$@"
    local status=$?
    local elapsed=$((($(date +%s%N) - start) / 1000000))
    printf 'test-time: %d.%01d s  %s%s\n' $((elapsed / 1000)) $((elapsed % 1000 / 100)) "$name" \
        "$([ "$status" -eq 0 ] || echo "  FAILED (exit $status)")"
    return "$status"
}

# Whether the log `$1` ends with one of the two known crashes: hlsdemux2's abort, or libsoup's
# NULL dereference on souphttpsrc's thread (its first frame inside libsoup).
upstream_crash() {
    grep -q "$hls_abort" "$1" && return 0
    grep -E -A2 "$soup_crash" "$1" | grep -q "in libsoup-3.0.so"
}

# The HLS tests; run again, at most twice, when one of those crashes and nothing else ended them: a
# test that failed, or any other crash, fails the step at once.
hls_tests() {
    local attempt log status
    for attempt in 1 2 3; do
        log=$(mktemp -t hls-tests.XXXXXX)
        SWIFT="$swift" FAILURES_FILE=$log.failures scripts/swift-test.sh "$@" --filter "$hls_suites" >"$log" 2>&1
        status=$?
        cat "$log"
        if [ "$status" -eq 0 ]; then
            rm -f "$log" "$log.failures"
            return 0
        fi
        if ! upstream_crash "$log" || grep -qE "^Test Case '.*' failed \(" "$log" || [ "$attempt" -eq 3 ]; then
            cat "$log.failures" >>"$FAILURES_FILE" 2>/dev/null
            rm -f "$log" "$log.failures"
            return "$status"
        fi
        echo "test: a known crash in GStreamer's HLS or HTTP source ended the HLS tests, attempt $attempt of 3: again"
        rm -f "$log" "$log.failures"
    done
}

failed=()
step "checks of the docs" scripts/check-links.sh || failed+=("check-links")
step "checks of the alert rules" scripts/check-alerts.sh || failed+=("check-alerts")
if ! step "swift build --build-tests" "$swift" build --build-tests "${flags[@]}"; then
    echo "test: the tests did not build" >&2
    exit 1
fi
bin=$("$swift" build "${flags[@]}" --show-bin-path)

build_lane() {
    local status=0
    step "release build (nice 19)" nice -n 19 make --no-print-directory release SCRATCH="$release_scratch" || status=1
    step "fuzz (nice 19)" nice -n 19 env FUZZ_SECONDS="${FUZZ_SECONDS:-60}" scripts/fuzz.sh || status=1
    return "$status"
}
echo "test: the build lane runs beside the quiet suites (its log: $out/build-lane.log)"
build_lane >"$out/build-lane.log" 2>&1 &
build_pid=$!

step "swift test: the suites no timing judges" \
    env SWIFT="$swift" scripts/swift-test.sh --skip-build "${flags[@]}" --filter "$quiet_suites" \
    || failed+=("the suites no timing judges")
step "swift test: the HLS suites" hls_tests --skip-build "${flags[@]}" \
    || failed+=("the HLS suites")
step "bench/chaos --quick" bench/chaos --quick --keep --bin "$bin" || failed+=("bench/chaos --quick")

wait "$build_pid"
build_status=$?
echo "=== the build lane ($out/build-lane.log):"
cat "$out/build-lane.log"
[ "$build_status" -eq 0 ] || failed+=("the build lane")

step "release checks" make --no-print-directory check-release SCRATCH="$release_scratch" || failed+=("release checks")
step "swift test: the suites judged on timing, alone" \
    env SWIFT="$swift" scripts/swift-test.sh --skip-build "${flags[@]}" --skip "$quiet_suites|$hls_suites" \
    || failed+=("the suites judged on timing")

if [ "${#failed[@]}" -gt 0 ]; then
    if [ -s "$failures" ]; then
        echo "=== what failed in swift test ($failures):" >&2
        cat "$failures" >&2
    fi
    echo "test: FAILED: ${failed[*]}" >&2
    exit 1
fi
echo "test: every step passed"
