#!/usr/bin/env bash
# The wall comes back by itself after a power cut, with systemd as PID 1 and the units as they ship.
#
# Boots a container (systemd-nspawn --boot, a private network: loopback only) whose root is this
# machine's Debian with the .deb installed on top, through an overlay (the machine itself is not
# changed): the master clock and one node enabled as README's "Running a real wall" says, a node
# playing a looping playlist to a fakesink. Then:
#   1. boot, wait for both units to be active (Type=notify: only once each said READY=1), start the
#      playlist with `wallctl play` (a timeline the node keeps), wait for the node to be in step;
#   2. cut the power: SIGKILL to the container's PID 1 and so to every process in it at once;
#   3. boot again and give no command: the node must be playing its timeline, in step, within
#      --limit seconds of the boot, on a timeline version newer than the one before the cut (the
#      master's monotonic clock started again: README's restart rule).
# It prints what it saw at each step and the time from boot to "in step".
#
#   scripts/boot-test.sh BIN_DIR [--limit 60]
#
# BIN_DIR holds wallnode and wallctl built with --static-swift-stdlib (make check-boot builds them).
# Needs root, overlayfs and systemd-nspawn (Debian's systemd-container, which setup installs). A power
# cut here loses no page cache, which a real one does: the node's write-flush-rename of its timeline is
# what covers that, and this test does not reach it.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${1:?usage: boot-test.sh BIN_DIR [--limit SECONDS]}
shift
limit=60
while [ $# -gt 0 ]; do
    case "$1" in
        --limit) limit=${2:?--limit needs seconds}; shift 2 ;;
        *) echo "boot-test: unknown argument $1" >&2; exit 64 ;;
    esac
done
[[ $(id -u) -eq 0 ]] || { echo "boot-test: needs root (overlay mounts, a container)" >&2; exit 1; }
command -v systemd-nspawn >/dev/null || { echo "boot-test: systemd-nspawn is missing (apt-get install systemd-container)" >&2; exit 1; }
command -v jq >/dev/null || { echo "boot-test: jq is missing (apt-get install jq)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/lockstep-boot.XXXXXX")
root=$work/root
nspawn_pid=
leader=

