import LockstepTime
import XCTest

/// Asserts a percentile read from the analyzers' histograms: HdrHistogram with three significant
/// digits reports the upper end of a bucket no wider than 1/1024 of the value's magnitude, so the
/// result is at most that much above the exact value, never below.
func assertWithinPrecision(
    _ actual: MediaTime, _ expected: Int64, file: StaticString = #filePath, line: UInt = #line
) {
    assertWithinPrecision(actual.nanoseconds ?? .min, expected, file: file, line: line)
}

func assertWithinPrecision(_ actual: Int64, _ expected: Int64, file: StaticString = #filePath, line: UInt = #line) {
    let slack = max(1, expected.magnitude / 1_024)
    XCTAssertTrue(
        actual >= expected && actual - expected <= Int64(slack),
        "\(actual) ns is not within \(slack) ns above \(expected) ns", file: file, line: line)
}
