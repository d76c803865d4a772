import XCTest

@testable import LockstepTime

final class MediaTimeRangeTests: XCTestCase {
    private func seconds(_ s: Int64) -> MediaTime { MediaTime(value: s, timescale: 1) }

    func testContains_includesStartExcludesEnd() {
        let range = MediaTimeRange(start: seconds(1), duration: seconds(2))
        XCTAssertTrue(range.contains(seconds(1)))
        XCTAssertTrue(range.contains(MediaTime(value: 29, timescale: 10)))
        XCTAssertFalse(range.contains(seconds(3)))
        XCTAssertEqual(range.end, seconds(3))
    }

    func testIntersectionAndUnion() {
        let a = MediaTimeRange(start: seconds(0), end: seconds(5))
        let b = MediaTimeRange(start: seconds(3), end: seconds(8))
        XCTAssertEqual(a.intersection(b), MediaTimeRange(start: seconds(3), end: seconds(5)))
        XCTAssertEqual(a.union(b), MediaTimeRange(start: seconds(0), end: seconds(8)))
        let apart = MediaTimeRange(start: seconds(10), end: seconds(11))
        XCTAssertTrue(a.intersection(apart).isEmpty)
    }

    func testValidity_whenDurationNegative_isInvalid() {
        XCTAssertFalse(MediaTimeRange(start: seconds(5), end: seconds(1)).isValid)
        XCTAssertFalse(MediaTimeRange.invalid.isValid)
    }

    func testClamp() {
        let range = MediaTimeRange(start: seconds(1), end: seconds(3))
        XCTAssertEqual(range.clamp(seconds(0)), seconds(1))
        XCTAssertEqual(range.clamp(seconds(9)), seconds(3))
        XCTAssertEqual(range.clamp(seconds(2)), seconds(2))
    }
}
