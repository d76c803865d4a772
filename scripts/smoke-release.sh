#!/usr/bin/env bash
# Smoke test of every wallctl and wallnode subcommand, as built: a live two-node wall on loopback
# (a master clock, an impairment proxy in front of it, two headless nodes requiring a control token),
# each command run with a bound on its time and its exit status checked. A crash (a signal, exit 128
# or more) or a hang is a failure whatever the command, which is what the debug-only test suite
# cannot see in a release build.
#
#   scripts/smoke-release.sh BIN_DIR      (make check-release runs it on the release build)
#
# Ports are chosen free at the start; everything started is stopped on exit, also on Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${1:?usage: smoke-release.sh BIN_DIR (the directory holding wallctl and wallnode)}
bin=$(cd "$bin" && pwd)
wallctl=$bin/wallctl
wallnode=$bin/wallnode
for tool in "$wallctl" "$wallnode"; do
    [[ -x "$tool" ]] || { echo "smoke: no executable $tool" >&2; exit 2; }
done
# status crashed in 35 of 38 runs of one release build: one run proves little.
status_runs=${SMOKE_STATUS_RUNS:-12}

work=$(mktemp -d "${TMPDIR:-/tmp}/lockstep-smoke.XXXXXX")
pids=()
failures=0
checks=0

