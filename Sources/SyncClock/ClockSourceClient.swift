public import LockstepTime

/// A clock source that is not a Lockstep clock server: `ClockSources` reads its `status` on each
/// tick (every 50 ms) and selects among it and the servers alike. Its status is an estimate of the
/// master's time on `LocalClock.process` with its bounds, as a server's client gives one; its
/// `master` must name the epoch of the timeline it serves (a real-time source names
/// `MasterIdentity.realtimeEpoch`, as a `--realtime` master does, so the two stand in for each
/// other).
public protocol ClockSourceClient: Sendable {
    /// How logs and reports name it.
    var name: String { get }
    /// The latest status; a new one has a new `localTime`.
    var status: ClockStatus { get }
    /// Keeps the status current until the calling task is cancelled.
    func run() async throws
}

extension MasterIdentity {
    /// The epoch of every master that serves `CLOCK_REALTIME` unshifted: machines whose real-time
    /// clocks NTP or PTP discipline serve one timeline.
    public static var realtimeEpoch: UInt64 { MasterClock.hash("CLOCK_REALTIME") }
}
