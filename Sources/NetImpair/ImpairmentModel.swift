import Foundation
import LockstepNet

/// Decides, datagram by datagram, what the proxy does: the seeded random part of `Impairment`, with
/// no sockets and no clock (arrival times are given), so a seed gives the same decisions every time.
struct ImpairmentModel: Sendable {
    /// What happens to one datagram.
    struct Decision: Hashable, Sendable {
        /// When each copy leaves, in ns after arrival; empty when the datagram is lost.
        var departures: [Int64]
        var reordered = false
    }

    /// One direction's state: its own random stream, correlation, stall and loss channel.
    private struct Path: Sendable {
        var random: SplitMix64
        let delay: Int64
        /// Its jitter, in ns.
        let jitter: Double
        var previousJitter = 0.0
        var stalledUntil = Int64.min
        var losing = false
    }

    /// Lomax shape of the pareto tail: heavy (no moments past the third), mean 1/(shape−1).
    static let paretoShape = 3.0

    private let impairment: Impairment
    private let correlation: Double
    private let stall: Int64
    private let stallChance: Double
    private let loss: Double
    /// Gilbert channel: chance to start losing, and to stop, per datagram.
    private let startLosing: Double
    private let stopLosing: Double
    private let reorder: Double
    private let duplicate: Double
    private var toServer: Path
    private var toClient: Path

    /// - Precondition: `impairment` is valid.
    init(impairment: Impairment, seed: UInt64) {
        self.impairment = impairment
        correlation = impairment.correlationPercent / 100
        stall = impairment.stall.nanoseconds ?? 0
        stallChance = impairment.stallPercent / 100
        loss = impairment.lossPercent / 100
        stopLosing = 1 / impairment.lossBurst
        startLosing = loss < 1 ? loss * stopLosing / (1 - loss) : 1
        reorder = impairment.reorderPercent / 100
        duplicate = impairment.duplicatePercent / 100
        let delay = impairment.delay.nanoseconds ?? 0
        let jitter = Double(impairment.jitter.nanoseconds ?? 0)
        toServer = Path(random: SplitMix64(seed: seed), delay: delay, jitter: jitter)
        toClient = Path(
            random: SplitMix64(seed: seed ^ 0x5DEE_CE66_D1CE_4E5B),
            delay: impairment.replyDelay.flatMap(\.nanoseconds) ?? delay,
            jitter: impairment.replyJitter.flatMap(\.nanoseconds).map(Double.init) ?? jitter)
    }

    /// The decision for a datagram arriving at `arrival` (ns, any monotonic origin) toward the
    /// server (`toServer`) or back to a client.
    mutating func decide(toServer: Bool = true, at arrival: Int64 = 0) -> Decision {
        if toServer { return decide(&self.toServer, at: arrival) }
        return decide(&self.toClient, at: arrival)
    }

    private func decide(_ path: inout Path, at arrival: Int64) -> Decision {
        if stallChance > 0, stall > 0, path.stalledUntil < arrival, chance(stallChance, &path) {
            path.stalledUntil = arrival + stall
        }
        if isLost(&path) { return Decision(departures: []) }
        if chance(reorder, &path) { return Decision(departures: [0], reordered: true) }
        var departures = [heldFor(&path, at: arrival)]
        if chance(duplicate, &path) { departures.append(heldFor(&path, at: arrival)) }
        return Decision(departures: departures)
    }

    private func isLost(_ path: inout Path) -> Bool {
        guard loss > 0 else { return false }
        guard impairment.lossBurst > 1 else { return chance(loss, &path) }
        path.losing = path.losing ? !chance(stopLosing, &path) : chance(startLosing, &path)
        return path.losing
    }

    private func heldFor(_ path: inout Path, at arrival: Int64) -> Int64 {
        var hold = path.delay
        if path.jitter > 0 {
            let fresh = jitterTerm(&path.random)
            let term = correlation > 0 ? correlation * path.previousJitter + (1 - correlation) * fresh : fresh
            path.previousJitter = term
            hold = max(0, hold + Int64((term * path.jitter).rounded()))
        }
        // Behind a stall, a datagram leaves when the path clears, at the earliest.
        if path.stalledUntil > arrival { hold = max(hold, path.stalledUntil - arrival) }
        return hold
    }

    /// A jitter term in units of `jitter`.
    private func jitterTerm(_ random: inout SplitMix64) -> Double {
        switch impairment.distribution {
        case .uniform: return Double.random(in: -1...1, using: &random)
        case .normal: return Self.normal(&random)
        case .pareto: return Self.pareto(&random)
        case .paretonormal: return 0.25 * Self.normal(&random) + 0.75 * Self.pareto(&random)
        }
    }

    /// A standard normal value (Box–Muller).
    static func normal(_ random: inout SplitMix64) -> Double {
        let u = Double.random(in: Double.leastNonzeroMagnitude..<1, using: &random)
        let v = Double.random(in: 0..<1, using: &random)
        return (-2 * log(u)).squareRoot() * cos(2 * Double.pi * v)
    }

    /// A Lomax (Pareto II) value of shape `paretoShape` scaled to mean 1: never negative, heavy tail.
    static func pareto(_ random: inout SplitMix64) -> Double {
        let u = Double.random(in: 0..<1, using: &random)
        return (paretoShape - 1) * (pow(1 - u, -1 / paretoShape) - 1)
    }

    private func chance(_ probability: Double, _ path: inout Path) -> Bool {
        probability > 0 && Double.random(in: 0..<1, using: &path.random) < probability
    }
}
