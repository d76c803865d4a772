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
# Needs root, overlayfs and systemd-nspawn (Debian's systemd-container, which setup installs); the
# container and the wall's config are scripts/lib-container.sh's, shared with package-test.sh. A power
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
tag=boot-test
# shellcheck source=scripts/lib-container.sh
. scripts/lib-container.sh
container_require
container_setup

deb=$(scripts/make-deb.sh "$bin")
cp "$deb" "$root/tmp/lockstep.deb"
chroot "$root" dpkg -i /tmp/lockstep.deb >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; exit 1; }
rm "$root/tmp/lockstep.deb"
chroot "$root" systemctl enable lockstep-clock.service wallnode.service >/dev/null 2>&1
install_test_wall

echo "boot 1: systemd as PID 1 in a container, lockstep installed from $(basename "$deb")"
boot 1
echo "  units: $(units_active)"
wait_clock_locked
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
