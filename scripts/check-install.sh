#!/usr/bin/env bash
# The install as a display machine gets it: `make install` into a staging root, every shared library
# the installed binaries load checked to come from a Debian runtime package README lists, then the
# whole release smoke test (scripts/smoke-release.sh) run on the installed binaries with the Swift
# toolchain hidden (a mount namespace with an empty directory over it), so nothing can reach it.
#
#   scripts/check-install.sh BIN_DIR      (make check-release runs it on the release build)
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${1:?usage: check-install.sh BIN_DIR (wallctl and wallnode built with --static-swift-stdlib)}
work=$(mktemp -d "${TMPDIR:-/tmp}/lockstep-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
stage=$work/stage

DESTDIR=$stage PREFIX=/usr scripts/install.sh "$bin" >/dev/null

# Every library the binaries link (their NEEDED entries) must come from a package in
# scripts/runtime-packages, the list README's "Installing" gives and the .deb depends on.
mapfile -t runtime < <(grep -v '^#' scripts/runtime-packages)
failed=0
for program in wallnode wallctl; do
    binary=$stage/usr/bin/$program
    resolved=$(ldd "$binary")
    if grep -q 'not found' <<<"$resolved"; then
        echo "check-install: $program: $(grep 'not found' <<<"$resolved")" >&2
        failed=1
    fi
    for soname in $(objdump -p "$binary" | awk '$1 == "NEEDED" { print $2 }'); do
        path=$(awk -v name="$soname" '$1 == name && $2 == "=>" { print $3 }' <<<"$resolved")
        [[ -n "$path" ]] || path=$(awk -v name="$soname" '$1 ~ name { print $1 }' <<<"$resolved" | head -1)
        package=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -1 | cut -d: -f1 || true)
        [[ -n "$package" ]] || package=$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1 || true)
        if [[ -z "$package" ]]; then
            echo "check-install: $program links $soname ($path), which no Debian package provides" >&2
            failed=1
        elif ! printf '%s\n' "${runtime[@]}" | grep -qx "$package"; then
            echo "check-install: $program links $soname from $package, missing from scripts/runtime-packages" >&2
            failed=1
        fi
    done
done
[[ $failed -eq 0 ]] || exit 1
echo "check-install: wallnode and wallctl load only libraries of Debian's runtime packages"

# The toolchain's root: /opt/swift for /opt/swift/usr/bin/swift.
toolchain=$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")")
namespace=(unshare --mount --fork)
[[ $(id -u) -eq 0 ]] || namespace=(unshare --user --map-root-user --mount --fork)
echo "check-install: smoke test of the installed binaries with $toolchain hidden"
"${namespace[@]}" bash -c '
    set -euo pipefail
    mount -t tmpfs -o ro none "$1"
    if [[ -e "$1/usr/bin/swift" ]]; then echo "check-install: could not hide $1" >&2; exit 1; fi
    shift
    exec "$@"' hide "$toolchain" scripts/smoke-release.sh "$stage/usr/bin"
