import LockstepLocks

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The clock that every timestamp in this process is taken on.
///
/// By default it is the machine's `CLOCK_MONOTONIC`, the clock GStreamer's system clock reads.
/// For testing, one machine can stand for many: a simulated local clock reads exactly
/// `offset + t_mono * (1 + driftPPM / 1e6)` nanoseconds, where `t_mono` is `CLOCK_MONOTONIC`.
/// Executables set the process clock once at start-up (`--simulate-clock-offset`,
/// `--simulate-clock-drift-ppm`) before anything takes a timestamp; clock samples, the master
/// clock server and the player's GStreamer clock all read it, so the whole process runs on it.
public struct LocalClock: Sendable, Hashable, CustomStringConvertible {
    /// Why a simulated clock cannot be made.
    public enum ConfigurationError: Error, Hashable, CustomStringConvertible {
        case offsetNotNumeric(MediaTime)
        case offsetOutOfRange(MediaTime)
        case driftOutOfRange(Double)

        public var description: String {
            switch self {
            case .offsetNotNumeric(let offset):
                return "simulated clock offset must be a number of seconds, got \(offset)"
            case .offsetOutOfRange(let offset):
                return "simulated clock offset \(offset) is beyond ±\(LocalClock.maximumOffsetSeconds) s"
            case .driftOutOfRange(let ppm):
                return "simulated clock drift \(ppm) ppm is beyond ±\(LocalClock.maximumDriftPPM) ppm"
            }
        }
    }

    /// The largest simulated offset accepted: 30 days.
    public static let maximumOffsetSeconds: Int64 = 30 * 86_400
    /// The largest simulated drift accepted: 1 %, far beyond any crystal.
    public static let maximumDriftPPM: Double = 10_000

    let offsetNanoseconds: Int64
    /// The simulated drift in parts per million; 0 for the real monotonic clock.
    public let driftPPM: Double

    /// The machine's monotonic clock, unmodified.
    public static let monotonic = LocalClock(offsetNanoseconds: 0, driftPPM: 0)

    /// A simulated clock reading `offset + t_mono * (1 + driftPPM / 1e6)`.
    public init(simulatedOffset offset: MediaTime, driftPPM: Double) throws(ConfigurationError) {
        guard let nanoseconds = offset.nanoseconds else { throw .offsetNotNumeric(offset) }
        guard nanoseconds.magnitude <= UInt64(Self.maximumOffsetSeconds) * 1_000_000_000 else {
            throw .offsetOutOfRange(offset)
        }
        guard driftPPM.isFinite, driftPPM.magnitude <= Self.maximumDriftPPM else { throw .driftOutOfRange(driftPPM) }
        self.init(offsetNanoseconds: nanoseconds, driftPPM: driftPPM)
    }

    init(offsetNanoseconds: Int64, driftPPM: Double) {
        self.offsetNanoseconds = offsetNanoseconds
        self.driftPPM = driftPPM
    }

    /// The simulated offset; zero for the real monotonic clock.
    public var offset: MediaTime { MediaTime(nanoseconds: offsetNanoseconds) }

    /// Whether this clock differs from `CLOCK_MONOTONIC`.
    public var isSimulated: Bool { offsetNanoseconds != 0 || driftPPM != 0 }

    /// The current time on this clock.
    public func now() -> MediaTime { MediaTime(nanoseconds: nowNanoseconds()) }

    /// The current time on this clock in nanoseconds, for hot paths that stay inside a module.
    public func nowNanoseconds() -> Int64 {
        localNanoseconds(atMonotonic: Self.monotonicNanoseconds())
    }

    /// The reading of this clock when `CLOCK_MONOTONIC` reads `monotonic` nanoseconds.
    public func localNanoseconds(atMonotonic monotonic: Int64) -> Int64 {
        guard isSimulated else { return monotonic }
        let drift = (Double(monotonic) * driftPPM / 1e6).rounded(.toNearestOrAwayFromZero)
        return offsetNanoseconds &+ monotonic &+ Int64(drift)
    }

    /// The `CLOCK_MONOTONIC` reading at which this clock reads `local` nanoseconds.
    public func monotonicNanoseconds(atLocal local: Int64) -> Int64 {
        guard isSimulated else { return local }
        var estimate = Int64((Double(local &- offsetNanoseconds) / (1 + driftPPM / 1e6)).rounded())
        // One correction step absorbs the rounding of the division.
        estimate &+= local &- localNanoseconds(atMonotonic: estimate)
        return estimate
    }

    /// The monotonic → local map of this clock as a linear mapping (for composing with a servo's
    /// local → master mapping).
    public var rate: Double { 1 + driftPPM / 1e6 }

    /// `CLOCK_MONOTONIC` in nanoseconds.
    public static func monotonicNanoseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }

    public var description: String {
        isSimulated ? "simulated(offset: \(offset), drift: \(driftPPM) ppm)" : "monotonic"
    }

    // MARK: The process clock

    private static let processClock = Mutex(LocalClock.monotonic)

    /// The clock this process runs on; `monotonic` unless an executable simulated another.
    public static var process: LocalClock {
        processClock.withLock { $0 }
    }

    /// Sets the clock this process runs on. Call once at start-up, before any timestamp is taken.
    public static func setProcessClock(_ clock: LocalClock) {
        processClock.withLock { $0 = clock }
    }
}
