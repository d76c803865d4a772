#!/usr/bin/env bash
# The .deb as a site lives with it: lintian, then install, upgrade, remove and purge with systemd as
# PID 1, in the container scripts/boot-test.sh boots (scripts/lib-container.sh):
#   1. lintian on the .deb: no error and no warning (packaging/deb/lintian-overrides gives the
#      reason for each overridden tag; docs/PACKAGING.md lists them);
#   2. boot, `dpkg -i` the .deb: no unit failed, none enabled or started by the package; the wall's
#      config and the node's id edited as an admin does, both units enabled and started, the wall
#      played and in step;
#   3. `dpkg -i` the same binaries packed as a newer version (VERSION_SUFFIX=+upgrade1): the running
#      units restarted on it, no unit failed, /var/lib/lockstep and the edited conffiles kept, the
#      node in step again by itself;
#   4. `dpkg --remove`: units stopped, /var/lib/lockstep and the conffiles kept;
#   5. `dpkg --purge`: no lockstep unit failed, loaded or enabled, /var/lib/lockstep and the
#      conffiles gone.
# It prints what it saw at each step.
#
#   scripts/package-test.sh BIN_DIR [--limit 60]      (make check-package; check-release runs it)
#
# BIN_DIR holds wallnode and wallctl built with --static-swift-stdlib. Needs root, overlayfs,
# systemd-nspawn, jq and lintian (scripts/setup.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${1:?usage: package-test.sh BIN_DIR [--limit SECONDS]}
shift
limit=60
while [ $# -gt 0 ]; do
    case "$1" in
        --limit) limit=${2:?--limit needs seconds}; shift 2 ;;
        *) echo "package-test: unknown argument $1" >&2; exit 64 ;;
    esac
done
tag=package-test
# shellcheck source=scripts/lib-container.sh
. scripts/lib-container.sh
container_require
command -v lintian >/dev/null || { echo "package-test: lintian is missing (apt-get install lintian)" >&2; exit 1; }
started=$(date +%s)

fail() {
    echo "package-test: $*" >&2
    exit 1
}

deb=$(scripts/make-deb.sh "$bin")
# The newer version: the same binaries, only the version differs; gzip packs it three times faster.
upgrade=$(VERSION_SUFFIX=+upgrade1 DEB_COMPRESSION=gzip scripts/make-deb.sh "$bin")

container_setup
# This machine's policy-rc.d, if it has one (Docker's says 101, "start nothing", to every action),
# would make the maintainer scripts' deb-systemd-invoke skip each stop and restart, as it should;
# a display machine has none.
rm -f "$root/usr/sbin/policy-rc.d"

echo "lintian $(basename "$deb")"
lintian --fail-on error,warning "$deb" >"$work/lintian.log" 2>&1 || { cat "$work/lintian.log" >&2; fail "lintian: errors or warnings"; }
overridden=$(lintian --show-overrides "$deb" 2>/dev/null | grep '^O: ' || true)
echo "  no error, no warning; $(grep -c . <<<"$overridden") overridden, each with its reason in packaging/deb/lintian-overrides:"
sed 's/^/    /' <<<"$overridden"

