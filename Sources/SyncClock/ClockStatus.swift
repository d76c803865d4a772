public import LockstepTime

/// Where a clock client stands with its master.
public enum ClockState: String, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    /// No usable reply yet (or the master's epoch changed and no reply from the new one yet).
    case unsynced
    /// Estimating: the mapping follows every new estimate and may step.
    case locking
    /// Tracking: the mapping slews continuously, it never steps (a new `generation` is the only
    /// exception, when the master's time itself jumped).
    case locked
    /// Was locked, but the master has been silent: the mapping runs on at the last estimated rate and
    /// the error bound grows.
    case holdover

    public var description: String { rawValue }
}

/// The server a client follows, as its Lockstep replies describe it.
public struct MasterIdentity: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Random, chosen when the server process started: a new value means a new server process.
    public var identity: UInt64
    /// Names the master's time scale: a new value means the master's time is not continuous with
    /// what the client followed before.
    public var epoch: UInt64
    /// Whether the master serves `CLOCK_REALTIME`.
    public var isRealtime: Bool
    /// Whether the master runs on a simulated clock (a test setting).
    public var isSimulated: Bool

    public init(identity: UInt64, epoch: UInt64, isRealtime: Bool, isSimulated: Bool) {
        self.identity = identity
        self.epoch = epoch
        self.isRealtime = isRealtime
        self.isSimulated = isSimulated
    }

    public var description: String {
        "server \(hex(identity)) epoch \(hex(epoch))\(isRealtime ? " realtime" : "")\(isSimulated ? " simulated" : "")"
    }
}

/// Where the server a client follows stands from the master, as its Lockstep replies say: the
/// master itself (stratum 0), or a boundary clock that follows it (`ClockRelay`).
public struct ClockPath: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The answering server's distance from the master: 0 for the master.
    public var stratum: Int
    /// The answering server's own identity.
    public var relay: UInt64
    /// The relay identity of the server it follows; 0 for the master.
    public var upstream: UInt64
    /// How far the time it serves may be from the master's, as of its last reply.
    public var rootErrorBound: MediaTime

    public init(stratum: Int, relay: UInt64, upstream: UInt64, rootErrorBound: MediaTime) {
        self.stratum = stratum
        self.relay = relay
        self.upstream = upstream
        self.rootErrorBound = rootErrorBound
    }

    public var description: String {
        stratum == 0
            ? "the master" : "relay \(hex(relay)) at stratum \(stratum), within \(rootErrorBound) of the master"
    }
}

/// Statistics of recent network round trips: the time a request and its reply spent on the network,
/// the server's own turnaround excluded where the format reports it (Lockstep's does).
public struct RoundTripStatistics: Sendable, Hashable, Codable {
    /// Round trips measured in total.
    public var count: Int
    /// The most recent one.
    public var last: MediaTime
    /// Minimum, mean and 99th percentile over the most recent ones (`RoundTripTracker.capacity`).
    public var minimum: MediaTime
    public var mean: MediaTime
    public var p99: MediaTime

    public static let none = RoundTripStatistics(
        count: 0, last: .invalid, minimum: .invalid, mean: .invalid, p99: .invalid)

    public init(count: Int, last: MediaTime, minimum: MediaTime, mean: MediaTime, p99: MediaTime) {
        self.count = count
        self.last = last
        self.minimum = minimum
        self.mean = mean
        self.p99 = p99
    }
}

/// Counts of what a client sent, received, used and rejected.
public struct ClockCounters: Sendable, Hashable, Codable {
    public var requestsSent = 0
    /// Datagrams received from the server, valid or not.
    public var repliesReceived = 0
    /// Replies that became samples in the estimate.
    public var samplesUsed = 0
    /// Samples whose round trip was a spike well above the recent ones.
    public var rejectedDelaySpikes = 0
    /// Samples impossible under the current estimate and not (yet) confirmed as a master time jump:
    /// held back. Once locked, a jump needs more samples over a longer time (`ClockEstimator`).
    public var rejectedInconsistent = 0
    /// Replies with impossible times (the reply before the request, times beyond ±146 years).
    public var rejectedInvalid = 0
    /// Datagrams that are not replies of the expected format.
    public var rejectedMalformed = 0
    /// Replies to no outstanding request: duplicates, replies after their timeout, strays, forgeries
    /// that do not echo a request's sequence, nonce and send time, datagrams from another address.
    public var unmatchedReplies = 0
    /// Replies without a valid authentication code under the client's key.
    public var unauthenticatedReplies = 0
    /// Replies announcing a new master epoch while locked, held back until it persisted.
    public var suspectEpochChanges = 0
    /// Requests with no reply within the reply timeout.
    public var lostRequests = 0
    /// Times the estimate started over (a new epoch, or a confirmed jump of the master's time).
    public var estimateRestarts = 0
    /// Times the server's identity changed on the same epoch (a restarted or standby master).
    public var masterChanges = 0
    /// Times old samples were dropped because they no longer fit with new ones (the master's or the
    /// local clock's rate changed).
    public var windowTrims = 0

    public init() {}

    /// Every reply rejected for any reason.
    public var samplesRejected: Int {
        rejectedDelaySpikes + rejectedInconsistent + rejectedInvalid + rejectedMalformed + unmatchedReplies
            + unauthenticatedReplies + suspectEpochChanges
    }
}