cleanup() {
    local pid
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    pids=()
    rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "smoke: interrupted"; exit 130' INT TERM

# Port numbers the kernel gives out free right now (TCP and UDP both free), one per argument.
free_ports() {
    python3 - "$1" <<'EOF'
import socket, sys
ports, held = [], []
while len(ports) < int(sys.argv[1]):
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.bind(("127.0.0.1", 0))
    port = tcp.getsockname()[1]
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        udp.bind(("127.0.0.1", port))
    except OSError:
        tcp.close(); udp.close(); continue
    held += [tcp, udp]
    ports.append(port)
print(" ".join(map(str, ports)))
EOF
}

fail() {
    failures=$((failures + 1))
    echo "smoke: FAIL: $*" >&2
}

# check EXPECTED SECONDS NAME COMMAND...: runs COMMAND with at most SECONDS, and counts a failure
# unless it exits with EXPECTED ("0", "nonzero"); a signal or a timeout is always a failure. The
# smoke test goes on after a failure, to report every command that fails.
check() {
    local expected=$1 seconds=$2 name=$3
    shift 3
    checks=$((checks + 1))
    local log="$work/check-$checks.log" status=0
    timeout --kill-after=5 "$seconds" "$@" >"$log" 2>&1 </dev/null || status=$?
    local verdict=""
    if [[ $status -eq 124 || $status -eq 137 ]]; then
        verdict="did not finish within $seconds s"
    elif [[ $status -ge 128 ]]; then
        verdict="crashed (exit $status, signal $((status - 128)))"
    elif [[ $expected == 0 && $status -ne 0 ]]; then
        verdict="exited $status, expected 0"
    elif [[ $expected == nonzero && $status -eq 0 ]]; then
        verdict="exited 0, expected a failure"
    fi
    if [[ -n $verdict ]]; then
        fail "$name: $verdict"
        echo "--- $* ---" >&2
        sed 's/^/    /' "$log" >&2
        echo "---" >&2
    else
        echo "smoke: ok   $name (exit $status)"
    fi
}

# A background process whose exit is checked at the end; its output goes to LOG.
declare -A background_name=()
declare -A background_log=()
start_background() {
    local name=$1 log=$2
    shift 2
    "$@" >"$log" 2>&1 </dev/null &
    pids+=($!)
    background_name[$!]=$name
    background_log[$!]=$log
}

# stop_background PID SIGNAL: signals one background process and checks it exits 0 within 15 s.
stop_background() {
    local pid=$1 signal=$2 status=0 name=${background_name[$1]}
    checks=$((checks + 1))
    kill "-$signal" "$pid" 2>/dev/null || true
    for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        fail "$name: still running 15 s after SIG$signal"
    else
        wait "$pid" || status=$?
        if [[ $status -ne 0 ]]; then
            fail "$name: exited $status after SIG$signal"
            sed 's/^/    /' "${background_log[$pid]}" | tail -40 >&2
        else
            echo "smoke: ok   $name (exit 0 on SIG$signal)"
        fi
    fi
    local remaining=()
    for other in "${pids[@]}"; do [[ $other == "$pid" ]] || remaining+=("$other"); done
    pids=("${remaining[@]}")
}

# The verdict: every failure counted, with the logs of the processes still needed to explain them.
finish() {
    if ((failures > 0)); then
        echo "smoke: $failures of $checks checks failed" >&2
        for log in "$work"/node-*.log "$work/master.log"; do
            [[ -f $log ]] || continue
            echo "--- $(basename "$log") (last 20 lines) ---" >&2
            tail -20 "$log" >&2
        done
        exit 1
    fi
    echo "smoke: all $checks checks passed"
    exit 0
}

echo "smoke: $bin, working in $work"
scripts/make-media.sh framecode "$work/clip.mp4" 3 160x90
scripts/make-media.sh languages "$work/languages.mkv" 2 320x180
read -r clock_port proxy_port control_a control_b closed_port relay_port joined_port <<<"$(free_ports 7)"

# Help of everything: the parsers of every command, in the build under test.
for command in "" play start pause resume seek next previous goto rate load stop still black identify status check \
    drift snapshot clock "clock serve" "clock probe" impair calibrate serve push cue schedule report "report plays"; do
    # shellcheck disable=SC2086
    check 0 20 "wallctl $command --help" "$wallctl" $command --help
done
for command in "" run probe play; do
    # shellcheck disable=SC2086
    check 0 20 "wallnode $command --help" "$wallnode" $command --help
done

# One file, without a wall.
check 0 10 "wallnode --version" "$wallnode" --version
# The controller drives nodes over the network: it must not need GStreamer installed.
checks=$((checks + 1))
if gstreamer=$(readelf -d "$wallctl" | grep -o 'lib\(gst\|glib\|gobject\)[^]]*'); then
    fail "wallctl links GStreamer: $(echo $gstreamer)"
else
    echo "smoke: ok   wallctl links no GStreamer library"
fi
check 0 10 "wallctl --version" "$wallctl" --version
check 0 30 "wallnode probe" "$wallnode" probe "$work/clip.mp4"
check 0 30 "wallnode probe --json" "$wallnode" probe "$work/clip.mp4" --json
check 0 60 "wallnode play (to the end, fakesink)" "$wallnode" play "$work/clip.mp4" \
    --video-sink "fakesink sync=true" --audio-sink "fakesink sync=true"
check 0 60 "wallnode play (audio language, subtitles)" "$wallnode" play "$work/languages.mkv" \
    --video-sink "fakesink sync=true" --audio-sink "fakesink sync=true" --audio-language fr --subtitles en
if ! grep -q "subtitles: English (eng)" "$work/check-$checks.log"; then
    fail "wallnode play (audio language, subtitles): English subtitles not chosen"
fi
check nonzero 30 "wallnode probe (missing file)" "$wallnode" probe "$work/no-such-file.mp4"
check 0 30 "wallnode thumbnails" "$wallnode" thumbnails "$work/clip.mp4" --times 0.5,1 --exact --out "$work/thumbs"
check nonzero 30 "wallnode thumbnails (bad times)" "$wallnode" thumbnails "$work/clip.mp4" --times 1,x --out "$work/thumbs"

# The master clock, and a probe of it directly and through an impairment proxy.
start_background "wallctl clock serve" "$work/master.log" \
    "$wallctl" clock serve --listen "127.0.0.1:$clock_port"
master=${pids[-1]}
start_background "wallctl impair" "$work/impair.log" \
    "$wallctl" impair --listen "127.0.0.1:$proxy_port" --forward "127.0.0.1:$clock_port" --delay 1 --jitter 0.2
proxy=${pids[-1]}
check 0 30 "wallctl clock probe" "$wallctl" clock probe "127.0.0.1:$clock_port" --duration 1.5
check 0 30 "wallctl clock probe --json (through impair)" \
    "$wallctl" clock probe "127.0.0.1:$proxy_port" --duration 1.5 --json
stop_background "$proxy" INT

# The wall runs with a control token, so every command below also proves the token gets through.
python3 -c 'import secrets; print(secrets.token_hex(16))' >"$work/control.token"
python3 -c 'import secrets; print(secrets.token_hex(16))' >"$work/wrong.token"
cat >"$work/wall.yaml" <<EOF
name: smoke
clock: [127.0.0.1:$clock_port, 127.0.0.1:$relay_port]
control-token-file: $work/control.token
clock-lock-timeout: 10s
media: $work/clip.mp4
canvas: {width: 320, height: 90}
latency: 0ms
start-margin: 250ms
loop: true
state-directory: $work/state
nodes:
  - id: a
    control: 127.0.0.1:$control_a
    tile: {x: 0, y: 0, width: 160, height: 90}
    video-sink: "fakesink sync=true"
  - id: b
    control: 127.0.0.1:$control_b
    tile: {x: 160, y: 0, width: 160, height: 90}
    video-sink: "fakesink sync=true"
    serve-clock: 127.0.0.1:$relay_port
EOF
cat >"$work/closed.yaml" <<EOF
name: closed
clock: 127.0.0.1:$clock_port
media: $work/clip.mp4
canvas: {width: 160, height: 90}
nodes:
  - id: gone
    control: 127.0.0.1:$closed_port
    tile: {x: 0, y: 0, width: 160, height: 90}
EOF
config=(--config "$work/wall.yaml")

# A node whose port is closed: status says so at once; a command waits its --timeout for the node to
# come up, then names it; none crashes.
check nonzero 5 "wallctl status (closed port)" "$wallctl" status --config "$work/closed.yaml" --timeout 30
check nonzero 10 "wallctl start (closed port)" "$wallctl" start --config "$work/closed.yaml" --timeout 3
if ! grep -q "waiting for clocks: gone" "$work/check-$checks.log"; then
    fail "wallctl start (closed port): it did not say what it waited for"
fi

for id in a b; do
    start_background "wallnode run ($id)" "$work/node-$id.log" \
        "$wallnode" run "${config[@]}" --id "$id" --log-format text
done
nodes=("${pids[@]: -2}")
# No waiting here: the first command waits for the nodes by itself (and says so).
sed "s|$work/control.token|$work/wrong.token|" "$work/wall.yaml" >"$work/wrong-token.yaml"
check 0 90 "wallctl start" "$wallctl" start "${config[@]}" --timeout 40
check nonzero 10 "wallctl status (wrong token)" "$wallctl" status --config "$work/wrong-token.yaml" --timeout 5
if ! grep -q "refused the control token" "$work/check-$checks.log"; then
    fail "wallctl status (wrong token): no word of the refused token"
    sed 's/^/    /' "$work/check-$checks.log" >&2
fi
sed "s|^name: smoke|name: smoke-other|" "$work/wall.yaml" >"$work/other-wall.yaml"
check nonzero 10 "wallctl stop (another wall's config)" "$wallctl" stop --config "$work/other-wall.yaml" --timeout 5
if ! grep -q 'belongs to wall "smoke", not "smoke-other"' "$work/check-$checks.log"; then
    fail "wallctl stop (another wall's config): not refused naming both walls"
fi
for run in $(seq "$status_runs"); do
    check 0 30 "wallctl status (run $run of $status_runs)" "$wallctl" status "${config[@]}" --timeout 10
done
check 0 30 "wallctl status --json" "$wallctl" status "${config[@]}" --json --timeout 10
if [[ -s "$work/check-$checks.log" ]] && ! python3 -m json.tool "$work/check-$checks.log" >/dev/null; then
    fail "wallctl status --json: not JSON"
fi
# Node b relays the clock: a second master told to join it rejoins the wall's timeline.
check 0 30 "wallctl clock serve --join (rejoins the relay)" timeout --preserve-status -s INT 8 \
    "$wallctl" clock serve --listen "127.0.0.1:$joined_port" --join "127.0.0.1:$relay_port"
if ! grep -q "rejoining it" "$work/check-$checks.log"; then
    fail "wallctl clock serve --join: did not rejoin the relay's timeline"
    sed 's/^/    /' "$work/check-$checks.log" >&2
fi
check nonzero 10 "wallctl clock serve --join (bad address)" "$wallctl" clock serve --join "no-port"
check 0 60 "wallctl check" "$wallctl" check "${config[@]}" --timeout 20
check 0 60 "wallctl pause" "$wallctl" pause "${config[@]}" --timeout 20
check 0 90 "wallctl resume" "$wallctl" resume "${config[@]}" --timeout 40
check 0 60 "wallctl seek" "$wallctl" seek 1.5 "${config[@]}" --timeout 20
check 0 90 "wallctl resume (after seek)" "$wallctl" resume "${config[@]}" --timeout 40
check 0 60 "wallctl drift" "$wallctl" drift "${config[@]}" --duration 2 --threshold 100 --timeout 20
check 0 60 "wallctl drift --json -" "$wallctl" drift "${config[@]}" --duration 2 --threshold 100 --timeout 20 --json -
if ! grep -q '"verdict"' "$work/check-$checks.log"; then
    fail "wallctl drift --json -: no JSON report on standard output"
fi
check 0 60 "wallctl snapshot" "$wallctl" snapshot "${config[@]}" --out "$work/wall.png" --timeout 20
if [[ "$(head -c 8 "$work/wall.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" != 89504e470d0a1a0a ]]; then
    fail "wallctl snapshot: $work/wall.png is no PNG"
fi
check 0 60 "wallctl stop" "$wallctl" stop "${config[@]}" --timeout 20
check 0 30 "wallctl status (after stop)" "$wallctl" status "${config[@]}" --timeout 10
if ! grep -q "stopped" "$work/check-$checks.log"; then
    fail "wallctl status (after stop): the nodes do not say they are stopped"
fi
check 0 30 "wallctl identify" "$wallctl" identify "${config[@]}" --seconds 1 --timeout 10
check nonzero 10 "wallctl identify (bad --seconds)" "$wallctl" identify "${config[@]}" --seconds 0.5
check 0 30 "wallctl black" "$wallctl" black "${config[@]}" --timeout 10
check nonzero 30 "wallctl still (outside the media roots)" "$wallctl" still /etc/passwd "${config[@]}" --timeout 10

# The glass: the pattern rendered, pushed and played; its own clip read back as a film (a perfect
# camera at the screens' rate: every screen at one time), and the config's display-latency written.
check 0 120 "wallctl calibrate (shows the pattern)" "$wallctl" calibrate "${config[@]}" --clip-folder "$work/calibrate" \
    --timeout 30
pattern=$(ls "$work"/calibrate/calibration-*.mp4 2>/dev/null | head -1)
cp "$work/wall.yaml" "$work/calibrated.yaml"
check 0 60 "wallctl calibrate --video --write" "$wallctl" calibrate --config "$work/calibrated.yaml" \
    --video "${pattern:-$work/calibrate/missing.mp4}" --write
if ! grep -q "2 of 2 screens read" "$work/check-$checks.log" || ! grep -q "display-latency" "$work/calibrated.yaml"; then
    fail "wallctl calibrate --video --write: not every screen read, or nothing written"
    sed 's/^/    /' "$work/check-$checks.log" >&2
fi
check nonzero 60 "wallctl calibrate --video (no pattern in it)" "$wallctl" calibrate "${config[@]}" --video "$work/clip.mp4"

# Every verb is an edit of the timeline the nodes keep; play starts a new one.
check 0 60 "wallctl play" "$wallctl" play "${config[@]}" --timeout 30
check 0 60 "wallctl identify (during a show)" "$wallctl" identify "${config[@]}" --seconds 1 --timeout 20
check 0 60 "wallctl next" "$wallctl" next "${config[@]}" --timeout 20
check 0 60 "wallctl previous" "$wallctl" previous "${config[@]}" --timeout 20
check 0 60 "wallctl goto" "$wallctl" goto 0 "${config[@]}" --timeout 20
check nonzero 30 "wallctl goto (no such entry)" "$wallctl" goto 7 "${config[@]}" --timeout 20
check 0 60 "wallctl rate 1/2" "$wallctl" rate 1/2 "${config[@]}" --timeout 20
check 0 60 "wallctl rate 1" "$wallctl" rate 1 "${config[@]}" --timeout 20
check 0 60 "wallctl pause (timeline)" "$wallctl" pause "${config[@]}" --timeout 20
check 0 60 "wallctl seek (timeline)" "$wallctl" seek 1.0 --entry 0 "${config[@]}" --timeout 20
check 0 60 "wallctl resume (timeline)" "$wallctl" resume "${config[@]}" --timeout 20
check 0 60 "wallctl load" "$wallctl" load "$work/clip.mp4" "${config[@]}" --timeout 20
check 0 30 "wallctl status (timeline)" "$wallctl" status "${config[@]}" --timeout 10
if ! grep -q "in step" "$work/check-$checks.log"; then
    fail "wallctl status (timeline): no node in step"
    sed 's/^/    /' "$work/check-$checks.log" >&2
fi
check 0 30 "wallctl report plays --csv" "$wallctl" report plays "${config[@]}" --from 1h --csv --timeout 10
if ! grep -q "^node,kind,media" "$work/check-$checks.log" || ! grep -q ",clip,.*,paused," "$work/check-$checks.log"; then
    fail "wallctl report plays --csv: no header, or no play paused by the pause above"
    sed 's/^/    /' "$work/check-$checks.log" >&2
fi
check nonzero 10 "wallctl report plays (bad --from)" "$wallctl" report plays "${config[@]}" --from yesterday

# The control daemon: its content library (a push through it), show control over TCP and HTTP, a
# cue, the console's page; a second daemon whose show-control port is taken stops with a sentence.
read -r daemon_port show_port <<<"$(free_ports 2)"
{
    sed '/^nodes:/,$d' "$work/wall.yaml"
    echo "controller: {listen: \"127.0.0.1:$daemon_port\", library: $work/library}"
    echo "show-control: {tcp: \"127.0.0.1:$show_port\"}"
    echo "cues:"
    echo "  intro: {media: $work/clip.mp4, in: 0s, out: 1s, then: return}"
    sed -n '/^nodes:/,$p' "$work/wall.yaml"
} >"$work/daemon.yaml"
start_background "wallctl serve" "$work/daemon.log" "$wallctl" serve --config "$work/daemon.yaml"
daemon=${pids[-1]}
for _ in $(seq 200); do grep -q "serving wall" "$work/daemon.log" && break; sleep 0.1; done
grep -q "serving wall" "$work/daemon.log" || fail "wallctl serve: never said it serves"
check 0 90 "wallctl push (through the daemon)" "$wallctl" push "$work/clip.mp4" --config "$work/daemon.yaml" --timeout 60
check 0 20 "show control over TCP (the daemon)" python3 -c '
import socket, sys
connection = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
connection.sendall(b"resume\n")
answer = connection.makefile().readline().strip()
print(answer)
sys.exit(0 if answer == "OK resume" else 1)' "$show_port"
# Issue 40's crash (SIGILL in a refusal) was found on the release build: seventeen connections
# held, bursts of seventeen opened and closed, and the input still answers.
check 0 30 "show control over TCP, held and flooded (the daemon)" python3 -c '
import socket, sys, time
port = int(sys.argv[1])
held = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(17)]
for _ in range(5):
    for connection in [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(17)]:
        connection.close()
deadline = time.monotonic() + 10
while True:
    try:
        connection = socket.create_connection(("127.0.0.1", port), timeout=5)
        connection.sendall(b"resume\n")
        answer = connection.makefile().readline().strip()
    except OSError as error:
        answer = str(error)
    if answer == "OK resume" or time.monotonic() > deadline:
        break
    time.sleep(0.2)
print(answer)
sys.exit(0 if answer == "OK resume" else 1)' "$show_port"
kill -0 "$daemon" 2>/dev/null || fail "wallctl serve died under the show-control flood"
check 0 20 "show control over HTTP (the daemon)" curl -sf -o /dev/null -X POST \
    -H "Authorization: Bearer $(cat "$work/control.token")" "http://127.0.0.1:$daemon_port/show/resume"
check 0 60 "wallctl cue" "$wallctl" cue intro --config "$work/daemon.yaml" --timeout 20
check 0 20 "the console's page (the daemon)" curl -sf -o /dev/null "http://127.0.0.1:$daemon_port/console"
check nonzero 20 "wallctl serve (show-control port taken)" "$wallctl" serve --config "$work/daemon.yaml"
if ! grep -q "show-control.tcp: cannot listen on 127.0.0.1:$show_port" "$work/check-$checks.log"; then
    fail "wallctl serve (show-control port taken): no sentence naming the input"
    sed 's/^/    /' "$work/check-$checks.log" >&2
fi
stop_background "$daemon" TERM

for pid in "${nodes[@]}"; do stop_background "$pid" TERM; done
stop_background "$master" INT

finish
