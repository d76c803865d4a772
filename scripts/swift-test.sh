#!/usr/bin/env bash
# `swift test` with its whole output, then, when a test failed, the failures again at the end: a CI
# log is often read from its tail, and XCTest's summary there says how many failed, not which.
# Usage: scripts/swift-test.sh [swift test arguments...]   (SWIFT: the swift to run; FAILURES_FILE: a
# file the failures are also appended to, for a caller that prints them at its own end)
set -uo pipefail
log=$(mktemp -t swift-test.XXXXXX)
trap 'rm -f "$log"' EXIT
"${SWIFT:-swift}" test "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
    echo
    echo "=== swift test failed (exit $status); what failed:"
    grep -E "^[^ ]+:[0-9]+: error: |^error: |Test Case '.*' failed|Fatal error|fatal error|exited with signal|Exited with" "$log" \
        | awk '!seen[$0]++' | tail -n 60 | tee -a "${FAILURES_FILE:-/dev/null}"
fi
exit "$status"
