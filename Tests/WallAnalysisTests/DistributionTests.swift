import Foundation
import LockstepTime
import XCTest

@testable import WallAnalysis

final class DistributionTests: XCTestCase {
    func testPercentiles_whenUniformMicroseconds_areNearestRankWithinHistogramPrecision() {
        var distribution = Distribution()
        for microseconds in (1...1_000).reversed() {
            distribution.record(Int64(microseconds) * 1_000)
        }
        let statistics = distribution.statistics
        XCTAssertEqual(statistics.count, 1_000)
        XCTAssertEqual(statistics.mean, MediaTime(nanoseconds: 500_500))
        XCTAssertEqual(statistics.minimum, MediaTime(nanoseconds: 1_000))
        XCTAssertEqual(statistics.maximum, MediaTime(nanoseconds: 1_000_000))
        assertWithinPrecision(statistics.p50, 500_000)
        assertWithinPrecision(statistics.p95, 950_000)
        assertWithinPrecision(statistics.p99, 990_000)
    }

    func testPercentiles_whenAllValuesAlike_areExact() {
        var distribution = Distribution()
        for _ in 0..<250 { distribution.record(700_000) }
        let statistics = distribution.statistics
        XCTAssertEqual(statistics.p50, MediaTime(nanoseconds: 700_000))
        XCTAssertEqual(statistics.p99, MediaTime(nanoseconds: 700_000))
        XCTAssertEqual(statistics.mean, MediaTime(nanoseconds: 700_000))
    }

    func testPercentiles_whenSigned_rankNegativesBelowPositives() {
        var distribution = Distribution()
        for microseconds in -500..<500 {
            distribution.record(Int64(microseconds) * 1_000)
        }
        // Ranks 10, 500, 950 and 990 of -500 µs … 499 µs.
        assertWithinPrecision(distribution.percentile(50), -1_000)
        assertWithinPrecision(distribution.percentile(95), 449_000)
        assertWithinPrecision(distribution.percentile(99), 489_000)
        assertWithinPrecision(distribution.percentile(1), -491_000)
        XCTAssertEqual(distribution.minimum, -500_000)
        XCTAssertEqual(distribution.mean, -500)
    }

    func testPercentiles_landOnTheNearestRank_forEverySizeAndPercent() {
        // Values 5 % apart, each in a histogram bucket of its own: a rank one off would give a
        // neighbour, 5 % away, not the value within the histogram's 0.1 %.
        var generator = SystemRandomNumberGenerator()
        for size in Array(1...40) + [99, 100, 101, 1_000, 4_321] {
            var values = (0..<size).map { index -> Int64 in
                let magnitude = Int64((1_000 * pow(1.05, Double(index % 300))).rounded()) + Int64(index / 300)
                return Bool.random(using: &generator) ? magnitude : -magnitude
            }
            values.shuffle(using: &generator)
            var distribution = Distribution()
            for value in values { distribution.record(value) }
            let sorted = values.sorted()
            for percent in 1...100 {
                let expected = sorted[max(1, (percent * size + 99) / 100) - 1]
                let found = distribution.percentile(percent)
                XCTAssertLessThanOrEqual(
                    abs(found - expected), abs(expected) / 1_000 + 1, "size \(size), p\(percent): \(found) for \(expected)")
            }
        }
    }

    func testStatistics_whenEmpty_areZero() {
        XCTAssertEqual(Distribution().statistics, .empty)
        XCTAssertTrue(Distribution().statistics.isEmpty)
    }
}
