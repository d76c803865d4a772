#!/usr/bin/env bash
# Fuzzes everything a node parses from outside (timelines, the stored timeline file, wall configs,
# clock datagrams at a server and at a client, control bodies and parameters) with libFuzzer and
# AddressSanitizer, through the Swift toolchain's -sanitize=fuzzer, for FUZZ_SECONDS (default 60).
#
# The corpus grows in out/fuzz/corpus, seeded from Tests/FuzzCorpus. An input that traps, leaks or
# takes over 10 s is written to out/fuzz/findings/ and the script fails, printing where it trapped:
# fix it, then keep the input as a regression test in Tests/FuzzCorpus/crashes/ (replayed by
# `make test`, FuzzCorpusTests). Reproduce one with `swift run lockstep-fuzz FILE`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${FUZZ_SECONDS:-60}
work=${FUZZ_WORK:-$root/out/fuzz}
scratch=${FUZZ_SCRATCH:-$root/.build-fuzz}
mkdir -p "$work/corpus" "$work/findings"
find "$root/Tests/FuzzCorpus" -type f -exec cp -n {} "$work/corpus/" \;

echo "fuzz: building lockstep-fuzz with libFuzzer and AddressSanitizer (in $scratch)"
# lld: gold fails on the sanitizer runtime's symbols (an internal error in its DWARF reader).
swift build -c release --scratch-path "$scratch" --product lockstep-fuzz \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING -Xswiftc -Xclang-linker -Xswiftc -fuse-ld=lld \
    2>&1 | grep -E 'error|warning: unre|Compiling|Build' | grep -v '^\[' || true
binary="$scratch/release/lockstep-fuzz"
[ -x "$binary" ] || { echo "fuzz: the build failed" >&2; exit 1; }

before=$(ls "$work/findings" | wc -l)
echo "fuzz: running for $seconds s on $(ls "$work/corpus" | wc -l) inputs (log: $work/fuzz.log)"
status=0
"$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$work/findings/" "$work/corpus" >"$work/fuzz.log" 2>&1 || status=$?
grep -E '^#[0-9]+ +DONE' "$work/fuzz.log" | tail -1 | sed 's/^/fuzz: /' || true
grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$work/fuzz.log" | sed 's/^/fuzz: /' || true
if [ "$status" -ne 0 ] || [ "$(ls "$work/findings" | wc -l)" -ne "$before" ]; then
    echo "fuzz: FOUND an input that fails (exit $status); in $work/findings:" >&2
    ls -t "$work/findings" | head -5 | sed 's/^/  /' >&2
    grep -E 'Swift runtime failure|Fatal error|ERROR: (libFuzzer|AddressSanitizer)|^ +[0-9]+ .* at /' "$work/fuzz.log" \
        | grep -v -E 'LockstepFuzz/|FuzzerLoop|FuzzerDriver|libc' | head -12 >&2
    exit 1
fi
echo "fuzz: nothing found in $seconds s"
