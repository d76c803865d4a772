import XCTest

@testable import LockstepTime

/// What counts as the process standing still, beat by beat. (The monitor itself, in a process
/// stopped and continued: WallCtlTests.)
final class StandStillTests: XCTestCase {
    private func ms(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1000) }

    func testBeatsOnTime_orALittleLate_areNoStandStill() {
        var ledger = StandStillLedger(startingAt: ms(10_000))
        for beat in 1...100 { XCTAssertNil(ledger.beat(at: ms(10_000 + Int64(beat) * 50))) }
        // A wake 400 ms late (a busy machine's worst scheduling) is still within the threshold.
        XCTAssertNil(ledger.beat(at: ms(15_450)))
        XCTAssertEqual(ledger.total(at: ms(15_450)), .zero)
        XCTAssertEqual(ledger.stands, 0)
    }

    func testAGapPastTheThreshold_isTheTimeStoodStill_lessTheBeatsOwnSleep() {
        var ledger = StandStillLedger(startingAt: ms(10_000))
        XCTAssertEqual(ledger.beat(at: ms(17_300)), ms(7_250), "7.3 s between beats, 50 ms of it the sleep")
        XCTAssertEqual(ledger.total(at: ms(17_300)), ms(7_250))
        XCTAssertNil(ledger.beat(at: ms(17_350)))
        XCTAssertEqual(ledger.beat(at: ms(18_350)), ms(950))
        XCTAssertEqual(ledger.total(at: ms(18_360)), ms(8_200), "the two added up")
        XCTAssertEqual(ledger.stands, 2)
    }

    /// A reader woken by the end of a stop (a watchdog's timer, due meanwhile) may run before the
    /// beating thread: it sees the stand-still in progress, and the beat after changes nothing.
    func testAStandStillNotYetBeaten_countsAlready_andTheTotalNeverGoesBack() {
        var ledger = StandStillLedger(startingAt: ms(10_000))
        XCTAssertEqual(ledger.total(at: ms(10_400)), .zero, "within the threshold")
        XCTAssertEqual(ledger.total(at: ms(17_300)), ms(7_250), "in progress")
        var last = MediaTime.zero
        for reading in [17_300, 17_310, 17_320] as [Int64] {
            let total = ledger.total(at: ms(reading))
            XCTAssertGreaterThanOrEqual(total, last)
            last = total
        }
        _ = ledger.beat(at: ms(17_320))
        XCTAssertEqual(ledger.total(at: ms(17_320)), last, "the beat records what was seen")
    }
}
