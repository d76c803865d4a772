public import LockstepTime

/// What linuxptp's pmc says of a ptp4l, from `GET CURRENT_DATA_SET`, `GET PORT_DATA_SET` and
/// `GET TIME_STATUS_NP`: the figures a node's clock bound rests on when it follows its system clock
/// as ptp4l (and phc2sys) discipline it.
public struct LinuxPTPState: Sendable, Hashable {
    /// The port states (one per port ptp4l runs): SLAVE, UNCALIBRATED, LISTENING, MASTER, FAULTY…
    public var portStates: [String] = []
    /// The local clock less the grandmaster's, at the last sync, ns (ptp4l's `offsetFromMaster`).
    public var offsetFromMaster: Double?
    /// The mean of the two one-way delays to the master, ns: an asymmetry can put the offset off by
    /// up to this much.
    public var meanPathDelay: Double?
    public var stepsRemoved: Int?
    public var gmPresent: Bool?
    public var gmIdentity: String?
    /// When the last sync arrived, on the disciplined clock (`CLOCK_REALTIME` with software
    /// timestamps, or after phc2sys), ns.
    public var ingressTime: Int64?

    public init() {}

    /// Reads pmc's text output (`pmc -u -b 0 'GET …'`). Lines it does not know are passed over, so
    /// other linuxptp versions' extra fields do no harm; missing ones stay nil.
    public static func parse(pmcOutput: String) -> LinuxPTPState {
        var state = LinuxPTPState()
        for line in pmcOutput.split(whereSeparator: \.isNewline) {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2 else { continue }
            let value = String(fields[1])
            switch fields[0] {
            case "portState": state.portStates.append(value)
            case "offsetFromMaster": state.offsetFromMaster = Double(value).flatMap { $0.isFinite ? $0 : nil }
            case "meanPathDelay": state.meanPathDelay = Double(value).flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
            case "stepsRemoved": state.stepsRemoved = Int(value)
            case "gmPresent": state.gmPresent = value == "true" ? true : value == "false" ? false : nil
            case "gmIdentity": state.gmIdentity = value
            case "ingress_time": state.ingressTime = Int64(value)
            default: continue
            }
        }
        return state
    }

    /// Whether a port follows a master: SLAVE, or UNCALIBRATED (its servo not locked yet, or ptp4l
    /// measuring without adjusting, `free_running 1`; the offsets say how far off it is).
    var follows: Bool { portStates.contains { $0 == "SLAVE" || $0 == "UNCALIBRATED" } }
    var isSlave: Bool { portStates.contains("SLAVE") }
}

/// Turns pmc readings into the status of a clock source that serves `CLOCK_REALTIME` (the master
/// time of a `--realtime` master, so PTP and the UDP master stand in for each other): the mapping
/// is the system's real-time clock, and its bounds are what ptp4l measured.
///
/// - `errorBound`: the largest |offsetFromMaster| of the last `readings` syncs, plus how far the
///   clocks could have drifted apart since the last (`growthPPM` while SLAVE, `convergingGrowthPPM`
///   while UNCALIBRATED, when a servo may still be steering), plus the uncertainty of reading the
///   real-time and monotonic clocks together. It assumes, as PTP does, the path symmetric.
/// - `guaranteedErrorBound`: that plus `meanPathDelay`, which an asymmetry cannot exceed (each
///   one-way delay is at least zero).
///
/// The source is locked once `readings` consecutive readings show a port following a present
/// grandmaster with a fresh sync; a step of the real-time clock (ptp4l stepping it) starts a new
/// generation, which the node's player takes at its next anchor.
public struct LinuxPTPTracker: Sendable {
    public struct Configuration: Sendable, Hashable {
        /// Readings in a row before the source is locked, and over which the bound takes the
        /// largest offset.
        public var readings = 4
        /// A sync older than this is stale: ptp4l lost its master, or stopped.
        public var staleAfter = MediaTime(value: 3, timescale: 1)
        public var growthPPM = 10.0
        public var convergingGrowthPPM = 100.0
        /// A change of the real-time clock against the monotonic one beyond this is a step.
        public var stepThreshold = MediaTime(value: 100, timescale: 1_000_000)
        public var pollInterval = MediaTime(value: 500, timescale: 1000)

        public init() {}
    }

    public let configuration: Configuration
    private var offsets: [Double] = []
    private var realtimeLessLocal: Int64?
    private var generation = 1
    private var locked: ClockStatus?
    public private(set) var status: ClockStatus
    /// Why the source cannot be followed, for logs and reports; nil while it is locked or locking.
    public private(set) var problem: String? = "no reading of ptp4l yet"

    public init(configuration: Configuration = Configuration(), local: Int64 = 0) {
        self.configuration = configuration
        status = ClockStatus(
            state: .unsynced, mapping: .identity, localTime: MediaTime(nanoseconds: local),
            errorBound: .positiveInfinity, errorBoundGrowthPPM: 0, guaranteedErrorBound: .positiveInfinity,
            guaranteedErrorBoundGrowthPPM: 0, ratePPM: 0, offset: .zero,
            roundTrip: RoundTripStatistics(count: 0, last: .zero, minimum: .zero, mean: .zero, p99: .zero),
            counters: ClockCounters(), master: nil, path: nil, generation: 1, format: .lockstep,
            pollInterval: configuration.pollInterval)
    }

