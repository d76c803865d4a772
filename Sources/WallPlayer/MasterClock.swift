internal import CGStreamer
internal import CLockstepShims
import LockstepLocks
import LockstepTime

/// The clock a player's pipeline runs on and host times are given on (`AVPlayer.masterClock`).
///
/// Every master clock is a GStreamer system clock on CLOCK_MONOTONIC whose calibration maps the
/// machine's monotonic time to master time through two linear maps: the process `LocalClock`
/// (monotonic, or its simulation) and a `ClockMapping` from local time to master time. `host`
/// follows the identity mapping: it reads the process's local clock. A networked clock calls
/// `follow(_:)` each time its servo publishes a new estimate; the servo keeps successive mappings
/// continuous, so the pipeline clock slews and never jumps.
public final class MasterClock: @unchecked Sendable {
    /// The process's local clock: CLOCK_MONOTONIC, or its simulation.
    public static let host = MasterClock(name: "host")

    /// Gains are expressed against this denominator in the GStreamer calibration.
    private static let rateDenominator: Double = 1e12

    public let name: String
    let clock: Clock
    private let current: Mutex<ClockMapping>

    /// A clock reading `mapping.masterTime(atLocal: LocalClock.process.now())`.
    public init(name: String, following mapping: ClockMapping = .identity) {
        GStreamer.ensureInitialized()
        self.name = name
        clock = Clock(owning: lockstep_monotonic_clock_new(name))
        current = Mutex(mapping)
        apply(mapping)
    }

    /// The local → master mapping the clock follows now.
    public var mapping: ClockMapping { current.withLock { $0 } }

    /// Follows a new local → master mapping from now on (`gst_clock_set_calibration`).
    public func follow(_ mapping: ClockMapping) {
        current.withLock { $0 = mapping }
        apply(mapping)
    }

    /// The current master time.
    public func now() -> MediaTime {
        MediaTime(clockTime: gst_clock_get_time(clock.pointer))
    }

    /// The current master time, with the CLOCK_MONOTONIC time it belongs to: an observer that knows
    /// the master's true time at each monotonic time (bench/wall, whose master runs on a simulated
    /// clock) measures this clock's true error from it.
    public func reading() -> (monotonicNanoseconds: Int64, master: MediaTime) {
        let monotonic = Int64(gst_clock_get_internal_time(clock.pointer))
        let local = LocalClock.process.localNanoseconds(atMonotonic: monotonic)
        return (monotonic, MediaTime(nanoseconds: mapping.masterNanoseconds(atLocalNanoseconds: local)))
    }

    private func apply(_ mapping: ClockMapping) {
        let local = LocalClock.process
        let monotonic = gst_clock_get_internal_time(clock.pointer)
        let localNow = local.localNanoseconds(atMonotonic: Int64(monotonic))
        let masterNow = mapping.masterNanoseconds(atLocalNanoseconds: localNow)
        let rate = local.rate * mapping.rate
        gst_clock_set_calibration(
            clock.pointer, monotonic, GstClockTime(max(0, masterNow)),
            GstClockTime((rate * Self.rateDenominator).rounded()), GstClockTime(Self.rateDenominator))
    }
}
