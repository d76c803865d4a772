import LockstepNet

/// Decides, datagram by datagram, what the proxy does: the seeded random part of `Impairment`, with
/// no sockets and no clock, so a seed gives the same decisions every time.
struct ImpairmentModel: Sendable {
    /// What happens to one datagram.
    struct Decision: Hashable, Sendable {
        /// When each copy leaves, in ns after arrival; empty when the datagram is lost.
        var departures: [Int64]
        var reordered = false
    }

    private let delay: Int64
    private let jitter: Int64
    private let loss: Double
    private let reorder: Double
    private let duplicate: Double
    private var random: SplitMix64

    /// - Precondition: `impairment` is valid.
    init(impairment: Impairment, seed: UInt64) {
        delay = impairment.delay.nanoseconds ?? 0
        jitter = impairment.jitter.nanoseconds ?? 0
        loss = impairment.lossPercent / 100
        reorder = impairment.reorderPercent / 100
        duplicate = impairment.duplicatePercent / 100
        random = SplitMix64(seed: seed)
    }

    mutating func decide() -> Decision {
        if chance(loss) { return Decision(departures: []) }
        if chance(reorder) { return Decision(departures: [0], reordered: true) }
        var departures = [heldFor()]
        if chance(duplicate) { departures.append(heldFor()) }
        return Decision(departures: departures)
    }

    private mutating func heldFor() -> Int64 {
        guard jitter > 0 else { return delay }
        return max(0, delay + Int64.random(in: -jitter...jitter, using: &random))
    }

    private mutating func chance(_ probability: Double) -> Bool {
        probability > 0 && Double.random(in: 0..<1, using: &random) < probability
    }
}
