import LockstepTime

/// The whole client protocol of one source without sockets or a clock: it writes requests, reads
/// replies, filters samples, estimates, judges whether the estimate can be followed (`SourceLock`)
/// and schedules polls, all at times it is given. It adjusts no clock: its status carries the
/// estimated line itself, and the one `ClockServo` after the selection (`ClockSourceSelector`)
/// turns the followed source's line into the published mapping.
///
/// `SyncClockClient` drives it from a socket thread; tests drive it from a simulated network, so
/// every behaviour is checked deterministically and without sleeping.
struct ClockClientEngine: Sendable {
    struct Configuration: Sendable, Hashable {
        var format: WireFormat = .lockstep
        /// The poll interval while locking and after a restart (a burst), ns.
        var minimumPollInterval: Int64 = 16_000_000
        /// The poll interval once the estimate is stable, ns.
        var maximumPollInterval: Int64 = 500_000_000
        /// The poll interval once stable on a network whose delays vary by more than
        /// `jitterThreshold`: there the error falls with the number of samples, so polling stays
        /// faster, ns.
        var maximumPollIntervalUnderJitter: Int64 = 100_000_000
        /// A median delay this far above the minimum counts as jitter, ns.
        var jitterThreshold: Int64 = 50_000
        /// Accepted samples at each poll interval before it doubles, once locked.
        var samplesPerPollStep = 8
        /// A request with no reply after this long is lost, ns.
        var replyTimeout: Int64 = 1_000_000_000
        var estimator = ClockEstimator.Configuration()
        var lock = SourceLock.Configuration()
    }

    private struct Outstanding: Sendable {
        var sequence: UInt32
        var nonce: UInt32
        var clientSend: Int64
    }

    /// A new master timeline announced while locked, not yet believed.
    private struct PendingEpoch: Sendable {
        var epoch: UInt64
        var replies: Int
        var firstSent: Int64
    }

    /// Requests in flight at most; beyond, the oldest counts as lost.
    static let maximumOutstanding = 256
    /// Unanswered requests in a row after which polling slows to the maximum interval, once the
    /// silence has also lasted the servo's holdover timeout. Loss comes in bursts of datagrams, not
    /// of time (`wallctl impair`'s Gilbert channel): slowing down after a few lost requests would
    /// stretch a burst of five losses at 100 ms polls into seconds and put the clock in holdover, so
    /// only a silence long enough to be a server that is down slows polling.
    static let silenceBeforeBackoff = 8

    let configuration: Configuration
    /// With a key: requests are signed, and replies without a valid code are dropped.
    private let authenticator: PacketAuthenticator?
    private(set) var counters = ClockCounters()
    private(set) var master: MasterIdentity?
    private(set) var path: ClockPath?
    private(set) var pollInterval: Int64
    private var roundTrips = RoundTripTracker()
    private var delayFilter = DelayFilter()
    private var estimator: ClockEstimator
    private var lock: SourceLock
    private var outstanding: [UInt64: Outstanding] = [:]
    private var nextSequence: UInt32
    /// The nonce written by `prepareRequest`, recorded by `recordRequest`.
    private var preparedNonce: UInt32 = 0
    private var pendingEpoch: PendingEpoch?
    private var nextPoll: Int64?
    private var samplesSinceLock = 0
    private var unansweredInARow = 0
    /// The local send time of the last request that was answered.
    private var lastAnswered: Int64?

    /// - Parameters:
    ///   - firstSequence: random in production, so a stray or forged reply cannot guess it.
    ///   - authenticator: signs requests and checks replies under the shared key, if there is one.
    init(configuration: Configuration, firstSequence: UInt32, authenticator: PacketAuthenticator? = nil) {
        self.configuration = configuration
        self.authenticator = authenticator
        estimator = ClockEstimator(configuration: configuration.estimator)
        lock = SourceLock(configuration: configuration.lock)
        pollInterval = configuration.minimumPollInterval
        nextSequence = firstSequence
    }

    var state: ClockState { lock.state }
    /// The estimated line, as the source's status carries it.
    var mapping: ClockMapping { lock.estimate?.line ?? .identity }
    var estimate: ClockEstimate? { lock.estimate }

