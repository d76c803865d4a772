# Lockstep: `make demo` runs a local wall with its drift report; `make test` builds and runs every test.
SWIFT ?= swift
BUILD_FLAGS ?=
# What users run: optimised, with the Swift runtime linked in, so a display machine needs only Debian's
# GStreamer and FFmpeg runtime packages (README, "Installing").
RELEASE_FLAGS = -c release --static-swift-stdlib $(BUILD_FLAGS)
PREFIX ?= /usr/local
DESTDIR ?=

.PHONY: setup build test release check-release check-boot install deb demo clean format bench-clock bench-wall bench-timeline bench-failover bench-memory

setup:
	@scripts/setup.sh

build: setup
	$(SWIFT) build $(BUILD_FLAGS)

test: build
	$(SWIFT) test $(BUILD_FLAGS)

release: setup
	$(SWIFT) build $(RELEASE_FLAGS) --product wallctl
	$(SWIFT) build $(RELEASE_FLAGS) --product wallnode

# The release build, and every wallctl and wallnode command run against a live two-node wall on
# loopback: optimised code can fail where the debug build the tests use does not. Then the install,
# run where the Swift toolchain is hidden, and the .deb booted under systemd, its power cut and the
# wall coming back by itself.
check-release: release
	scripts/smoke-release.sh "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)"
	scripts/check-install.sh "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)"
	scripts/boot-test.sh "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)"

# The same power-cut test alone (about 90 s).
check-boot: release
	scripts/boot-test.sh "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)"

# wallnode, wallctl, the systemd units and the lockstep user under $(DESTDIR)$(PREFIX).
install: release
	PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" scripts/install.sh "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)"

# A Debian package of the same, in out/.
deb: release
	scripts/make-deb.sh "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)"

demo: build
	scripts/demo.sh

# Lockstep's clock client and a stock GstNetClientClock side by side (about 7 minutes); see docs/BENCHMARKS.md.
bench-clock: setup
	bench/clock

# 4 and 8 nodes through the network clock on two realistic paths (bench/wall --scenarios) against the
# shared system clock, release build (about 70 minutes); see docs/BENCHMARKS.md.
bench-wall: setup
	$(SWIFT) build $(RELEASE_FLAGS)
	bench/wall --bin "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)" --verbose

# Four nodes following a playlist that loops every 10 s, one node killed every 150 s, network clock
# against the shared system clock, release build (about 25 minutes); see docs/BENCHMARKS.md.
bench-timeline: setup
	$(SWIFT) build $(RELEASE_FLAGS)
	bench/wall --timeline --nodes 4 --minutes 10 --bin "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)"

# Four nodes, two relaying the clock: the master killed mid-play and restarted on a clock 100 s off
# with --join, against the same wall left alone, release build (about 13 minutes); see
# docs/BENCHMARKS.md.
bench-failover: setup
	$(SWIFT) build $(RELEASE_FLAGS)
	bench/failover --verbose --bin "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)"

# One node looping a 4 s clip for an hour, release build: resident memory and descriptors must stay
# flat after the first minute; see docs/BENCHMARKS.md.
bench-memory: setup
	$(SWIFT) build $(RELEASE_FLAGS)
	bench/memory --bin "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)"

clean:
	rm -rf .build

format:
	$(SWIFT) format -i -r Sources Tests Package.swift
