#!/usr/bin/env bash
# The Lockstep demo: a four-node wall on this machine, started in lockstep, with its drift report
# checked against ground truth. Everything it starts is stopped at the end, also on Ctrl-C.
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

echo "demo: master clock on 127.0.0.1:5637"
"$bin/wallctl" clock serve --listen 127.0.0.1:5637 >"$out/logs/master.log" 2>&1 &
pids+=($!)

# id, simulated clock offset (s), drift (ppm)
nodes=("top-left 0 0" "top-right 150 100" "bottom-left -210 -100" "bottom-right 0 0")
for spec in "${nodes[@]}"; do
    read -r id offset drift <<<"$spec"
    echo "demo: node $id (clock offset ${offset} s, drift ${drift} ppm)"
    "$bin/wallnode" run --config "$config" --id "$id" \
        --simulate-clock-offset "$offset" --simulate-clock-drift-ppm "$drift" \
        >"$out/logs/node-$id.log" 2>&1 &
    pids+=($!)
done

# wallctl fails at once on a node that refuses connections, so wait for all of them to answer first.
echo "demo: waiting for the nodes' control APIs"
for attempt in $(seq 60); do
    "$bin/wallctl" status --config "$config" --timeout 2 >/dev/null 2>&1 && break
    if ((attempt == 60)); then
        echo "demo: the nodes do not answer after 30 s; see $out/logs/" >&2
        exit 1
    fi
    sleep 0.5
done

echo "demo: starting the wall"
"$bin/wallctl" start --config "$config" --timeout 30

echo "demo: measuring drift for $seconds s"
status=0
"$bin/wallctl" drift --config "$config" --duration "$seconds" \
    --ground-truth top-left=6101 --ground-truth top-right=6102 \
    --ground-truth bottom-left=6103 --ground-truth bottom-right=6104 \
    --json "$out/drift.json" --plot "$out/drift.svg" || status=$?
"$bin/wallctl" status --config "$config" || status=$?
echo "demo: report in $out/drift.json, plot in $out/drift.svg, logs in $out/logs/"
exit "$status"