    /// Once locked, one reply, or a few, must not move the client: samples far off the estimate and
    /// a new master timeline are held back until they persist (see `ClockEstimator`).
    private var isGuarded: Bool { lock.state == .locked || lock.state == .holdover }

    // MARK: Requests

    /// Whether a request is due at local time `now`.
    func isRequestDue(at now: Int64) -> Bool {
        nextPoll.map { now >= $0 } ?? true
    }

    /// The next local time, not before `now`, at which `advance` or a request has work.
    func nextDeadline(after now: Int64) -> Int64 {
        var deadline = nextPoll ?? now
        if let lockDeadline = lock.nextDeadline { deadline = min(deadline, lockDeadline) }
        if let oldest = outstanding.values.map(\.clientSend).min() {
            deadline = min(deadline, oldest + configuration.replyTimeout)
        }
        return max(deadline, now)
    }

    /// Writes the next request into `buffer`, all but its send time, and returns its size.
    ///
    /// The caller then reads the clock, writes that time with `stampRequest`, sends at once, and
    /// records the request with `recordRequest`: so between the send timestamp and the send there is
    /// nothing but an 8-byte store (and, with a key, the signature, as on the server), as on the
    /// server between its send timestamp and `sendto`. Work there would sit on one leg of the round
    /// trip only and bias the offset by half its duration.
    ///
    /// - Parameter nonce: random (from the system's generator in production): a reply must echo it.
    mutating func prepareRequest(into buffer: UnsafeMutableRawBufferPointer, nonce: UInt32) -> Int {
        preparedNonce = nonce
        switch configuration.format {
        case .lockstep:
            LockstepTimePacket(kind: .request, sequence: nextSequence, nonce: nonce, clientSendTime: 0).encode(
                into: buffer)
            return LockstepTimePacket.size
        case .gstreamer:
            NetTimePacket(localTime: 0, remoteTime: 0).encode(into: buffer)
            return NetTimePacket.size
        }
    }

    /// Writes the send time into a prepared request, and with a key signs it.
    ///
    /// GStreamer's format echoes only the 64-bit time, which therefore also identifies the request:
    /// polls are at least a millisecond apart, so no two requests share it.
    func stampRequest(_ buffer: UnsafeMutableRawBufferPointer, sentAt clientSend: Int64) {
        switch configuration.format {
        case .lockstep:
            buffer.storeBytes(
                of: clientSend.bigEndian, toByteOffset: LockstepTimePacket.clientSendTimeOffset, as: Int64.self)
            authenticator?.sign(buffer)
        case .gstreamer:
            buffer.storeBytes(of: UInt64(bitPattern: clientSend).bigEndian, toByteOffset: 0, as: UInt64.self)
        }
    }

    /// Records the request sent at local time `clientSend` and schedules the next poll.
    mutating func recordRequest(sentAt clientSend: Int64) {
        if outstanding.count >= Self.maximumOutstanding,
            let oldest = outstanding.min(by: { $0.value.clientSend < $1.value.clientSend })
        {
            outstanding[oldest.key] = nil
            recordLost()
        }
        let sequence = nextSequence
        nextSequence &+= 1
        let key = configuration.format == .lockstep ? UInt64(sequence) : UInt64(bitPattern: clientSend)
        outstanding[key] = Outstanding(sequence: sequence, nonce: preparedNonce, clientSend: clientSend)
        counters.requestsSent += 1
        nextPoll = clientSend + currentPollInterval(at: clientSend)
    }

    private func currentPollInterval(at now: Int64) -> Int64 {
        let silence = lastAnswered.map { now - $0 } ?? .max
        if unansweredInARow >= Self.silenceBeforeBackoff, silence >= configuration.lock.holdoverTimeout {
            return configuration.maximumPollInterval
        }
        return pollInterval
    }

    // MARK: Replies

