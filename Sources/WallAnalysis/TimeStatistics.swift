import LockstepTime

/// The summary of a distribution of times: how many, their mean, extremes and percentiles.
///
/// Count, mean, minimum and maximum are exact (to the nanosecond). Percentiles use the nearest-rank
/// method (the smallest value at least p % of the values are at or below) read from an HdrHistogram
/// with three significant digits, and are clamped to the exact extremes: a reported percentile is
/// at most 0.1 % above the true one, and exact when the values are all alike.
public struct TimeStatistics: Sendable, Hashable, Codable {
    public var count: Int
    @NanosecondsCoded public var mean: MediaTime
    @NanosecondsCoded public var minimum: MediaTime
    @NanosecondsCoded public var p50: MediaTime
    @NanosecondsCoded public var p95: MediaTime
    @NanosecondsCoded public var p99: MediaTime
    @NanosecondsCoded public var maximum: MediaTime

    enum CodingKeys: String, CodingKey {
        case count
        case mean = "meanNs", minimum = "minimumNs", p50 = "p50Ns", p95 = "p95Ns", p99 = "p99Ns", maximum = "maximumNs"
    }

    public init(
        count: Int, mean: MediaTime, minimum: MediaTime, p50: MediaTime, p95: MediaTime, p99: MediaTime,
        maximum: MediaTime
    ) {
        self.count = count
        self.mean = mean
        self.minimum = minimum
        self.p50 = p50
        self.p95 = p95
        self.p99 = p99
        self.maximum = maximum
    }

    /// No values: every time zero, so a report of a run without data still encodes and renders.
    public static let empty = TimeStatistics(
        count: 0, mean: .zero, minimum: .zero, p50: .zero, p95: .zero, p99: .zero, maximum: .zero)

    public var isEmpty: Bool { count == 0 }
}
