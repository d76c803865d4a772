#!/usr/bin/env bash
# A Debian package of Lockstep's install (wallnode, wallctl, the systemd units, the lockstep user,
# the documentation), built with dpkg-deb into out/:
#   scripts/make-deb.sh BIN_DIR      (make deb runs it on the release build)
# The package depends on exactly the runtime packages README's "Installing" lists.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${1:?usage: make-deb.sh BIN_DIR (wallctl and wallnode built with --static-swift-stdlib)}
version=$("$bin/wallctl" --version | awk '{ print $NF }')
architecture=$(dpkg --print-architecture)
work=$(mktemp -d "${TMPDIR:-/tmp}/lockstep-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/lockstep_${version}_$architecture

DESTDIR=$root PREFIX=/usr UNITDIR=/usr/lib/systemd/system SYSUSERSDIR=/usr/lib/sysusers.d \
    scripts/install.sh "$bin" >/dev/null
install -d "$root/DEBIAN"
cat >"$root/DEBIAN/control" <<CONTROL
Package: lockstep
Version: $version
Architecture: $architecture
Maintainer: Lockstep <lockstep@localhost>
Section: video
Priority: optional
Depends: $(paste -sd, scripts/runtime-packages | sed 's/,/, /g')
Description: synchronized video wall: wallnode (one per screen) and wallctl
 Every screen plays local media through GStreamer, slaved to one master clock
 over UDP, following one timeline; wallctl drives the wall and measures how far
 apart the screens are.
CONTROL
cat >"$root/DEBIAN/postinst" <<'POSTINST'
#!/bin/sh
set -e
if [ "$1" = configure ]; then
    systemd-sysusers /usr/lib/sysusers.d/lockstep.conf || true
    if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
fi
POSTINST
chmod 0755 "$root/DEBIAN/postinst"
mkdir -p out
dpkg-deb --root-owner-group --build "$root" out/ >/dev/null
echo "out/lockstep_${version}_$architecture.deb"
