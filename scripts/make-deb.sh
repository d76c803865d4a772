#!/usr/bin/env bash
# A Debian package of Lockstep's install (wallnode, wallctl, the systemd units, the lockstep user,
# the documentation), an example wall config and the node's /etc/default file as conffiles, and
# maintainer scripts in debhelper's manner (packaging/deb/; docs/PACKAGING.md), built with dpkg-deb
# into out/; it prints the .deb's path:
#   scripts/make-deb.sh BIN_DIR      (make deb runs it on the release build)
# The package depends on exactly scripts/runtime-packages, the list the install checks.
#
# A .deb already in out/ is reused when nothing it is made from changed since (the binaries, this
# script, packaging/, configs/, the docs, the commit, the settings below); FORCE=1 packs anyway.
# Settings, from the environment:
#   VERSION_SUFFIX  appended to the version: 0.1.0-1 becomes 0.1.0-1+upgrade1 with
#                   VERSION_SUFFIX=+upgrade1 (the package test installs one over the other)
#   DEB_REVISION    the Debian revision, 1 by default
#   DEB_MAINTAINER  the Maintainer field; by default the author of the checkout's last commit
#   DEB_COMPRESSION dpkg-deb's -Z: xz by default (about 30 s on two cores), gzip packs in 15 s
#   OUT             where the .deb goes, out/ by default
set -euo pipefail
cd "$(dirname "$0")/.."
umask 022

bin=${1:?usage: make-deb.sh BIN_DIR (wallctl and wallnode built with --static-swift-stdlib)}
[[ -f Package.resolved ]] || { echo "make-deb: no Package.resolved: build first (make deb does)" >&2; exit 1; }
upstream=$("$bin/wallctl" --version | awk '{ print $NF }')
version=$upstream-${DEB_REVISION:-1}${VERSION_SUFFIX:-}
dpkg --validate-version "$version" || { echo "make-deb: $version is not a Debian version" >&2; exit 1; }
architecture=$(dpkg --print-architecture)
maintainer=${DEB_MAINTAINER:-$(git log -1 --format='%an <%ae>' 2>/dev/null || true)}
[[ "$maintainer" =~ ^[^\<]+\ \<[^@\>]+@[^\>]+\>$ ]] || {
    echo "make-deb: no maintainer (\"$maintainer\"): set DEB_MAINTAINER='Name <address>'" >&2
    exit 1
}
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [[ $commit != unknown ]] && ! git diff --quiet HEAD -- 2>/dev/null; then commit="$commit with uncommitted changes"; fi
compression=${DEB_COMPRESSION:-xz}
out=${OUT:-out}
deb=$out/lockstep_${version}_$architecture.deb

# What the .deb is made from: when none of it is newer than the .deb and the settings and commit
# are those it was made with, it is the same package.
inputs=("$bin/wallctl" "$bin/wallnode" scripts/make-deb.sh scripts/install.sh scripts/make-manpages.sh
    scripts/runtime-packages packaging/deb configs README.md docs Package.resolved)
manifest="version=$version maintainer=$maintainer commit=$commit compression=$compression"
if [[ -z "${FORCE:-}" && -f "$deb" && -f "$deb.made-with" && "$(cat "$deb.made-with")" == "$manifest" ]] \
    && [[ -z "$(find -L "${inputs[@]}" -newer "$deb" -print -quit)" ]]; then
    echo "$deb"
    exit 0
fi

