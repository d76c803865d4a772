import LockstepTime
import WallContent
import XCTest

final class TransferPacerTests: XCTestCase {
    private func at(_ milliseconds: Int64) -> MediaTime { MediaTime(value: milliseconds, timescale: 1000) }

    func testTransfersTogether_stayUnderTheRate_aBurstPassingAtOnce() {
        let pacer = TransferPacer(bytesPerSecond: 1_000_000, burst: 100_000, now: at(0))
        XCTAssertEqual(pacer.take(100_000, at: at(0)), .zero, "the burst passes at once")
        // Two transfers taking 50 kB each at the same instant: the second waits for both.
        XCTAssertEqual(pacer.take(50_000, at: at(0)), at(50))
        XCTAssertEqual(pacer.take(50_000, at: at(0)), at(100))
        // A second later the budget is full again, never more than the burst.
        XCTAssertEqual(pacer.take(100_000, at: at(1100)), .zero)
        XCTAssertEqual(pacer.take(1000, at: at(1100)), at(1))
    }

    func testNoLimit_isNoPacer() {
        XCTAssertNil(TransferPacer(limit: nil))
        XCTAssertNil(TransferPacer(limit: 0))
        XCTAssertNil(TransferPacer(limit: -5))
        XCTAssertEqual(TransferPacer(limit: 2e6)?.bytesPerSecond, 2e6)
        XCTAssertEqual(TransferPacer(bytesPerSecond: 1e9).burst, 1e7, "10 ms at the rate")
        XCTAssertEqual(TransferPacer(bytesPerSecond: 1e3).burst, 65536, "at least 64 KiB")
    }
}