# failed_units: the units systemd lists as failed, one a line, but those that failed before
# lockstep was installed (the container's own, printed at boot).
baseline=
failed_units() {
    inside systemctl --failed --plain --no-legend 2>/dev/null | awk -v old=" $baseline " '
        index(old, " " $1 " ") == 0 { print $1 }' || true
}
# lockstep_units: every lockstep unit systemd knows of, loaded or not, with its state.
lockstep_units() {
    inside systemctl list-units --all --plain --no-legend 'wallnode*' 'lockstep*' 2>/dev/null || true
    inside systemctl list-unit-files --plain --no-legend 'wallnode*' 'lockstep*' 2>/dev/null || true
}
# dpkg_inside ARGS...: dpkg in the container, its output kept for a failure; no prompt can wait.
dpkg_inside() { inside env DEBIAN_FRONTEND=noninteractive dpkg "$@" </dev/null >>"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "dpkg $*"; }; }
main_pid() { inside systemctl show -p MainPID --value "$1"; }

echo "boot: systemd as PID 1 in a container, lockstep not installed"
boot 1
wait_booted
baseline=$(failed_units | paste -sd' ')
[[ -z "$baseline" ]] || echo "  failed before lockstep was installed (not counted below): $baseline"

echo "install: dpkg -i $(basename "$deb")"
cp "$deb" "$root/var/tmp/lockstep.deb"
dpkg_inside -i /var/tmp/lockstep.deb
version=$(inside dpkg-query -W -f='${Version}' lockstep)
[[ -z "$(failed_units)" ]] || fail "units failed after the install: $(failed_units | paste -sd' ')"
enabled=$(inside systemctl is-enabled lockstep-clock.service lockstep-controller.service wallnode.service 2>/dev/null | paste -sd' ' || true)
[[ "$enabled" == "disabled disabled disabled" ]] || fail "the package enabled its units: $enabled"
inside id lockstep >/dev/null || fail "no lockstep user after the install"
inside wallctl status --config /etc/lockstep/wall.yaml >"$work/status.log" 2>&1 && fail "the shipped wall.yaml reached a node"
grep -q 'does not answer' "$work/status.log" || { cat "$work/status.log" >&2; fail "the shipped wall.yaml does not load"; }
echo "  lockstep $version; units disabled, none failed; user lockstep; the shipped wall.yaml loads"

install_test_wall
inside systemctl enable --now lockstep-clock.service wallnode.service >/dev/null 2>&1
echo "  wall.yaml and /etc/default/wallnode edited, units enabled: $(units_active)"
wait_clock_locked
inside wallctl play --config /etc/lockstep/wall.yaml >"$work/play.log" 2>&1 || { cat "$work/play.log" >&2; fail "wallctl play"; }
echo "  wallctl play: in step after $(wait_in_step "$limit") s, timeline version $(timeline_version)"
# What the node keeps in /var/lib/lockstep: its files but the play on its screen written down
# beside its proof of play (`.open`), which a clean stop removes and the next play writes again.
durable_state() { inside ls /var/lib/lockstep 2>/dev/null | grep -v '\.open$' | sort; }
# Files of the state before that are not there now, if any.
state_lost() { comm -23 <(printf '%s\n' "$state_before") <(durable_state) | paste -sd' '; }
state_before=$(durable_state)
[[ -n "$state_before" ]] || fail "the node kept no state in /var/lib/lockstep"
pid_before=$(main_pid wallnode.service)

echo "upgrade: dpkg -i $(basename "$upgrade")"
cp "$upgrade" "$root/var/tmp/lockstep.deb"
upgrade_began=$(date +%s%N)
dpkg_inside -i /var/tmp/lockstep.deb
upgraded=$(date +%s%N)
version=$(inside dpkg-query -W -f='${Version}' lockstep)
[[ "$version" == *+upgrade1 ]] || fail "the upgrade left version $version"
echo "  lockstep $version; units: $(units_active)"
pid_after=$(main_pid wallnode.service)
[[ "$pid_after" != "$pid_before" ]] || fail "wallnode was not restarted on the new version (PID $pid_before)"
[[ -z "$(failed_units)" ]] || fail "units failed after the upgrade: $(failed_units | paste -sd' ')"
grep -q '^name: boot-test$' "$root/etc/lockstep/wall.yaml" || fail "the upgrade replaced the edited wall.yaml"
grep -qx 'WALLNODE_ID=screen-1' "$root/etc/default/wallnode" || fail "the upgrade replaced the edited /etc/default/wallnode"
# The node's state is kept: every file it held before is there after (the play the restart ended
# may add the proof of play's log).
lost=$(state_lost)
[[ -z "$lost" ]] || fail "the upgrade lost state in /var/lib/lockstep: $lost"
echo "  wallnode restarted (PID $pid_before -> $pid_after), none failed, conffile edits and /var/lib/lockstep ($(paste -sd' ' <<<"$state_before")) kept"
wait_in_step "$limit" >/dev/null
in_step=$(date +%s%N)
echo "  in step again, no command given: dpkg -i took $(awk -v ns=$((upgraded - upgrade_began)) 'BEGIN { printf "%.1f", ns / 1e9 }') s (the units restarted in its postinst), in step $(awk -v ns=$((in_step - upgraded)) 'BEGIN { printf "%.1f", ns / 1e9 }') s after it returned; timeline version $(timeline_version)"

echo "remove: dpkg --remove lockstep"
dpkg_inside --remove lockstep
state=$(inside systemctl is-active lockstep-clock.service wallnode.service 2>/dev/null | paste -sd' ' || true)
for unit_state in $state; do
    [[ "$unit_state" == inactive || "$unit_state" == unknown ]] || fail "units not stopped by the remove: $state"
done
[[ -z "$(failed_units)" ]] || fail "units failed after the remove: $(failed_units | paste -sd' ')"
lost=$(state_lost)
[[ -z "$lost" ]] || fail "remove did not keep /var/lib/lockstep: $lost gone"
[[ -f "$root/etc/lockstep/wall.yaml" && -f "$root/etc/default/wallnode" ]] || fail "remove did not keep the conffiles"
echo "  units stopped ($state), none failed; /var/lib/lockstep and the conffiles kept"

echo "purge: dpkg --purge lockstep"
dpkg_inside --purge lockstep
[[ -z "$(failed_units)" ]] || fail "units failed after the purge: $(failed_units | paste -sd' ')"
left=$(lockstep_units)
[[ -z "$left" ]] || fail "systemd still knows lockstep units after the purge: $left"
links=$(find "$root/etc/systemd/system" -name 'wallnode*' -o -name 'lockstep*' | sed "s#^$root##")
[[ -z "$links" ]] || fail "enablement links left after the purge: $links"
[[ ! -e "$root/var/lib/lockstep" ]] || fail "/var/lib/lockstep is still there after the purge"
[[ ! -e "$root/etc/lockstep/wall.yaml" && ! -e "$root/etc/default/wallnode" ]] || fail "conffiles left after the purge"
status=$(inside dpkg-query -W -f='${db:Status-Status}' lockstep 2>/dev/null || echo absent)
[[ "$status" == not-installed || "$status" == absent ]] || fail "dpkg still lists lockstep: $status"
echo "  no lockstep unit failed, loaded or enabled; /var/lib/lockstep and the conffiles gone; user lockstep kept"
echo "package-test: install, upgrade, remove and purge as a site does them, in $(($(date +%s) - started)) s"
