# Shared by scripts/boot-test.sh and scripts/package-test.sh (sourced, not run): this machine's
# Debian booted under systemd-nspawn (--boot, a private network: loopback only) on an overlay of /,
# so the machine itself is not changed, and the one-node wall those tests read.
#
# The sourcing script sets `tag` (its name, for messages) and `limit` (seconds a wait may take),
# then calls container_setup; the EXIT trap it sets stops the container, unmounts and removes the
# work folder. Needs root, overlayfs, systemd-nspawn and jq.

work=
root=
nspawn_pid=
leader=

# container_require: root, systemd-nspawn and jq, or a message saying what is missing.
container_require() {
    [[ $(id -u) -eq 0 ]] || { echo "$tag: needs root (overlay mounts, a container)" >&2; exit 1; }
    command -v systemd-nspawn >/dev/null || { echo "$tag: systemd-nspawn is missing (apt-get install systemd-container)" >&2; exit 1; }
    command -v jq >/dev/null || { echo "$tag: jq is missing (apt-get install jq)" >&2; exit 1; }
}

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

container_cleanup() {
    stop_container
    if [[ -n "$root" ]] && mountpoint -q "$root"; then umount "$root" || umount -l "$root"; fi
    [[ -z "$work" ]] || rm -rf "$work"
}

# container_setup: $work, and $root mounted: this machine's / as the lower layer, the changes in
# $work/upper (kept across boots, as a disk is). Nothing of this machine's own services starts:
# only what a display machine runs for the wall.
container_setup() {
    work=$(mktemp -d "${TMPDIR:-/tmp}/lockstep-$tag.XXXXXX")
    root=$work/root
    trap container_cleanup EXIT
    trap 'exit 130' INT TERM
    mkdir -p "$work/upper" "$work/overlay-work" "$root"
    mount -t overlay overlay -o "lowerdir=/,upperdir=$work/upper,workdir=$work/overlay-work" "$root"
    rm -f "$root"/etc/systemd/system/multi-user.target.wants/*
    : >"$root/etc/machine-id"
    chroot "$root" systemctl set-default multi-user.target >/dev/null 2>&1
}

# install_test_wall: the one-node wall both tests read: a looping 4 s clip played to a fakesink,
# the master clock and the node on loopback; /etc/lockstep/wall.yaml and /etc/default/wallnode as
# an admin edits them (both are the package's conffiles).
install_test_wall() {
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
}

# boot N: starts the container; sets $leader to its PID 1.
boot() {
    systemd-nspawn --quiet --directory="$root" --boot --private-network --register=no --keep-unit \
        --machine="lockstep-$tag-$$" >"$work/console-$1.log" 2>&1 &
    nspawn_pid=$!
    for _ in $(seq 1 100); do
        # nspawn's first child forks the container's PID 1 and exits: wait for systemd itself.
        leader=$(ps -o pid=,comm= --ppid "$nspawn_pid" 2>/dev/null | awk '$2 == "systemd" { print $1; exit }' || true)
        [[ -n "$leader" ]] && return 0
        kill -0 "$nspawn_pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "$tag: the container did not start:" >&2
    cat "$work/console-$1.log" >&2
    exit 1
}

# inside COMMAND...: runs COMMAND in the container (its network, mounts and processes).
inside() { nsenter --target "$leader" --net --mount --pid --uts --ipc -- "$@"; }

# wait_booted: until the container's systemd has finished starting up (running or degraded).
wait_booted() {
    local state
    for _ in $(seq 1 "$((limit * 2))"); do
        state=$(inside systemctl is-system-running 2>/dev/null || true)
        [[ "$state" == running || "$state" == degraded ]] && return 0
        sleep 0.5
    done
    echo "$tag: the container's systemd did not finish starting: $state" >&2
    return 1
}

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
            echo "$tag: the node was not in step within $1 s; last status:" >&2
            echo "$json" >&2
            inside journalctl --no-pager -n 60 -u wallnode -u lockstep-clock >&2 || true
            return 1
        fi
        sleep 0.5
    done
}

# units_active: until both units are active (Type=notify: only once each said READY=1).
units_active() {
    local state
    for _ in $(seq 1 "$((limit * 2))"); do
        state=$(inside systemctl is-active lockstep-clock.service wallnode.service 2>/dev/null | paste -sd' ' || true)
        [[ "$state" == "active active" ]] && { echo "$state"; return 0; }
        sleep 0.5
    done
    echo "$tag: the units did not become active: $state" >&2
    inside systemctl --no-pager status lockstep-clock.service wallnode.service >&2 || true
    return 1
}

# wait_clock_locked: ready (READY=1) is the control API answering; the clock locks a moment later,
# sooner or later with the machine's load, and a play needs it.
wait_clock_locked() {
    for _ in $(seq 1 "$((limit * 2))"); do
        status | jq -e '[.. | objects | select(has("masterTimeNs")) | .masterTimeNs] | any' >/dev/null 2>&1 && return 0
        sleep 0.5
    done
    return 0
}

timeline_version() { status | jq -r '[.. | objects | select(has("inStep")) | .version] | first'; }
