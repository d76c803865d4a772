import Histogram
import LockstepTime

/// A streaming distribution of signed nanosecond values in constant memory: exact count, sum and
/// extremes, and percentiles from two HdrHistograms (one for the magnitudes of negative values, one
/// for the rest), because HdrHistogram records only unsigned values.
struct Distribution: Sendable {
    private var nonNegative = Histogram<UInt32>(numberOfSignificantValueDigits: .three)
    private var negative = Histogram<UInt32>(numberOfSignificantValueDigits: .three)
    private(set) var count = 0
    private(set) var sum: Int128 = 0
    private(set) var minimum = Int64.max
    private(set) var maximum = Int64.min

    mutating func record(_ nanoseconds: Int64) {
        count += 1
        sum += Int128(nanoseconds)
        minimum = min(minimum, nanoseconds)
        maximum = max(maximum, nanoseconds)
        if nanoseconds < 0 {
            negative.record(nanoseconds.magnitude)
        } else {
            nonNegative.record(UInt64(nanoseconds))
        }
    }

    /// The mean, rounded to the nanosecond (half away from zero); zero when empty.
    var mean: Int64 {
        guard count > 0 else { return 0 }
        return Int64(Nanoseconds.roundedQuotient(sum, Int128(count)))
    }

    /// The nearest-rank percentile: the value of rank ⌈p × count / 100⌉ in ascending order, as the
    /// upper end of its histogram bucket, clamped to the exact extremes; zero when empty.
    func percentile(_ percent: Int) -> Int64 {
        guard count > 0 else { return 0 }
        let rank = max(1, (percent * count + 99) / 100)
        let negatives = Int(negative.totalCount)
        let value: Int64
        if rank <= negatives {
            // Ascending signed order is descending magnitude order among the negatives.
            let magnitude = Self.value(ofRank: negatives - rank + 1, in: negative)
            value = -Int64(negative.lowestEquivalentForValue(magnitude))
        } else {
            value = Int64(Self.value(ofRank: rank - negatives, in: nonNegative))
        }
        return min(max(value, minimum), maximum)
    }

    /// The highest value equivalent to the `rank`-th smallest recorded value (1-based), clamped to
    /// the histogram's extremes. HdrHistogram's percentile takes the value of rank ⌈p × total / 100⌉
    /// (p less an ulp), so a p that puts the rank half a value below `rank` lands on it whatever
    /// the rounding; its walk over the bucket counts is what a drift report with hundreds of
    /// distributions can afford, where walking the recorded values is not.
    private static func value(ofRank rank: Int, in histogram: Histogram<UInt32>) -> UInt64 {
        let total = Double(histogram.totalCount)
        return histogram.valueAtPercentile(100 * (Double(rank) - 0.5) / total)
    }

    var statistics: TimeStatistics {
        guard count > 0 else { return .empty }
        return TimeStatistics(
            count: count, mean: MediaTime(nanoseconds: mean), minimum: MediaTime(nanoseconds: minimum),
            p50: MediaTime(nanoseconds: percentile(50)), p95: MediaTime(nanoseconds: percentile(95)),
            p99: MediaTime(nanoseconds: percentile(99)), maximum: MediaTime(nanoseconds: maximum))
    }
}
