import LockstepTime

/// Chooses, among clients following several clock sources, the one to follow, and publishes one
/// continuous local → master mapping across changes of source: the whole failover logic, without
/// sockets or threads, so tests drive it at given times.
///
/// - A source qualifies when its client is locked, on the timeline (master epoch) followed, with an
///   error bound from that source within `maximumErrorBound`, and is neither this process's own
///   server nor one following it (a loop), nor `maximumStratum` or more relays from the master.
///   The stratum catches longer loops, as NTP's stratum 16 and RIP's hop count do: around a loop
///   of relays with no master, each serves its source's stratum plus one, so the strata climb
///   with every poll until one node refuses its source, holds the timeline alone, and serves a
///   stratum its followers refuse in turn. The wall then coasts in holdover, each node on its own
///   estimate, instead of following itself for good.
/// - The first qualifying source in order of preference is followed. A more preferred source that
///   comes back is taken again only after qualifying for `returnHoldoff`, so a flapping master
///   does not move the wall back and forth. At the very start a source waits up to `initialGrace`
///   for a more preferred one that is still locking.
/// - When the source changes, the published mapping slews onto the new source's (at most
///   `maximumSlewRate`): it never steps. Only a difference beyond `stepThreshold` (a master whose
///   time jumped) or a change of timeline starts a new `timeline`, as `ClockServo` does.
/// - With no qualifying source the mapping coasts at the last source's rate (holdover). A timeline
///   is given up only when no source has served it for `timelineHoldoff` while one serves another:
///   so a master restarted on a new clock moves a wall whose nodes serve no relay, after a pause,
///   while a wall with relays stays on its timeline.
struct ClockSourceSelector: Sendable {
    struct Configuration: Sendable, Hashable {
        var returnHoldoff: Int64 = 10_000_000_000
        var maximumErrorBound: Int64 = 5_000_000
        var slewTimeConstant: Int64 = 1_000_000_000
        /// ns/s: 500 ppm.
        var maximumSlewRate: Double = 500_000
        var stepThreshold: Int64 = 50_000_000
        var timelineHoldoff: Int64 = 10_000_000_000
        /// At the very start, how long a less preferred source that locked first waits for a more
        /// preferred one still locking, ns: so a node does not start on a relay and move to the
        /// master 10 s later.
        var initialGrace: Int64 = 2_000_000_000
        /// A source this many relays or more from the master is not followed (see above).
        var maximumStratum = 8
    }

    /// Why a source is not followed now.
    enum Standing: Hashable, Sendable {
        case followed
        case qualified
        case notLocked(ClockState)
        case otherTimeline(epoch: UInt64)
        case loop
        /// The source serves at `maximumStratum` or beyond: a loop of relays, or too long a chain.
        case tooManyRelays(stratum: Int)
        case errorBoundTooLarge(MediaTime)
    }

    let configuration: Configuration
    /// This process's own relay identity, when it serves: a source whose upstream it is follows us.
    let ownRelay: UInt64?
    private(set) var statuses: [ClockStatus?]
    private var qualifiedSince: [Int64?]
    private(set) var selected: Int?
    /// The source last followed, kept in holdover.
    private(set) var last: Int?
    /// The timeline followed: the master's epoch (0 for GStreamer's format, which has none).
    private(set) var epoch: UInt64?
    private(set) var mapping = ClockMapping.identity
    private(set) var timeline = 0
    private var slewEnd: Int64?
    /// When a source last qualified on the timeline followed.
    private var lastQualified: Int64?
    /// How often the source changed.
    private(set) var changes = 0

    init(sources: Int, configuration: Configuration = Configuration(), ownRelay: UInt64? = nil) {
        precondition(sources > 0)
        self.configuration = configuration
        self.ownRelay = ownRelay
        statuses = Array(repeating: nil, count: sources)
        qualifiedSince = Array(repeating: nil, count: sources)
    }

