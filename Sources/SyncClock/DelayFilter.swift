import LockstepNet

/// Rejects samples whose network delay is a spike far above the recent ones.
///
/// A delayed packet spent its extra time in one direction or the other, not both, so its offset is
/// off by up to half the extra delay. The estimator already gives such samples little weight (their
/// constraints are loose), but dropping spikes keeps its window full of useful samples. Every delay,
/// rejected or not, is remembered, so a lasting change of the network (a new route) stops counting as
/// a spike once it makes up half the recent delays.
struct DelayFilter: Sendable {
    /// How many recent delays are compared.
    static let windowSize = 16
    /// Fewer delays than this say nothing about spikes yet: everything is accepted.
    static let minimumHistory = 5
    /// A spread below this is noise, not a baseline for spikes (kernel-stamped loopback varies by
    /// a few µs).
    static let minimumSpread: Int64 = 25_000

    private var recent = RecentValues<Int64>(capacity: windowSize)

    /// Whether `delay` is a spike compared with the recent delays: more than the median plus twice
    /// the distance from the minimum to the median (or the minimum spread). Records it either way.
    mutating func isSpike(_ delay: Int64) -> Bool {
        defer { record(delay) }
        guard recent.count >= Self.minimumHistory else { return false }
        let sorted = recent.values.sorted()
        let median = sorted[sorted.count / 2]
        let spread = max(median - sorted[0], Self.minimumSpread)
        // Saturating: a reply that took a lifetime (a suspended machine) must not overflow it.
        let (twice, overflow) = spread.multipliedReportingOverflow(by: 2)
        let (limit, beyond) = median.addingReportingOverflow(twice)
        return !overflow && !beyond && delay > limit
    }

    /// The median of the recent delays less their minimum: how much the network's queueing varies.
    var spread: Int64 {
        guard !recent.isEmpty else { return 0 }
        let sorted = recent.values.sorted()
        return sorted[sorted.count / 2] - sorted[0]
    }

    private mutating func record(_ delay: Int64) {
        recent.append(delay)
    }

    mutating func reset() {
        recent.removeAll()
    }
}
