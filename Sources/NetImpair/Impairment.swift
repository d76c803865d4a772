public import LockstepTime

/// What an impairment proxy does to each datagram, in each direction independently.
///
/// The semantics follow Linux `netem`: a datagram is lost with probability `lossPercent`; otherwise it
/// is held for `delay ± jitter` (uniform, never below zero), except that with probability
/// `reorderPercent` it is sent at once, overtaking held ones; with probability `duplicatePercent` a
/// second copy follows with its own delay.
public struct Impairment: Sendable, Hashable, CustomStringConvertible {
    public var delay: MediaTime
    public var jitter: MediaTime
    public var lossPercent: Double
    public var reorderPercent: Double
    public var duplicatePercent: Double

    public init(
        delay: MediaTime = .zero, jitter: MediaTime = .zero, lossPercent: Double = 0, reorderPercent: Double = 0,
        duplicatePercent: Double = 0
    ) {
        self.delay = delay
        self.jitter = jitter
        self.lossPercent = lossPercent
        self.reorderPercent = reorderPercent
        self.duplicatePercent = duplicatePercent
    }

    /// Checks every value, naming the first one out of range.
    public func validate() throws(ImpairmentError) {
        for (name, time) in [("delay", delay), ("jitter", jitter)] {
            guard let nanoseconds = time.nanoseconds, nanoseconds >= 0 else {
                throw .invalidTime(name: name, value: time)
            }
        }
        for (name, value) in [("loss", lossPercent), ("reorder", reorderPercent), ("duplicate", duplicatePercent)] {
            guard value.isFinite, (0...100).contains(value) else { throw .invalidPercentage(name: name, value: value) }
        }
    }

    public var description: String {
        "delay \(delay) ± \(jitter), loss \(lossPercent) %, reorder \(reorderPercent) %, duplicate \(duplicatePercent) %"
    }
}
