import XCTest

@testable import LockstepTime

final class LocalClockTests: XCTestCase {
    func testSimulated_readsOffsetPlusDriftedMonotonic() throws {
        let clock = try LocalClock(simulatedOffset: MediaTime(value: 3600, timescale: 1), driftPPM: 100)
        let mono: Int64 = 1_000_000_000_000  // 1000 s
        XCTAssertEqual(clock.localNanoseconds(atMonotonic: mono), 3_600_000_000_000 + mono + 100_000_000)
    }

    func testSimulated_inverseRoundTrips() throws {
        let clock = try LocalClock(simulatedOffset: MediaTime(value: -90, timescale: 1), driftPPM: -200)
        for mono: Int64 in [0, 1, 123_456_789, 9_876_543_210_123] {
            let local = clock.localNanoseconds(atMonotonic: mono)
            XCTAssertEqual(clock.monotonicNanoseconds(atLocal: local), mono)
        }
    }

    func testMonotonic_isIdentityAndAdvances() {
        let clock = LocalClock.monotonic
        XCTAssertFalse(clock.isSimulated)
        XCTAssertEqual(clock.localNanoseconds(atMonotonic: 42), 42)
        let a = clock.nowNanoseconds()
        let b = clock.nowNanoseconds()
        XCTAssertGreaterThanOrEqual(b, a)
    }

    func testInit_whenDriftOutOfRange_throws() {
        XCTAssertThrowsError(try LocalClock(simulatedOffset: .zero, driftPPM: 20_000)) { error in
            XCTAssertEqual(error as? LocalClock.ConfigurationError, .driftOutOfRange(20_000))
        }
        XCTAssertThrowsError(try LocalClock(simulatedOffset: .indefinite, driftPPM: 0))
    }
}

final class ClockMappingTests: XCTestCase {
    func testMasterAtLocal_appliesOffsetAndRate() {
        let mapping = ClockMapping(
            localTime: MediaTime(nanoseconds: 1_000), masterTime: MediaTime(nanoseconds: 5_000_000), rate: 1 + 100e-6)
        let later = MediaTime(nanoseconds: 1_000 + 1_000_000_000)
        XCTAssertEqual(mapping.masterTime(atLocal: later), MediaTime(nanoseconds: 5_000_000 + 1_000_000_000 + 100_000))
        XCTAssertEqual(mapping.localTime(atMaster: mapping.masterTime(atLocal: later)), later)
        XCTAssertEqual(mapping.ratePPM, 100, accuracy: 1e-6)
    }

    func testAnchored_keepsTheSameLine() {
        let mapping = ClockMapping(localTime: .zero, masterTime: MediaTime(nanoseconds: 77), rate: 0.9999)
        let moved = mapping.anchored(atLocal: MediaTime(nanoseconds: 10_000_000))
        let probe = MediaTime(nanoseconds: 55_555_555)
        XCTAssertEqual(moved.masterTime(atLocal: probe), mapping.masterTime(atLocal: probe))
    }
}