    static func epoch(of status: ClockStatus) -> UInt64 { status.master?.epoch ?? 0 }

    /// How source `index` stands at local time `now`.
    func standing(of index: Int, at now: Int64) -> Standing {
        guard let status = statuses[index] else { return .notLocked(.unsynced) }
        if let check = check(status, at: now, ignoringTimeline: false) { return check }
        return index == selected ? .followed : .qualified
    }

    private func check(_ status: ClockStatus, at now: Int64, ignoringTimeline: Bool) -> Standing? {
        guard status.state == .locked else { return .notLocked(status.state) }
        if !ignoringTimeline, let epoch, Self.epoch(of: status) != epoch {
            return .otherTimeline(epoch: Self.epoch(of: status))
        }
        // Our own server (a source address that leads back here), or one that follows it.
        if let ownRelay, let path = status.path, path.upstream == ownRelay || path.relay == ownRelay { return .loop }
        if let stratum = status.path?.stratum, stratum >= configuration.maximumStratum {
            return .tooManyRelays(stratum: stratum)
        }
        // The client's own bound, not the source's root bound: a relay holding the timeline after
        // the master died sees its bound from the master grow without end, yet every node following
        // it stays in step with the others.
        let bound = status.errorBound(atLocal: MediaTime(nanoseconds: now))
        guard let nanoseconds = bound.nanoseconds, nanoseconds <= configuration.maximumErrorBound else {
            return .errorBoundTooLarge(bound)
        }
        return nil
    }

    /// Takes source `index`'s new status at local time `now`.
    ///
    /// - Returns: whether the published status changed.
    mutating func update(source index: Int, status: ClockStatus, now: Int64) -> Bool {
        statuses[index] = status
        let before = (selected, timeline, mapping)
        reselect(at: now)
        if index == selected, selected == before.0, timeline == before.1 { follow(status.mapping, at: now) }
        return selected != before.0 || timeline != before.1 || mapping != before.2 || index == selected
    }

    /// Lets time pass: ends a finished slew, moves between sources as they qualify.
    mutating func advance(to now: Int64) -> Bool {
        let before = (selected, timeline, mapping)
        reselect(at: now)
        if let end = slewEnd, now >= end, let source = selected ?? last, let status = statuses[source] {
            mapping = ClockMapping(
                localTime: MediaTime(nanoseconds: now),
                masterTime: MediaTime(nanoseconds: mapping.masterNanoseconds(atLocalNanoseconds: now)),
                rate: status.mapping.rate)
            slewEnd = nil
        }
        return selected != before.0 || timeline != before.1 || mapping != before.2
    }

    private mutating func reselect(at now: Int64) {
        var qualified: [Bool] = []
        for index in statuses.indices {
            let ok = statuses[index].map { check($0, at: now, ignoringTimeline: false) == nil } ?? false
            qualified.append(ok)
            qualifiedSince[index] = ok ? (qualifiedSince[index] ?? now) : nil
        }
        var choice: Int?
        if let current = selected, qualified[current] {
            choice =
                qualified.indices.first { index in
                    index < current && qualifiedSince[index].map { now - $0 >= configuration.returnHoldoff } ?? false
                } ?? current
        } else {
            choice = qualified.firstIndex(of: true)
            if let first = choice, selected == nil, last == nil, let since = qualifiedSince[first],
                now - since < configuration.initialGrace,
                statuses[..<first].contains(where: { $0?.state == .locking })
            {
                choice = nil
            }
        }
        if choice != nil { lastQualified = now }
        if choice == nil, epoch != nil {
            // The timeline followed is served by no one: give it up for another only after a while.
            let given = lastQualified.map { now - $0 >= configuration.timelineHoldoff } ?? true
            if given,
                let other = statuses.indices.first(where: { index in
                    statuses[index].map { check($0, at: now, ignoringTimeline: true) == nil } ?? false
                })
            {
                epoch = statuses[other].map(Self.epoch(of:))
                choice = other
                lastQualified = now
                qualifiedSince[other] = now
                selected = nil
                last = nil
            }
        }
        guard choice != selected else { return }
        if choice != nil, selected != nil || last != nil { changes += 1 }
        if let selected { last = selected }
        selected = choice
        guard let choice, let status = statuses[choice] else { return }
        let newTimeline = epoch.map { $0 != Self.epoch(of: status) } ?? true
        epoch = Self.epoch(of: status)
        if newTimeline || timeline == 0 {
            step(to: status.mapping, at: now)
        } else {
            follow(status.mapping, at: now)
        }
    }

