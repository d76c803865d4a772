import LockstepNet
import LockstepTime

/// Keeps the most recent round trips for minimum, mean and 99th percentile.
struct RoundTripTracker: Sendable {
    static let capacity = 256

    private var recent = RecentValues<Int64>(capacity: capacity)
    private(set) var count = 0
    private var last: Int64 = 0

    mutating func record(_ roundTrip: Int64) {
        recent.append(roundTrip)
        count += 1
        last = roundTrip
    }

    var statistics: RoundTripStatistics {
        guard let quantiles = recent.quantiles(0, 0.99) else { return .none }
        let mean = recent.values.reduce(0.0) { $0 + Double($1) } / Double(recent.count)
        return RoundTripStatistics(
            count: count, last: MediaTime(nanoseconds: last), minimum: MediaTime(nanoseconds: quantiles[0]),
            mean: MediaTime(nanoseconds: Int64(mean.rounded())), p99: MediaTime(nanoseconds: quantiles[1]))
    }
}
