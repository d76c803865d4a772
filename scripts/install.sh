#!/usr/bin/env bash
# Installs Lockstep's release binaries, systemd units, service user, documentation and man pages:
#   scripts/install.sh BIN_DIR        (make install runs it; PREFIX and DESTDIR as usual)
# BIN_DIR holds wallnode and wallctl built with --static-swift-stdlib: the installed machine needs
# Debian's GStreamer and FFmpeg runtime packages (README, "Installing"), not Swift.
# With DESTDIR empty and run as root, the lockstep user is created and systemd reloaded.
set -euo pipefail

bin=${1:?usage: scripts/install.sh BIN_DIR}
prefix=${PREFIX:-/usr/local}
destdir=${DESTDIR:-}
checkout=$(cd "$(dirname "$0")/.." && pwd)
root="$destdir$prefix"
# Units and sysusers entries go where systemd looks for them under this prefix.
unitdir=${UNITDIR:-$prefix/lib/systemd/system}
sysusersdir=${SYSUSERSDIR:-$prefix/lib/sysusers.d}
docdir=$prefix/share/doc/lockstep

for program in wallnode wallctl; do
    [[ -x "$bin/$program" ]] || { echo "install: $bin/$program is missing: build it first (make install does)" >&2; exit 1; }
    if ldd "$bin/$program" | grep -q 'libswiftCore'; then
        echo "install: $bin/$program links the Swift runtime dynamically; build with --static-swift-stdlib" >&2
        exit 1
    fi
    install -D -m 0755 "$bin/$program" "$root/bin/$program"
done

# The units name the installed binaries and documentation under this prefix.
for unit in wallnode.service lockstep-clock.service lockstep-controller.service; do
    install -d "$destdir$unitdir"
    sed -e "s#/usr/local/bin/#$prefix/bin/#g" -e "s#/usr/local/share/doc/lockstep/#$docdir/#g" \
        "$checkout/configs/systemd/$unit" >"$destdir$unitdir/$unit"
    chmod 0644 "$destdir$unitdir/$unit"
done
install -D -m 0644 "$checkout/configs/systemd/lockstep.sysusers" "$destdir$sysusersdir/lockstep.conf"
install -D -m 0644 "$checkout/README.md" "$destdir$docdir/README.md"
for file in "$checkout"/configs/*.yaml "$checkout"/docs/*.md; do
    install -D -m 0644 "$file" "$destdir$docdir/$(basename "$(dirname "$file")")/$(basename "$file")"
done
# The example Prometheus alert rules (docs/OPERATIONS.md, "Logs and metrics").
install -D -m 0644 "$checkout/packaging/prometheus/lockstep-alerts.yml" \
    "$destdir$prefix/share/lockstep/prometheus/lockstep-alerts.yml"
# wallctl(1) and wallnode(1), from the binaries' own help.
"$checkout/scripts/make-manpages.sh" "$bin" "$destdir$prefix/share/man/man1"
chmod 0644 "$destdir$prefix/share/man/man1/wallctl.1" "$destdir$prefix/share/man/man1/wallnode.1"

echo "install: wallnode and wallctl in $root/bin, units in $destdir$unitdir"
if [[ -z "$destdir" && $(id -u) -eq 0 ]]; then
    if command -v systemd-sysusers >/dev/null; then
        systemd-sysusers "$sysusersdir/lockstep.conf"
        echo "install: user lockstep ready"
    fi
    if [[ -d /run/systemd/system ]]; then
        systemctl daemon-reload
        echo "install: systemd reloaded; next: /etc/lockstep/wall.yaml, /etc/default/wallnode, systemctl enable --now wallnode"
    fi
fi