    /// Follows `target` from the published mapping at `now`: slews onto it, or steps beyond the
    /// threshold.
    private mutating func follow(_ target: ClockMapping, at now: Int64) {
        let wall = mapping.masterNanoseconds(atLocalNanoseconds: now)
        let difference = target.masterNanoseconds(atLocalNanoseconds: now) - wall
        guard abs(difference) <= configuration.stepThreshold else { return step(to: target, at: now) }
        // A slew under way keeps its end: each new estimate re-aims at it, so the wall reaches the
        // new source's time in one time constant instead of ever more slowly.
        let remaining = slewEnd.map { $0 - now }.flatMap { $0 >= 10_000_000 ? $0 : nil }
        let wanted = Double(difference) / (Double(remaining ?? configuration.slewTimeConstant) / 1e9)
        let correction = min(max(wanted, -configuration.maximumSlewRate), configuration.maximumSlewRate)
        let duration = correction == 0 ? 0 : Double(difference) / correction
        mapping = ClockMapping(
            localTime: MediaTime(nanoseconds: now), masterTime: MediaTime(nanoseconds: wall),
            rate: target.rate + correction / 1e9)
        slewEnd = duration > 0 ? now + Int64((duration * 1e9).rounded()) : nil
    }

    private mutating func step(to target: ClockMapping, at now: Int64) {
        mapping = target.anchored(atLocal: MediaTime(nanoseconds: now))
        timeline += 1
        slewEnd = nil
    }

    /// The next local time at which `advance` has work.
    func nextDeadline(after now: Int64) -> Int64? { slewEnd.map { max($0, now) } }

    /// The combined status at local time `now`: the followed source's (or in holdover the last
    /// one's), with the published mapping and timeline, and a bound that includes the source's
    /// root bound and what is left of a slew.
    func status(at now: Int64) -> ClockStatus? {
        guard let source = selected ?? last, var status = statuses[source] else {
            return statuses.compactMap { $0 }.max { rank($0.state) < rank($1.state) }.map { status in
                var status = status
                status.state = status.state == .locked ? .locking : status.state
                status.timeline = timeline
                return status
            }
        }
        let local = MediaTime(nanoseconds: now)
        let target = status.mapping.masterNanoseconds(atLocalNanoseconds: now)
        let residual = MediaTime(nanoseconds: abs(target - mapping.masterNanoseconds(atLocalNanoseconds: now)))
        let rateGap = abs(status.mapping.rate - mapping.rate) * 1e6
        let root = status.path?.rootErrorBound ?? .zero
        status.errorBound = status.errorBound(atLocal: local) + root + residual
        status.guaranteedErrorBound = status.guaranteedErrorBound(atLocal: local) + root + residual
        status.errorBoundGrowthPPM += rateGap
        status.guaranteedErrorBoundGrowthPPM += rateGap
        status.localTime = local
        status.mapping = mapping
        status.offset = MediaTime(nanoseconds: mapping.masterNanoseconds(atLocalNanoseconds: now) - now)
        status.timeline = timeline
        status.state = selected == nil ? .holdover : .locked
        return status
    }

    private func rank(_ state: ClockState) -> Int {
        switch state {
        case .unsynced: return 0
        case .locking: return 1
        case .holdover: return 2
        case .locked: return 3
        }
    }
}