    /// Takes one reading: ptp4l's state (nil when pmc did not answer, with `failure` saying why),
    /// and the real-time clock less the local one at local time `local`, read within `readError`.
    @discardableResult
    public mutating func take(
        _ state: LinuxPTPState?, failure: String? = nil, realtimeLessLocal difference: Int64, readError: Int64,
        local: Int64
    ) -> ClockStatus {
        if let previous = realtimeLessLocal, abs(difference - previous) > configuration.stepThreshold.nanoseconds ?? 0 {
            // The real-time clock stepped: what was measured before no longer says where it is.
            generation += 1
            offsets = []
            locked = nil
        }
        realtimeLessLocal = difference
        let realtime = local &+ difference
        let mapping = ClockMapping(
            localTime: MediaTime(nanoseconds: local), masterTime: MediaTime(nanoseconds: realtime), rate: 1)
        status.mapping = mapping
        status.localTime = MediaTime(nanoseconds: local)
        status.offset = MediaTime(nanoseconds: difference)
        status.generation = generation
        status.counters.requestsSent += 1
        let why = Self.problem(state, failure: failure, realtime: realtime, staleAfter: configuration.staleAfter)
        guard why == nil, let state, let offset = state.offsetFromMaster, let delay = state.meanPathDelay,
            let ingress = state.ingressTime
        else {
            offsets = []
            problem = why
            if let locked {
                // Holdover: the real-time clock runs on undisciplined; the bound grows from the last lock.
                let since = Double(local - (locked.localTime.nanoseconds ?? local))
                let growth = locked.errorBoundGrowthPPM * since / 1e6
                status.state = .holdover
                status.errorBound = locked.errorBound + MediaTime(nanoseconds: Int64(growth.rounded(.up)))
                status.guaranteedErrorBound =
                    locked.guaranteedErrorBound + MediaTime(nanoseconds: Int64(growth.rounded(.up)))
            } else {
                status.state = state == nil && failure != nil && status.state == .unsynced ? .unsynced : .locking
                status.errorBound = .positiveInfinity
                status.guaranteedErrorBound = .positiveInfinity
            }
            return status
        }
        status.counters.repliesReceived += 1
        status.counters.samplesUsed += 1
        offsets.append(offset)
        if offsets.count > configuration.readings { offsets.removeFirst(offsets.count - configuration.readings) }
        let growthPPM = state.isSlave ? configuration.growthPPM : configuration.convergingGrowthPPM
        let age = Double(max(0, realtime - ingress))
        let largest = offsets.map(\.magnitude).max() ?? 0
        let bound = (largest + age * growthPPM / 1e6 + Double(readError)).rounded(.up)
        status.errorBound = MediaTime(nanoseconds: Int64(bound))
        status.guaranteedErrorBound = MediaTime(nanoseconds: Int64((bound + delay).rounded(.up)))
        status.errorBoundGrowthPPM = growthPPM
        status.guaranteedErrorBoundGrowthPPM = growthPPM
        let roundTrip = MediaTime(nanoseconds: Int64((2 * delay).rounded()))
        status.roundTrip = RoundTripStatistics(
            count: status.counters.samplesUsed, last: roundTrip, minimum: roundTrip, mean: roundTrip, p99: roundTrip)
        status.master = MasterIdentity(
            identity: MasterClock.hash("PTP grandmaster \(state.gmIdentity ?? "unknown")"),
            epoch: MasterIdentity.realtimeEpoch, isRealtime: true, isSimulated: false)
        status.path = ClockPath(stratum: 0, relay: 0, upstream: 0, rootErrorBound: .zero)
        if offsets.count >= configuration.readings {
            status.state = .locked
            problem = nil
            locked = status
        } else {
            status.state = .locking
            problem = nil
        }
        return status
    }

    /// Why `state` cannot be followed at real time `realtime`; nil when it can.
    static func problem(_ state: LinuxPTPState?, failure: String?, realtime: Int64, staleAfter: MediaTime) -> String? {
        guard let state else { return failure ?? "pmc gave no answer" }
        guard state.follows else {
            return state.portStates.isEmpty
                ? "ptp4l reported no port state" : "no port follows a master (\(state.portStates.joined(separator: ", ")))"
        }
        guard state.gmPresent == true else { return "ptp4l sees no grandmaster" }
        guard state.offsetFromMaster != nil, state.meanPathDelay != nil else {
            return "ptp4l reported no offset or path delay"
        }
        guard let ingress = state.ingressTime, let stale = staleAfter.nanoseconds,
            abs(realtime - ingress) <= stale
        else {
            return "ptp4l's last sync is older than \(staleAfter.seconds) s"
        }
        return nil
    }
}
