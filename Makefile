# Lockstep: `make demo` runs a local wall with its drift report; `make test` builds and runs every test.
SWIFT ?= swift
BUILD_FLAGS ?=
# What users run: optimised, with the Swift runtime linked in, so a display machine needs only Debian's
# GStreamer and FFmpeg runtime packages (README, "Installing").
# SCRATCH: where the release build goes (`make deb SCRATCH=.build-pkg` keeps it apart from .build).
SCRATCH ?= .build
RELEASE_FLAGS = -c release --static-swift-stdlib --scratch-path $(SCRATCH) $(BUILD_FLAGS)
# Where SwiftPM puts the release binaries (a link to <triple>/release).
RELEASE_BIN ?= $(SCRATCH)/release
RELEASE_BINARIES = $(RELEASE_BIN)/wallctl $(RELEASE_BIN)/wallnode
# What the release binaries are built from: every file and folder under Sources/ (a folder's time
# changes when a file is added or removed), the package manifest and the pins SwiftPM resolved.
RELEASE_INPUTS := $(shell find Sources -type f -o -type d) $(wildcard Package*.swift Package.resolved)
PREFIX ?= /usr/local
DESTDIR ?=
# Under CI every recipe line says how long it took ("ci-time:" lines on stderr).
ifdef CI
SHELL := $(CURDIR)/scripts/timed-shell
endif

.PHONY: setup build test fuzz bench-fuzz sanitize release check-release check-boot check-package check-runtime-list install deb demo clean format bench-clock bench-wall bench-timeline bench-failover bench-memory bench-chaos bench-content bench-console

setup:
	@scripts/setup.sh

build: setup
	$(SWIFT) build $(BUILD_FLAGS)

# Every test: the debug build's suites, the fuzz run, bench/chaos --quick, and the release build's
# checks (make check-release), in lanes that keep the suites judged on timing alone (scripts/test.sh).
# RELEASE_SCRATCH: where its release build goes, apart from .build so both can build at once.
RELEASE_SCRATCH ?= .build-release
test: setup
	SWIFT=$(SWIFT) BUILD_FLAGS="$(BUILD_FLAGS)" FUZZ_SECONDS=$(FUZZ_SECONDS) RELEASE_SCRATCH=$(RELEASE_SCRATCH) scripts/test.sh

# libFuzzer with AddressSanitizer on everything a node parses, for FUZZ_SECONDS (make test: 60).
FUZZ_SECONDS ?= 60
fuzz: setup
	FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh

# The integration suite built with ThreadSanitizer, then with AddressSanitizer (each about 30 minutes;
# not in make test); see docs/BENCHMARKS.md, "Sanitizers".
sanitize: setup
	scripts/sanitize.sh thread
	scripts/sanitize.sh address

# The same for an hour; see docs/BENCHMARKS.md.
bench-fuzz: setup
	bench/fuzz

# The static release build, only when a source is newer than the binaries: `make deb` and
# `make install` right after a build reuse it. After a build the binaries take the time it began,
# so a source touched but not changed (SwiftPM then links nothing new) is not rebuilt again, and
# one edited while it ran is.
release: $(RELEASE_BINARIES)

$(RELEASE_BINARIES) &: $(RELEASE_INPUTS) | setup
	mkdir -p $(SCRATCH) && touch $(SCRATCH)/release-build-began
	$(SWIFT) build $(RELEASE_FLAGS) --product wallctl
	$(SWIFT) build $(RELEASE_FLAGS) --product wallnode
	touch -r $(SCRATCH)/release-build-began $(RELEASE_BINARIES)

# The release build, and every wallctl and wallnode command run against a live two-node wall on
# loopback: optimised code can fail where the debug build the tests use does not. Then the install,
# run where the Swift toolchain is hidden, the .deb booted under systemd, its power cut and the
# wall coming back by itself, and the .deb checked by lintian, installed, upgraded and purged.
check-release: release check-runtime-list
	scripts/smoke-release.sh $(RELEASE_BIN)
	scripts/check-install.sh $(RELEASE_BIN)
	scripts/boot-test.sh $(RELEASE_BIN)
	scripts/package-test.sh $(RELEASE_BIN)

# The same power-cut test alone (about 90 s).
check-boot: release
	scripts/boot-test.sh $(RELEASE_BIN)

# The .deb alone: lintian, then install, upgrade, remove and purge under systemd (about 80 s).
check-package: release
	scripts/package-test.sh $(RELEASE_BIN)

# The documented runtime package list names every package of scripts/runtime-packages.
check-runtime-list:
	scripts/check-runtime-list.sh

# wallnode, wallctl, the systemd units, the lockstep user and the man pages under $(DESTDIR)$(PREFIX).
install: release
	PREFIX="$(PREFIX)" DESTDIR="$(DESTDIR)" scripts/install.sh $(RELEASE_BIN)

# A Debian package of the same, in out/ (reused while nothing it is made from changed).
deb: release
	scripts/make-deb.sh $(RELEASE_BIN)

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

# A four-node wall under an hour of seeded faults (kill -9, SIGSTOP, master failover, clock-path loss
# and stalls, a network partition with a push during it, edits and content pushes, a read-only or
# full state directory, hostile requests and show control, the control daemon killed), with cues over
# OSC, TCP, UDP and HTTP and a console open throughout, judged by ground truth, release build; see
# docs/BENCHMARKS.md. CHAOS_ARGS adds options: `make bench-chaos CHAOS_ARGS="--seed 2 --schedule"`.
CHAOS_ARGS ?=
bench-chaos: setup
	$(SWIFT) build $(RELEASE_FLAGS)
	bench/chaos --minutes 60 --keep $(CHAOS_ARGS) --bin "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)"

# Content pushed to eight nodes in network namespaces (2 GB, as root): time to ready, what the
# controller's origin sent against what the nodes received, CPU and memory; see docs/BENCHMARKS.md.
bench-content: setup
	$(SWIFT) build $(RELEASE_FLAGS)
	bench/content --bin "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)"

# The operator console with 16 nodes on this machine: the daemon's CPU with no console, one and ten,
# each update's lag, and chromium's first render, release build (about 5 minutes); see
# docs/BENCHMARKS.md.
bench-console: setup
	$(SWIFT) build $(RELEASE_FLAGS)
	bench/console --bin "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)"

# One node looping a 4 s clip for an hour, release build: resident memory and descriptors must stay
# flat after the first minute; see docs/BENCHMARKS.md.
bench-memory: setup
	$(SWIFT) build $(RELEASE_FLAGS)
	bench/memory --bin "$$($(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)"

clean:
	rm -rf .build

format:
	$(SWIFT) format -i -r Sources Tests Package.swift
