import LockstepTime

/// Keeps the most recent round trips for minimum, mean and 99th percentile.
struct RoundTripTracker: Sendable {
    static let capacity = 256

    private var recent: [Int64] = []
    private var next = 0
    private(set) var count = 0
    private var last: Int64 = 0

    mutating func record(_ roundTrip: Int64) {
        if recent.count < Self.capacity {
            recent.append(roundTrip)
        } else {
            recent[next] = roundTrip
        }
        next = (next + 1) % Self.capacity
        count += 1
        last = roundTrip
    }

    var statistics: RoundTripStatistics {
        guard !recent.isEmpty else { return .none }
        let sorted = recent.sorted()
        let p99Index = min(sorted.count - 1, Int((Double(sorted.count) * 0.99).rounded(.up)) - 1)
        let mean = Double(recent.reduce(0, +)) / Double(recent.count)
        return RoundTripStatistics(
            count: count, last: MediaTime(nanoseconds: last), minimum: MediaTime(nanoseconds: sorted[0]),
            mean: MediaTime(nanoseconds: Int64(mean.rounded())), p99: MediaTime(nanoseconds: sorted[max(0, p99Index)]))
    }
}