    /// Takes in a datagram received at local time `clientReceive`, processed at local time `now`.
    ///
    /// A reply counts only if it answers an outstanding request: from the server's address and port
    /// (`fromServer`), echoing the request's send time exactly and, in Lockstep's format, its
    /// sequence and random nonce, and with a key carrying a valid authentication code. Anything else
    /// is counted and dropped, and leaves the request outstanding for its real reply.
    ///
    /// - Returns: whether it produced a new estimate (and so a new status).
    mutating func receive(
        _ bytes: UnsafeRawBufferPointer, length: Int, at clientReceive: Int64, now: Int64, fromServer: Bool = true
    ) -> Bool {
        counters.repliesReceived += 1
        guard fromServer else {
            counters.unmatchedReplies += 1
            return false
        }
        let times: (key: UInt64, serverReceive: Int64, serverSend: Int64, packet: LockstepTimePacket?)
        switch (ClockPacket.decode(bytes, length: length), configuration.format) {
        case (.packet(.lockstep(let packet)), .lockstep) where packet.kind == .reply:
            times = (UInt64(packet.sequence), packet.serverReceiveTime, packet.serverSendTime, packet)
        case (.packet(.gstreamer(let packet)), .gstreamer):
            // Beyond Int64: not a time any master serves; the sample check rejects it below.
            let remote = Int64(clamping: packet.remoteTime)
            times = (packet.localTime, remote, remote, nil)
        default:
            counters.rejectedMalformed += 1
            return false
        }
        guard let request = outstanding[times.key],
            times.packet.map({
                request.clientSend == $0.clientSendTime && request.sequence == $0.sequence && request.nonce == $0.nonce
            }) ?? true
        else {
            counters.unmatchedReplies += 1
            return false
        }
        if let authenticator, !authenticator.isAuthentic(bytes) {
            counters.unauthenticatedReplies += 1
            return false
        }
        outstanding[times.key] = nil
        unansweredInARow = 0
        lastAnswered = request.clientSend
        if let packet = times.packet, !noteMaster(of: packet, sentAt: request.clientSend, now: now) { return false }
        guard
            let sample = ClockSample.checked(
                clientSend: request.clientSend, serverReceive: times.serverReceive, serverSend: times.serverSend,
                clientReceive: clientReceive)
        else {
            counters.rejectedInvalid += 1
            return false
        }
        roundTrips.record(sample.delay)
        guard !delayFilter.isSpike(sample.delay) else {
            counters.rejectedDelaySpikes += 1
            return false
        }
        return take(sample, now: now)
    }

    private mutating func take(_ sample: ClockSample, now: Int64) -> Bool {
        let outcome = estimator.add(sample, guarded: isGuarded)
        var restarted = false
        switch outcome {
        case .rejected:
            counters.rejectedInconsistent += 1
            return false
        case .accepted(let dropped):
            counters.samplesUsed += 1
            if dropped > 0 { counters.windowTrims += 1 }
        case .jumped:
            // The misfits counted as rejected on arrival are the new timeline's first samples.
            let confirming = estimator.window.count
            counters.samplesUsed += confirming
            counters.rejectedInconsistent -= confirming - 1
            counters.estimateRestarts += 1
            restarted = true
        }
        guard let estimate = estimator.estimate else { return false }
        let wasLocked = lock.state == .locked
        lock.take(estimate, now: now, restarted: restarted)
        adaptPollInterval(wasLocked: wasLocked, restarted: restarted)
        return true
    }

    /// Fast while locking, doubling every few samples once locked up to the maximum.
    private mutating func adaptPollInterval(wasLocked: Bool, restarted: Bool) {
        if restarted || lock.state != .locked {
            samplesSinceLock = 0
            pollInterval = configuration.minimumPollInterval
            return
        }
        if !wasLocked { samplesSinceLock = 0 }
        samplesSinceLock += 1
        // Under jitter the estimate improves with every sample: burst four times longer per step.
        let jittery = delayFilter.spread > configuration.jitterThreshold
        let ceiling =
            jittery
            ? min(configuration.maximumPollIntervalUnderJitter, configuration.maximumPollInterval)
            : configuration.maximumPollInterval
        if samplesSinceLock % (configuration.samplesPerPollStep * (jittery ? 4 : 1)) == 0 {
            pollInterval *= 2
        }
        pollInterval = min(pollInterval, ceiling)
    }

