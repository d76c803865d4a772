import LockstepNet
import XCTest

final class RecentValuesTests: XCTestCase {
    func testAppend_pastCapacity_replacesTheOldest() {
        var recent = RecentValues<Int>(capacity: 3)
        for value in 1...5 { recent.append(value) }
        XCTAssertEqual(recent.count, 3)
        XCTAssertEqual(recent.values.sorted(), [3, 4, 5])
        recent.removeAll()
        XCTAssertTrue(recent.isEmpty)
    }

    func testQuantiles_areNearestRank() throws {
        var recent = RecentValues<Int>(capacity: 200)
        for value in (1...100).reversed() { recent.append(value) }
        // Rank ⌈f × n⌉: 0 → the minimum, 0.5 → the 50th value, 0.99 → the 99th, 1 → the maximum.
        XCTAssertEqual(recent.quantiles(0, 0.5, 0.99, 1), [1, 50, 99, 100])
        XCTAssertEqual(recent.quantiles(0.991), [100])
    }

    func testQuantiles_whenEmpty_areNil() {
        XCTAssertNil(RecentValues<Int>(capacity: 4).quantiles(0.5))
    }
}
