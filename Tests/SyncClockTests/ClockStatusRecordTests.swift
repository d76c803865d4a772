import Foundation
import LockstepTime
import XCTest

@testable import SyncClock

/// `wallctl clock probe --json` prints each status as a `ClockStatusRecord`, which bench/clock
/// reads: times in nanoseconds, the state by name, the master's identity and epoch in hex.
final class ClockStatusRecordTests: XCTestCase {
    private let local: Int64 = 5_000_000_000

    private func status(offset: Int64, bound: Int64, ratePPM: Double) -> ClockStatus {
        .fixture(
            offset: offset, ratePPM: ratePPM, at: local, bound: bound, guaranteedBound: bound * 3, growthPPM: 10,
            master: MasterIdentity(identity: 0xABC, epoch: 0x1F, isRealtime: false, isSimulated: true), path: nil,
            generation: 2, pollInterval: 250_000_000)
    }

    func testARecord_saysTheStatusInNanosecondsAndHex_andReadsBackTheSame() throws {
        let record = ClockStatusRecord(
            status: status(offset: 1_234_567, bound: 40_000, ratePPM: 12.5), start: 1_000_000_000, kind: "estimate")
        XCTAssertEqual(record.localNs, local)
        XCTAssertEqual(record.masterNs, local + 1_234_567)
        XCTAssertEqual(record.offsetNs, 1_234_567)
        XCTAssertEqual(record.elapsedNs, 4_000_000_000)
        XCTAssertEqual(record.errorBoundNs, 40_000)
        XCTAssertEqual(record.guaranteedErrorBoundNs, 120_000)
        XCTAssertEqual(record.state, .locked)
        XCTAssertEqual(record.serverIdentity, "abc")
        XCTAssertEqual(record.epoch, "1f")
        XCTAssertEqual(record.generation, 2)
        let json = try JSONEncoder().encode(record)
        XCTAssertTrue(String(decoding: json, as: UTF8.self).contains(#""state":"locked""#))
        XCTAssertEqual(try JSONDecoder().decode(ClockStatusRecord.self, from: json), record)
    }

    func testAStatusReadLater_keepsItsMapping_andItsBoundGrows() {
        let earlier = status(offset: 1_000, bound: 40_000, ratePPM: 100)
        let later = earlier.extrapolated(to: local + 1_000_000_000)
        XCTAssertEqual(later.localTime, MediaTime(nanoseconds: local + 1_000_000_000))
        // At 100 ppm the master gains 100 µs a second on this clock.
        XCTAssertEqual(later.offset.nanoseconds, 101_000)
        // 10 ppm of growth over a second: 10 µs more.
        XCTAssertEqual(later.errorBound.nanoseconds, 50_000)
    }
}
