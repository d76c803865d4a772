internal import CLockstepNetShims

/// `CLOCK_REALTIME` read between two readings of `CLOCK_MONOTONIC`, and paired with their middle:
/// how one clock stands against the other now, off by at most `halfSpan` (half a clock read, tens
/// of ns, unless the thread was preempted between the reads).
public struct ClockPair: Sendable, Hashable {
    public var realtime: Int64
    public var monotonic: Int64
    public var halfSpan: Int64

    /// One reading.
    public static func read() -> ClockPair {
        let before = lockstep_net_monotonic_ns()
        let realtime = lockstep_net_realtime_ns()
        let after = lockstep_net_monotonic_ns()
        return ClockPair(realtime: realtime, monotonic: before + (after - before) / 2, halfSpan: (after - before + 1) / 2)
    }

    /// The tightest of `tries` readings.
    public static func read(tries: Int) -> ClockPair {
        (1..<max(1, tries)).reduce(read()) { best, _ in
            let next = read()
            return next.halfSpan < best.halfSpan ? next : best
        }
    }
}