/// A client's estimate of its master's clock, and how it got there.
///
/// `mapping` is what a player's clock follows. `errorBound` bounds its error: the true master time
/// at `localTime` lies within `mapping.masterTime(atLocal: localTime) ± errorBound` provided
/// - every timestamp is causal (a reply leaves the server after the request arrives),
/// - the clocks' relative rate wanders less than the configured allowance, and
/// - the network's shortest delays are the same in both directions, as NTP and chrony assume. A
///   path's asymmetry cannot be observed from timestamps; an asymmetry of `a` shifts the true time
///   by up to `a/2` beyond `errorBound`.
///
/// Within the delays the samples show, `errorBound` is calibrated, not proven: the shortest delay
/// the path can give is estimated from how closely the fastest exchanges approach it
/// (`ClockEstimator.symmetricSlack`); on issue 9's simulated paths it contains the true error for
/// at least 99.9 % of samples (`RealisticPathTests`). `guaranteedErrorBound` needs neither the
/// symmetry nor that estimate: it holds for any asymmetry, so it includes half the shortest round
/// trip. Both grow after `localTime` (by `errorBoundGrowthPPM` and `guaranteedErrorBoundGrowthPPM`
/// per second) until the next estimate, so in holdover they keep growing with the silence.
public struct ClockStatus: Sendable, Hashable {
    public var state: ClockState
    /// Local time → master time, as published: continuous from one status to the next once locked,
    /// within a `generation`.
    public var mapping: ClockMapping
    /// The local time this status describes (the receive time of the sample behind it, or the time
    /// of the state change).
    public var localTime: MediaTime
    /// The bound on `mapping`'s error at `localTime`; `positiveInfinity` before any estimate.
    public var errorBound: MediaTime
    /// How fast the bound grows after `localTime`, in parts per million.
    public var errorBoundGrowthPPM: Double
    /// The bound on `mapping`'s error at `localTime` that holds whatever the path's asymmetry (see
    /// above): at least half the shortest round trip; `positiveInfinity` before any estimate.
    public var guaranteedErrorBound: MediaTime
    /// How fast `guaranteedErrorBound` grows after `localTime`, in parts per million.
    public var guaranteedErrorBoundGrowthPPM: Double
    /// The estimated rate of the master relative to the local clock, in ppm (the mapping's rate also
    /// includes the servo's slew).
    public var ratePPM: Double
    /// Master time minus local time at `localTime`, per `mapping`.
    public var offset: MediaTime
    public var roundTrip: RoundTripStatistics
    public var counters: ClockCounters
    /// The master's identity and epoch; nil in GStreamer format, which carries neither.
    public var master: MasterIdentity?
    /// Where the server followed stands from the master; nil in GStreamer format.
    public var path: ClockPath?
    /// Counts the mapping's starts: 1 with the first, and one more each time it had to step (the
    /// master's time jumped, the master's epoch changed). A consumer that must never step its clock
    /// starts a new one on a new generation. (Not the wall's timeline, nor the master's epoch.)
    public var generation: Int
    public var format: WireFormat
    /// The poll interval in use.
    public var pollInterval: MediaTime

    /// The master time at `localTime` per the mapping.
    public var masterTime: MediaTime { mapping.masterTime(atLocal: localTime) }

    /// The error bound past which a clock in holdover is no longer used to play a wall on.
    public static let usableErrorBound = MediaTime(value: 5, timescale: 1000)

    /// Whether a wall can play on this clock at local time `local`, and start on it: locked, or in
    /// holdover with its error bound still within `usableErrorBound`. The one definition the node,
    /// its status on the wire, `wallctl`, the metrics and the drift report all use.
    public func isUsable(atLocal local: MediaTime) -> Bool {
        switch state {
        case .locked: return true
        case .holdover: return errorBound(atLocal: local) <= Self.usableErrorBound
        case .unsynced, .locking: return false
        }
    }

    /// The error bound at a later local time, if no new estimate changes the mapping before then.
    public func errorBound(atLocal local: MediaTime) -> MediaTime {
        Self.grown(errorBound, byPPM: errorBoundGrowthPPM, from: localTime, to: local)
    }

    /// The guaranteed error bound at a later local time, if no new estimate changes the mapping
    /// before then.
    public func guaranteedErrorBound(atLocal local: MediaTime) -> MediaTime {
        Self.grown(guaranteedErrorBound, byPPM: guaranteedErrorBoundGrowthPPM, from: localTime, to: local)
    }

    private static func grown(_ bound: MediaTime, byPPM growth: Double, from start: MediaTime, to end: MediaTime)
        -> MediaTime
    {
        guard bound.isNumeric, let base = bound.nanoseconds, let start = start.nanoseconds, let end = end.nanoseconds
        else {
            return .positiveInfinity
        }
        // In floating point: any two local times, however far apart, and any growth give a bound,
        // infinite past what nanoseconds can count (found by the fuzzer).
        let elapsed = max(0, Double(end) - Double(start))
        let grown = Double(base) + (elapsed * max(0, growth) / 1e6).rounded(.up)
        guard grown.isFinite, grown < 0x1p62 else { return .positiveInfinity }
        return MediaTime(nanoseconds: Int64(grown))
    }
}
