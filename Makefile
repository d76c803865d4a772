# Lockstep: `make demo` runs a local wall with its drift report; `make test` builds and runs every test.
SWIFT ?= swift
BUILD_FLAGS ?=

.PHONY: setup build test check-release demo clean format bench-clock bench-wall bench-timeline bench-memory

setup:
	@scripts/setup.sh

build: setup
	$(SWIFT) build $(BUILD_FLAGS)

test: build
	$(SWIFT) test $(BUILD_FLAGS)

# The release build, and every wallctl and wallnode command run against a live two-node wall on
# loopback: optimised code can fail where the debug build the tests use does not.
check-release: setup
	$(SWIFT) build -c release --product wallctl $(BUILD_FLAGS)
	$(SWIFT) build -c release --product wallnode $(BUILD_FLAGS)
	scripts/smoke-release.sh "$$($(SWIFT) build -c release --show-bin-path)"

demo: build
	scripts/demo.sh

# Lockstep's clock client and a stock GstNetClientClock side by side (about 7 minutes); see docs/BENCHMARKS.md.
bench-clock: setup
	bench/clock

# 4 and 8 nodes through the network clock against the shared system clock, release build (about
# 50 minutes); see docs/BENCHMARKS.md.
bench-wall: setup
	$(SWIFT) build -c release $(BUILD_FLAGS)
	bench/wall --bin "$$($(SWIFT) build -c release --show-bin-path)" --verbose

# Four nodes following a playlist that loops every 10 s, one node killed every 150 s, network clock
# against the shared system clock, release build (about 25 minutes); see docs/BENCHMARKS.md.
bench-timeline: setup
	$(SWIFT) build -c release $(BUILD_FLAGS)
	bench/wall --timeline --nodes 4 --minutes 10 --bin "$$($(SWIFT) build -c release --show-bin-path)"

# One node looping a 4 s clip for an hour, release build: resident memory and descriptors must stay
# flat after the first minute; see docs/BENCHMARKS.md.
bench-memory: setup
	$(SWIFT) build -c release $(BUILD_FLAGS)
	bench/memory --bin "$$($(SWIFT) build -c release --show-bin-path)"

clean:
	rm -rf .build

format:
	$(SWIFT) format -i -r Sources Tests Package.swift
