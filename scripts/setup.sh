#!/usr/bin/env bash
# Installs, idempotently, every Debian package Lockstep needs to build, test and run.
# Packages already installed are left alone; apt-get runs only when something is missing.
set -euo pipefail

packages=(
    # build: pkg-config and the C libraries the Swift targets link
    pkg-config
    libgstreamer1.0-dev
    libgstreamer-plugins-base1.0-dev
    libavformat-dev
    libavcodec-dev
    libavutil-dev
    zlib1g-dev
    libssl-dev
    # build: the node's own output window on X11 (Xlib, RandR monitors)
    libx11-dev
    libxrandr-dev
    # build: Foundation's networking, which the release build links statically (--static-swift-stdlib)
    libcurl4-openssl-dev
    # run: GStreamer elements the player's pipelines use (playbin, videocrop, decoders, sinks)
    gstreamer1.0-tools
    gstreamer1.0-plugins-base
    gstreamer1.0-plugins-good
    gstreamer1.0-libav
    gstreamer1.0-x
    # run: kmssink, the HLS and MPEG-TS demuxers and the bitstream parsers; the GL sink; ALSA output
    gstreamer1.0-plugins-bad
    gstreamer1.0-gl
    gstreamer1.0-alsa
    # run: the sans-serif font subtitles are drawn in
    fonts-dejavu-core
    # run: the tz database schedules are written in
    tzdata
    # test: media generation (ffmpeg with libx264) and stock GStreamer net clock interop (python3-gi)
    ffmpeg
    python3-gi
    gir1.2-gstreamer-1.0
    # run: granting real-time scheduling to wallnode without root (setcap)
    libcap2-bin
    # test: a TLS control API (a certificate made with openssl, fetched with curl)
    openssl
    curl
    # test: systemd-analyze verify and security on the units; the install check (objdump, unshare)
    systemd
    binutils
    util-linux
    # test: the screen test, four nodes' windows under a window manager (Xvfb, openbox, xrandr,
    # xwininfo and xprop)
    xvfb
    openbox
    x11-xserver-utils
    x11-utils
    # test: the glass test unmaps, maps and moves a node's window as a window manager would
    xdotool
    # test: a node fullscreen on Wayland (weston, headless, and its screenshooter)
    weston
    # test: the power-cut test, the .deb booted under systemd in a container (systemd-nspawn), its
    # status read with jq
    systemd-container
    jq
    # test: the package test's lint of the .deb (lintian: no error, no warning; docs/PACKAGING.md)
    lintian
    # test: the example alert rules checked and unit-tested (promtool, in Debian's prometheus package)
    prometheus
    # test: a virtual environment for the stock senders the show-control tests drive the wall with
    python3-venv
    # test: the operator console in a real browser (headless, driven over WebDriver by selenium)
    chromium
    chromium-driver
    # test: a wall on PTP, ptp4l across veth pairs in network namespaces (ip), read with pmc
    linuxptp
    iproute2
)

# test: python-osc from PyPI, a stock OSC sender (what TouchOSC and QLab speak), and selenium, which
# drives Debian's chromium through its chromedriver for the console test, in a virtual environment
# of the project's own (.build/test-python), so no system Python is changed.
python_packages() {
    local root venv
    root=$(cd "$(dirname "$0")/.." && pwd)
    venv="$root/.build/test-python"
    if "$venv/bin/python3" -c "import pythonosc, selenium" 2>/dev/null; then return; fi
    echo "setup: python-osc and selenium into $venv"
    mkdir -p "$root/.build"
    [[ -x "$venv/bin/python3" ]] || /usr/bin/python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check python-osc==1.9.3 selenium==4.51.0
}

missing=()
for package in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$package")
done

if [[ ${#missing[@]} -eq 0 ]]; then
    echo "setup: all ${#packages[@]} packages present"
    python_packages
    exit 0
fi

sudo=()
if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
fi
echo "setup: installing ${missing[*]}"
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
python_packages
