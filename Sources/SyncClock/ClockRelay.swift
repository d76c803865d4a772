import LockstepLocks
public import LockstepTime

/// The timeline a boundary clock serves: a `SyncClockServer` created with a relay answers with the
/// time this box holds, the master's identity and epoch, and its distance from the master, so its
/// clients (Lockstep's and stock `GstNetClientClock`s) follow the master's timeline through it.
///
/// Whoever follows the master (`ClockSources`) writes each new estimate here; the server reads it
/// at each request. While it holds nothing (not yet locked, or lost), the server stays silent, so
/// no client takes a time the relay does not know.
public final class ClockRelay: Sendable {
    /// What is served.
    public struct Timeline: Sendable, Hashable {
        /// Local time → the master's time, as this process follows it.
        public var mapping: ClockMapping
        /// The master whose timeline it is.
        public var master: MasterIdentity
        /// This server's distance from the master: its source's stratum plus one.
        public var stratum: Int
        /// The relay identity of the server followed.
        public var upstream: UInt64
        /// The bound on `mapping`'s error from the master's own time at `boundTime` (local), and
        /// how fast it grows after, ppm.
        public var errorBound: MediaTime
        public var boundTime: MediaTime
        public var errorBoundGrowthPPM: Double

        public init(
            mapping: ClockMapping, master: MasterIdentity, stratum: Int, upstream: UInt64, errorBound: MediaTime,
            boundTime: MediaTime, errorBoundGrowthPPM: Double
        ) {
            self.mapping = mapping
            self.master = master
            self.stratum = stratum
            self.upstream = upstream
            self.errorBound = errorBound
            self.boundTime = boundTime
            self.errorBoundGrowthPPM = errorBoundGrowthPPM
        }

        /// The bound at local time `local`, ns, saturating at `UInt32.max` (4.29 s).
        func rootErrorBound(atLocal local: Int64) -> UInt32 {
            guard let bound = errorBound.nanoseconds, let since = boundTime.nanoseconds else { return .max }
            let grown = Double(bound) + Double(max(0, local - since)) * errorBoundGrowthPPM / 1e6
            return grown >= Double(UInt32.max) ? .max : UInt32(max(0, grown.rounded(.up)))
        }

        /// What a reply at local time `local` says.
        func served(atLocal local: Int64) -> ServedTimeline {
            var flags: LockstepTimePacket.Flags = []
            if master.isRealtime { flags.insert(.realtimeTimescale) }
            if master.isSimulated { flags.insert(.simulatedClock) }
            return ServedTimeline(
                master: master.identity, epoch: master.epoch, flags: flags,
                rootErrorBound: rootErrorBound(atLocal: local),
                stratum: UInt8(clamping: stratum), upstream: upstream)
        }
    }

    private let current = Mutex<Timeline?>(nil)

    public init() {}

    /// The timeline served now; nil while there is none.
    public var timeline: Timeline? { current.withLock { $0 } }

    /// Serves `timeline` from now on; nil stops answering.
    public func serve(_ timeline: Timeline?) {
        current.withLock { $0 = timeline }
    }
}
