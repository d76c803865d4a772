public import LockstepTime

/// What an impairment proxy does to each datagram, each direction with its own state.
///
/// The semantics follow Linux `netem`, with what real congested paths add:
/// - **Delay**: every datagram is held for a base `delay` (client to server; `replyDelay`, when
///   given, server to client) plus a jitter term drawn from `distribution` (`jitter`; `replyJitter`,
///   when given, for replies), never below zero. A reply delay or jitter of its own makes the path
///   asymmetric, fixed or only under load: what two-way time transfer cannot see.
///   `correlationPercent` carries each direction's previous jitter term into the next one, as
///   netem's correlation does (`next = ρ·previous + (1 − ρ)·fresh`).
/// - **Stalls**: with probability `stallPercent` per datagram the path stops for `stall`; every
///   datagram arriving meanwhile waits for it to clear, as behind a Wi-Fi retransmission or a
///   congested switch port: a correlated burst of long holds.
/// - **Loss**: `lossPercent` of datagrams are lost, independently, or in bursts of `lossBurst`
///   datagrams on average (a two-state Gilbert channel with that loss rate).
/// - **Reordering**: with probability `reorderPercent` a datagram is sent at once, overtaking held
///   ones; **duplication**: with probability `duplicatePercent` a second copy follows with its own
///   hold.
public struct Impairment: Sendable, Hashable, CustomStringConvertible {
    /// The shape of the jitter term.
    public enum Distribution: String, Sendable, Hashable, CaseIterable {
        /// Uniform in ±jitter.
        case uniform
        /// Normal with standard deviation jitter.
        case normal
        /// A heavy right tail above the base delay (Lomax, shape 3) whose mean is jitter: most
        /// datagrams close to the base delay, a few many times the jitter past it.
        case pareto
        /// netem's mix: a quarter normal, three quarters pareto.
        case paretonormal
    }

    public var delay: MediaTime
    /// The base delay from the server back to clients; nil: the same as `delay`.
    public var replyDelay: MediaTime?
    public var jitter: MediaTime
    /// The jitter of replies, server to client; nil: the same as `jitter`.
    public var replyJitter: MediaTime?
    public var distribution: Distribution
    public var correlationPercent: Double
    public var stallPercent: Double
    public var stall: MediaTime
    public var lossPercent: Double
    /// The mean length of a run of lost datagrams; 1 loses them independently.
    public var lossBurst: Double
    public var reorderPercent: Double
    public var duplicatePercent: Double

    public init(
        delay: MediaTime = .zero, replyDelay: MediaTime? = nil, jitter: MediaTime = .zero,
        replyJitter: MediaTime? = nil, distribution: Distribution = .uniform, correlationPercent: Double = 0, stallPercent: Double = 0,
        stall: MediaTime = .zero, lossPercent: Double = 0, lossBurst: Double = 1, reorderPercent: Double = 0,
        duplicatePercent: Double = 0
    ) {
        self.delay = delay
        self.replyDelay = replyDelay
        self.jitter = jitter
        self.replyJitter = replyJitter
        self.distribution = distribution
        self.correlationPercent = correlationPercent
        self.stallPercent = stallPercent
        self.stall = stall
        self.lossPercent = lossPercent
        self.lossBurst = lossBurst
        self.reorderPercent = reorderPercent
        self.duplicatePercent = duplicatePercent
    }

    /// Checks every value, naming the first one out of range.
    public func validate() throws(ImpairmentError) {
        var times = [("delay", delay), ("jitter", jitter), ("stall", stall)]
        if let replyDelay { times.append(("reply delay", replyDelay)) }
        if let replyJitter { times.append(("reply jitter", replyJitter)) }
        for (name, time) in times {
            guard let nanoseconds = time.nanoseconds, nanoseconds >= 0 else {
                throw .invalidTime(name: name, value: time)
            }
        }
        let percentages = [
            ("loss", lossPercent), ("reorder", reorderPercent), ("duplicate", duplicatePercent),
            ("correlation", correlationPercent), ("stall chance", stallPercent),
        ]
        for (name, value) in percentages {
            guard value.isFinite, (0...100).contains(value) else { throw .invalidPercentage(name: name, value: value) }
        }
        guard lossBurst.isFinite, lossBurst >= 1 else { throw .invalidBurst(value: lossBurst) }
        if lossBurst > 1, lossPercent >= 100 {
            throw .invalidPercentage(name: "loss (in bursts: under 100)", value: lossPercent)
        }
    }

    public var description: String {
        var parts = ["delay \(delay)"]
        if let replyDelay, replyDelay != delay { parts[0] += " (replies \(replyDelay))" }
        if jitter > .zero || (replyJitter ?? .zero) > .zero {
            parts[0] += " ± \(jitter) \(distribution.rawValue)"
            if let replyJitter, replyJitter != jitter { parts[0] += " (replies ± \(replyJitter))" }
            if correlationPercent > 0 { parts[0] += ", \(correlationPercent) % correlated" }
        }
        if stallPercent > 0, stall > .zero { parts.append("stalls of \(stall) at \(stallPercent) %") }
        parts.append("loss \(lossPercent) %" + (lossBurst > 1 && lossPercent > 0 ? " in bursts of \(lossBurst)" : ""))
        parts.append("reorder \(reorderPercent) %")
        parts.append("duplicate \(duplicatePercent) %")
        return parts.joined(separator: ", ")
    }
}