    /// Follows the server's identity and epoch: a new epoch is a new timeline.
    ///
    /// Once locked, a new epoch is believed only when every reply has carried it for
    /// `guardedJumpConfirmations` replies over `guardedJumpSpan`, as a master restart does; until
    /// then its replies are held back, so a few forged replies cannot throw the client off its
    /// timeline.
    ///
    /// - Parameter sentAt: when the reply's request was sent: the span of held replies counts from
    ///   the first one's request, as the estimator's span of misfits does.
    /// - Returns: whether the reply can be used.
    private mutating func noteMaster(of packet: LockstepTimePacket, sentAt: Int64, now: Int64) -> Bool {
        let identity = MasterIdentity(
            identity: packet.serverIdentity, epoch: packet.epoch, isRealtime: packet.flags.contains(.realtimeTimescale),
            isSimulated: packet.flags.contains(.simulatedClock))
        let path = ClockPath(
            stratum: Int(packet.stratum), relay: packet.relayIdentity, upstream: packet.upstreamIdentity,
            rootErrorBound: MediaTime(nanoseconds: Int64(packet.rootErrorBound)))
        if master == nil || master?.epoch == identity.epoch {
            self.path = path
            pendingEpoch = nil
            if let previous = master, previous.identity != identity.identity { counters.masterChanges += 1 }
            master = identity
            return true
        }
        if isGuarded {
            var pending = PendingEpoch(epoch: identity.epoch, replies: 0, firstSent: sentAt)
            if let held = pendingEpoch, held.epoch == identity.epoch { pending = held }
            pending.replies += 1
            pendingEpoch = pending
            let rule = configuration.estimator
            guard pending.replies >= rule.guardedJumpConfirmations, now - pending.firstSent >= rule.guardedJumpSpan
            else {
                counters.suspectEpochChanges += 1
                return false
            }
        }
        pendingEpoch = nil
        master = identity
        self.path = path
        counters.estimateRestarts += 1
        estimator.reset()
        lock.reset()
        delayFilter.reset()
        // Replies still in flight belong to the old timeline.
        outstanding.removeAll()
        pollInterval = configuration.minimumPollInterval
        nextPoll = now
        return true
    }

    // MARK: Time passing

    /// Expires lost requests and puts a source fallen silent in holdover.
    ///
    /// - Returns: whether the status changed in a way worth publishing (the state).
    mutating func advance(to now: Int64) -> Bool {
        let expired = outstanding.filter { now - $0.value.clientSend >= configuration.replyTimeout }
        for key in expired.keys {
            outstanding[key] = nil
            recordLost()
        }
        return lock.advance(to: now)
    }

    private mutating func recordLost() {
        counters.lostRequests += 1
        unansweredInARow += 1
    }

    // MARK: Status

    /// The source's status at local time `local`: its state, the estimated line, and that line's
    /// bounds.
    func status(at local: Int64) -> ClockStatus {
        let mapping = self.mapping
        func time(_ bound: Double) -> MediaTime {
            bound < 9e18 ? MediaTime(nanoseconds: Int64(bound.rounded(.up))) : .positiveInfinity
        }
        let bound = lock.estimate?.errorBound(of: mapping, atLocal: local) ?? (.infinity, 0)
        let guaranteed = lock.estimate?.errorBound(of: mapping, atLocal: local, guaranteed: true) ?? (.infinity, 0)
        let offset = mapping.masterNanoseconds(atLocalNanoseconds: local) &- local
        return ClockStatus(
            state: lock.state, mapping: mapping, localTime: MediaTime(nanoseconds: local),
            errorBound: time(bound.bound), errorBoundGrowthPPM: bound.growth / 1e3,
            guaranteedErrorBound: time(guaranteed.bound), guaranteedErrorBoundGrowthPPM: guaranteed.growth / 1e3,
            ratePPM: lock.estimate?.ratePPM ?? 0, offset: MediaTime(nanoseconds: offset),
            roundTrip: roundTrips.statistics, counters: counters, master: master, path: path,
            generation: lock.generation, format: configuration.format,
            pollInterval: MediaTime(nanoseconds: currentPollInterval(at: local)))
    }
}
