#!/usr/bin/env bash
# The Lockstep demo: a four-node wall on this machine playing a timeline (a playlist that loops), with
# its drift report checked against ground truth; then one node is killed with SIGKILL and started
# again with the same command, and rejoins the wall by itself, confirmed by ground truth again.
# Everything it starts is stopped at the end, also on Ctrl-C.
#
#   scripts/demo.sh [BUILD_DIR]     (make demo runs it after building)
#
# Two of the four nodes run on simulated clocks, minutes off the master and drifting by ±100 ppm,
# so the wall only lines up if the network clock really works. Each node's "screen" is a udpsink
# sending each frame, as it renders, to a ground-truth collector inside `wallctl drift`.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${1:-$(swift build --show-bin-path)}
config=configs/local-4.yaml
out=out
seconds=${DEMO_SECONDS:-20}
mkdir -p "$out/media" "$out/logs"

pids=()
stop_all() {
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    pids=()
}
trap stop_all EXIT
trap 'echo; echo "demo: interrupted, stopping the wall"; exit 130' INT TERM

if [[ ! -f "$out/media/demo-framecode.mp4" ]]; then
    echo "demo: generating a 10 s frame-code clip"
    scripts/make-media.sh framecode "$out/media/demo-framecode.mp4" 10 320x180
fi
if [[ ! -f "$out/media/demo-short.mp4" ]]; then
    echo "demo: generating a 4 s frame-code clip"
    scripts/make-media.sh framecode "$out/media/demo-short.mp4" 4 320x180
fi
# A fresh wall: no timeline kept from an earlier run.
rm -rf "$out/state"

echo "demo: master clock on 127.0.0.1:5637"
"$bin/wallctl" clock serve --listen 127.0.0.1:5637 >"$out/logs/master.log" 2>&1 &
pids+=($!)

# id, simulated clock offset (s), drift (ppm)
nodes=("top-left 0 0" "top-right 150 100" "bottom-left -210 -100" "bottom-right 0 0")
start_node() {
    local id=$1 offset=$2 drift=$3
    "$bin/wallnode" run --config "$config" --id "$id" \
        --simulate-clock-offset "$offset" --simulate-clock-drift-ppm "$drift" \
        >>"$out/logs/node-$id.log" 2>&1 &
    pids+=($!)
}
rm -f "$out"/logs/node-*.log
for spec in "${nodes[@]}"; do
    read -r id offset drift <<<"$spec"
    echo "demo: node $id (clock offset ${offset} s, drift ${drift} ppm)"
    start_node "$id" "$offset" "$drift"
done
truth=(--ground-truth top-left=6101 --ground-truth top-right=6102
    --ground-truth bottom-left=6103 --ground-truth bottom-right=6104)
echo "demo: playing the config's playlist as a timeline (10 s clip once, 4 s clip twice, looping);"
echo "demo: wallctl waits for the nodes' control APIs and clocks by itself, and says what it waits for"
"$bin/wallctl" play --config "$config" --timeout 30
echo "demo: measuring drift for $seconds s, across loop and playlist boundaries"
status=0
"$bin/wallctl" drift --config "$config" --duration "$seconds" "${truth[@]}" \
    --json "$out/drift.json" --plot "$out/drift.svg" || status=$?

# A node dies: SIGKILL, then the same command again. It finds its timeline in the state directory,
# computes where the wall is, and joins it; nobody tells it anything.
# pids: the master, then the four nodes in order; the victim is the last node.
read -r id offset drift <<<"${nodes[3]}"
victim=${pids[4]}
echo "demo: kill -9 node $id, and start it again with the same command"
kill -KILL "$victim"
wait "$victim" 2>/dev/null || true
started=$(date +%s%N)
start_node "$id" "$offset" "$drift"
# status --wait returns once every node carries out the wall's newest timeline version, in step.
if "$bin/wallctl" status --config "$config" --wait --timeout 20 >/dev/null; then
    elapsed=$((($(date +%s%N) - started) / 1000000))
    echo "demo: node $id is back in step ${elapsed} ms after its process started (its own judgement; ground truth follows)"
else
    echo "demo: node $id is not back in step 20 s after its restart" >&2
    status=1
fi
echo "demo: measuring drift for 10 s after the rejoin"
"$bin/wallctl" drift --config "$config" --duration 10 "${truth[@]}" --json "$out/drift-rejoined.json" || status=$?
"$bin/wallctl" status --config "$config" || status=$?
echo "demo: reports in $out/drift.json and $out/drift-rejoined.json, plot in $out/drift.svg, logs in $out/logs/"
exit "$status"