stop_container() {
    if [[ -n "$leader" ]] && kill -0 "$leader" 2>/dev/null; then kill -KILL "$leader" 2>/dev/null || true; fi
    if [[ -n "$nspawn_pid" ]]; then
        for _ in $(seq 1 100); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$nspawn_pid" 2>/dev/null || true
        wait "$nspawn_pid" 2>/dev/null || true
    fi
    nspawn_pid=
    leader=
}
cleanup() {
    stop_container
    if mountpoint -q "$root"; then umount "$root" || umount -l "$root"; fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The root: this machine's / as the lower layer, the changes in $work/upper (kept across both boots,
# as a disk is).
mkdir -p "$work/upper" "$work/overlay-work" "$root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$work/upper,workdir=$work/overlay-work" "$root"

deb=$(scripts/make-deb.sh "$bin")
cp "$deb" "$root/tmp/lockstep.deb"
chroot "$root" dpkg -i /tmp/lockstep.deb >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; exit 1; }
rm "$root/tmp/lockstep.deb"
# Nothing of this machine's own services: only what a display machine runs for the wall.
rm -f "$root"/etc/systemd/system/multi-user.target.wants/*
chroot "$root" systemctl enable lockstep-clock.service wallnode.service >/dev/null 2>&1
: >"$root/etc/machine-id"
chroot "$root" systemctl set-default multi-user.target >/dev/null 2>&1

install -d "$root/srv/lockstep"
scripts/make-media.sh framecode "$root/srv/lockstep/clip.mp4" 4 320x180 >/dev/null
install -d "$root/etc/lockstep"
cat >"$root/etc/lockstep/wall.yaml" <<'YAML'
name: boot-test
clock: 127.0.0.1:5637
media: /srv/lockstep/clip.mp4
canvas: {width: 320, height: 180}
loop: true
playlist:
  - {media: /srv/lockstep/clip.mp4}
nodes:
  - id: screen-1
    control: 127.0.0.1:7701
    tile: {x: 0, y: 0, width: 320, height: 180}
    output: {width: 320, height: 180}
    video-sink: "fakesink sync=true"
YAML
echo "WALLNODE_ID=screen-1" >"$root/etc/default/wallnode"

# boot N: starts the container; sets $leader to its PID 1.
boot() {
    systemd-nspawn --quiet --directory="$root" --boot --private-network --register=no --keep-unit \
        --machine="lockstep-boot-$$" >"$work/console-$1.log" 2>&1 &
    nspawn_pid=$!
    for _ in $(seq 1 100); do
        # nspawn's first child forks the container's PID 1 and exits: wait for systemd itself.
        leader=$(ps -o pid=,comm= --ppid "$nspawn_pid" 2>/dev/null | awk '$2 == "systemd" { print $1; exit }' || true)
        [[ -n "$leader" ]] && return 0
        kill -0 "$nspawn_pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "boot-test: the container did not start:" >&2
    cat "$work/console-$1.log" >&2
    exit 1
}

# inside COMMAND...: runs COMMAND in the container (its network, mounts and processes).
inside() { nsenter --target "$leader" --net --mount --pid --uts --ipc -- "$@"; }

# status: the node's /status as wallctl reads it (JSON), or nothing.
status() { inside wallctl status --config /etc/lockstep/wall.yaml --json 2>/dev/null || true; }

# wait_in_step SECONDS: until the node reports its timeline in step; prints the seconds it took.
wait_in_step() {
    local started now json
    started=$(date +%s%N)
    while :; do
        json=$(status)
        if [[ -n "$json" ]] && jq -e '[.. | objects | select(has("inStep")) | .inStep] | any' <<<"$json" >/dev/null 2>&1; then
            now=$(date +%s%N)
            awk -v ns=$((now - started)) 'BEGIN { printf "%.1f\n", ns / 1e9 }'
            return 0
        fi
        now=$(date +%s%N)
        if (((now - started) / 1000000000 > $1)); then
            echo "boot-test: the node was not in step within $1 s; last status:" >&2
            echo "$json" >&2
            inside journalctl --no-pager -n 60 -u wallnode -u lockstep-clock >&2 || true
            return 1
        fi
        sleep 0.5
    done
}

units_active() {
    local state
    for _ in $(seq 1 "$((limit * 2))"); do
        state=$(inside systemctl is-active lockstep-clock.service wallnode.service 2>/dev/null | paste -sd' ' || true)
        [[ "$state" == "active active" ]] && { echo "$state"; return 0; }
        sleep 0.5
    done
    echo "boot-test: the units did not become active: $state" >&2
    inside systemctl --no-pager status lockstep-clock.service wallnode.service >&2 || true
    return 1
}

timeline_version() { status | jq -r '[.. | objects | select(has("inStep")) | .version] | first'; }

echo "boot 1: systemd as PID 1 in a container, lockstep installed from $(basename "$deb")"
boot 1
echo "  units: $(units_active)"
# Ready (READY=1) is the control API answering; the clock locks a moment later, sooner or later
# with the machine's load, and a play needs it.
for _ in $(seq 1 "$((limit * 2))"); do
    status | jq -e '[.. | objects | select(has("masterTimeNs")) | .masterTimeNs] | any' >/dev/null 2>&1 && break
    sleep 0.5
done
inside wallctl play --config /etc/lockstep/wall.yaml >"$work/start.log" 2>&1 || { cat "$work/start.log" >&2; exit 1; }
echo "  wallctl play: done; in step after $(wait_in_step "$limit") s"
before=$(timeline_version)
echo "  timeline version $before"
sleep 3

echo "power cut: SIGKILL to the container's PID 1 ($leader)"
stop_container

echo "boot 2: no command given"
boot 2
booted=$(date +%s%N)
echo "  units: $(units_active)"
wait_in_step "$limit" >/dev/null
now=$(date +%s%N)
after=$(timeline_version)
echo "  in step $(awk -v ns=$((now - booted)) 'BEGIN { printf "%.1f", ns / 1e9 }') s after the boot began, timeline version $after"
if ! [[ "$after" =~ ^[0-9]+$ && "$before" =~ ^[0-9]+$ && "$after" -gt "$before" ]]; then
    echo "boot-test: expected a timeline version newer than $before after the restart; got $after" >&2
    exit 1
fi
restarts=$(inside systemctl show -p NRestarts --value wallnode.service)
echo "  wallnode restarts since boot: $restarts"
# What the units logged at warning or worse (the node's JSON lines by their level, other lines, the
# runtime's and systemd's, by their words), across both boots: printed, for a reader to judge.
inside journalctl --no-pager -o short -u lockstep-clock -u wallnode 2>/dev/null \
    | sed -E 's/^.{15} [^ ]+ ([a-z-]+)\[[0-9]+\]: /\1: /' >"$work/journal.txt" || true
{
    grep -E '^[a-z-]+: \{.*"level":"(warning|error|critical)"' "$work/journal.txt"
    grep -vE '^[a-z-]+: \{' "$work/journal.txt" | grep -iE 'warn|error|fail'
} >"$work/warnings.txt" || true
echo "  warnings and errors the units logged over both boots: $(grep -c . "$work/warnings.txt" || true)"
sed -E 's/0x[0-9a-f]+/0x…/g' "$work/warnings.txt" | sort | uniq -c | sort -rn | head -10 | cut -c1-200 | sed 's/^/    /'
echo "boot-test: the wall came back by itself"