# The Swift packages the binaries link: SwiftPM's checkouts beside the build (BIN_DIR is
# SCRATCH/<triple>/release), for their NOTICE files. Every one must be in the copyright file.
checkouts=${CHECKOUTS:-$(readlink -f "$bin")/../../checkouts}
[[ -d "$checkouts" ]] || { echo "make-deb: no SwiftPM checkouts at $checkouts (set CHECKOUTS)" >&2; exit 1; }
mapfile -t pins < <(jq -r '.pins[].location | sub("\\.git$"; "")' Package.resolved)
for url in "${pins[@]}"; do
    if ! grep -qF "Comment: $url," packaging/deb/copyright; then
        echo "make-deb: the build links $url (Package.resolved), which packaging/deb/copyright does not name" >&2
        exit 1
    fi
    [[ -d "$checkouts/$(basename "$url")" ]] || { echo "make-deb: $url is not checked out in $checkouts" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/lockstep-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/lockstep_${version}_$architecture
docdir=$root/usr/share/doc/lockstep

DESTDIR=$root PREFIX=/usr UNITDIR=/usr/lib/systemd/system SYSUSERSDIR=/usr/lib/sysusers.d \
    scripts/install.sh "$bin" >/dev/null
# As dh_strip does: the symbols and debug information are half of each binary's size.
strip --remove-section=.comment --remove-section=.note "$root/usr/bin/wallctl" "$root/usr/bin/wallnode"
"$root/usr/bin/wallctl" --version >/dev/null
# Man pages compressed, as dh_compress does.
gzip -9n "$root/usr/share/man/man1/wallctl.1" "$root/usr/share/man/man1/wallnode.1"

# Conffiles: the wall's config (an example that does nothing until edited) and the node's id.
install -D -m 0644 packaging/deb/wall.yaml "$root/etc/lockstep/wall.yaml"
install -D -m 0644 packaging/deb/wallnode.default "$root/etc/default/wallnode"

install -m 0644 packaging/deb/copyright "$docdir/copyright"
install -D -m 0644 packaging/deb/lintian-overrides "$root/usr/share/lintian/overrides/lockstep"
for url in "${pins[@]}"; do
    name=$(basename "$url")
    if [[ -f "$checkouts/$name/NOTICE.txt" ]]; then
        install -D -m 0644 "$checkouts/$name/NOTICE.txt" "$docdir/notices/$name.txt"
    fi
done
date=$(git log -1 --format=%cD 2>/dev/null || date -R)
cat >"$work/changelog.Debian" <<CHANGELOG
lockstep ($version) bookworm; urgency=medium

  * Lockstep $upstream, packed by scripts/make-deb.sh from the release build of
    commit $commit.

 -- $maintainer  $date
CHANGELOG
gzip -9n <"$work/changelog.Debian" >"$docdir/changelog.Debian.gz"
chmod 0644 "$docdir/changelog.Debian.gz"

install -d "$root/DEBIAN"
cat >"$root/DEBIAN/control" <<CONTROL
Package: lockstep
Version: $version
Architecture: $architecture
Maintainer: $maintainer
Installed-Size: $(du -sk --apparent-size "$root" | cut -f1)
Depends: $(grep -vE '^[[:space:]]*(#|$)' scripts/runtime-packages | paste -sd, | sed 's/,/, /g')
Suggests: linuxptp, ffmpeg
Section: video
Priority: optional
Description: synchronized video wall: wallnode (one per screen) and wallctl
 Every screen plays local media through GStreamer, slaved to one master clock
 over UDP, following one timeline; wallctl drives the wall and measures how far
 apart the screens are.
CONTROL
printf '%s\n' /etc/default/wallnode /etc/lockstep/wall.yaml >"$root/DEBIAN/conffiles"
for script in postinst prerm postrm; do
    install -m 0755 "packaging/deb/$script" "$root/DEBIAN/$script"
done
# md5sums of every file but the conffiles (dpkg keeps theirs itself), as dh_md5sums writes it.
(cd "$root" && find . -path ./DEBIAN -prune -o -path ./etc -prune -o -type f -printf '%P\0' | sort -z \
    | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/md5sums" "$root/DEBIAN/conffiles" "$root/DEBIAN/control"

mkdir -p "$out"
dpkg-deb -Z"$compression" --root-owner-group --build "$root" "$deb" >/dev/null
echo "$manifest" >"$deb.made-with"
echo "$deb"
