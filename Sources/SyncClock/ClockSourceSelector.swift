import LockstepTime

/// Chooses, among clients following several clock sources, the one to follow, and publishes one
/// continuous local → master mapping across changes of source through the one `ClockServo`: the
/// whole failover logic and the clock's only adjustment, without sockets or threads, so tests
/// drive it at given times. Each source only estimates (its status carries its estimated line);
/// this is where the clock is set, as chrony's `reference.c` is.
///
/// - A source qualifies when its client is locked, on the master's epoch followed, with an
///   error bound from that source within `maximumErrorBound`, and is neither this process's own
///   server nor one following it (a loop), nor `maximumStratum` or more relays from the master.
///   The stratum catches longer loops, as NTP's stratum 16 and RIP's hop count do: around a loop
///   of relays with no master, each serves its source's stratum plus one, so the strata climb
///   with every poll until one node refuses its source, holds the epoch alone, and serves a
///   stratum its followers refuse in turn. The wall then coasts in holdover, each node on its own
///   estimate, instead of following itself for good.
/// - The first qualifying source in order of preference is followed. A more preferred source that
///   comes back is taken again only after qualifying for `returnHoldoff`, so a flapping master
///   does not move the wall back and forth. At the very start a source waits up to `initialGrace`
///   for a more preferred one that is still locking.
/// - The servo follows the followed source's line, slewing (at most 500 ppm), also when the source
///   changes: it never steps. Only a difference beyond its step threshold (a master whose time
///   jumped) or a change of epoch steps it, which starts a new `generation`.
/// - With no qualifying source the mapping coasts at the last source's rate (holdover). An epoch is
///   given up only when no source has served it for `epochHoldoff` while one serves another: so a
///   master restarted on a new clock moves a wall whose nodes serve no relay, after a pause, while a
///   wall with relays stays on its epoch.
struct ClockSourceSelector: Sendable {
    struct Configuration: Sendable, Hashable {
        var returnHoldoff: Int64 = 10_000_000_000
        var maximumErrorBound: Int64 = 5_000_000
        var epochHoldoff: Int64 = 10_000_000_000
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
        case otherEpoch(UInt64)
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
    /// The master's epoch followed (0 for GStreamer's format, which has none).
    private(set) var epoch: UInt64?
    /// The one servo: the published mapping.
    private(set) var servo: ClockServo
    var mapping: ClockMapping { servo.mapping }
    var generation: Int { servo.generation }
    /// The source the servo last followed, and that source's generation then: a source whose
    /// estimate started over since (its master's time jumped) is stepped onto, never slewed.
    private var followed: (index: Int, generation: Int)?
    /// When a source last qualified on the epoch followed.
    private var lastQualified: Int64?
    /// How often the source changed.
    private(set) var changes = 0

    init(
        sources: Int, configuration: Configuration = Configuration(), servo: ClockServo.Configuration = .init(),
        ownRelay: UInt64? = nil
    ) {
        precondition(sources > 0)
        self.configuration = configuration
        self.servo = ClockServo(configuration: servo)
        self.ownRelay = ownRelay
        statuses = Array(repeating: nil, count: sources)
        qualifiedSince = Array(repeating: nil, count: sources)
    }

    static func epoch(of status: ClockStatus) -> UInt64 { status.master?.epoch ?? 0 }

    /// How source `index` stands at local time `now`.
    func standing(of index: Int, at now: Int64) -> Standing {
        guard let status = statuses[index] else { return .notLocked(.unsynced) }
        if let check = check(status, at: now, ignoringEpoch: false) { return check }
        return index == selected ? .followed : .qualified
    }

    private func check(_ status: ClockStatus, at now: Int64, ignoringEpoch: Bool) -> Standing? {
        guard status.state == .locked else { return .notLocked(status.state) }
        if !ignoringEpoch, let epoch, Self.epoch(of: status) != epoch {
            return .otherEpoch(Self.epoch(of: status))
        }
        // Our own server (a source address that leads back here), or one that follows it.
        if let ownRelay, let path = status.path, path.upstream == ownRelay || path.relay == ownRelay { return .loop }
        if let stratum = status.path?.stratum, stratum >= configuration.maximumStratum {
            return .tooManyRelays(stratum: stratum)
        }
        // The client's own bound, not the source's root bound: a relay holding the epoch after
        // the master died sees its bound from the master grow without end, yet every node following
        // it stays in step with the others.
        let bound = status.errorBound(atLocal: MediaTime(nanoseconds: now))
        guard let nanoseconds = bound.nanoseconds, nanoseconds <= configuration.maximumErrorBound else {
            return .errorBoundTooLarge(bound)
        }
        return nil
    }

    /// Takes source `index`'s new status at local time `now`: the servo follows its line when it is
    /// the source followed.
    ///
    /// - Returns: whether the published status changed.
    mutating func update(source index: Int, status: ClockStatus, now: Int64) -> Bool {
        statuses[index] = status
        let before = (selected, generation, mapping)
        reselect(at: now)
        if index == selected, selected == before.0, generation == before.1 { steer(toward: index, status, at: now) }
        return selected != before.0 || generation != before.1 || mapping != before.2 || index == selected
    }

    /// Lets time pass: ends a finished slew, moves between sources as they qualify.
    mutating func advance(to now: Int64) -> Bool {
        let before = (selected, generation, mapping)
        reselect(at: now)
        _ = servo.advance(to: now)
        return selected != before.0 || generation != before.1 || mapping != before.2
    }

    private mutating func reselect(at now: Int64) {
        var qualified: [Bool] = []
        for index in statuses.indices {
            let ok = statuses[index].map { check($0, at: now, ignoringEpoch: false) == nil } ?? false
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
            // The epoch followed is served by no one: give it up for another only after a while.
            let given = lastQualified.map { now - $0 >= configuration.epochHoldoff } ?? true
            if given,
                let other = statuses.indices.first(where: { index in
                    statuses[index].map { check($0, at: now, ignoringEpoch: true) == nil } ?? false
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
        let newEpoch = epoch.map { $0 != Self.epoch(of: status) } ?? true
        epoch = Self.epoch(of: status)
        if newEpoch || servo.generation == 0 {
            servo.step(to: status.mapping, at: now)
            followed = (choice, status.generation)
        } else {
            steer(toward: choice, status, at: now)
        }
    }

    /// The servo follows source `index`'s line: slewing, or stepping when that source's estimate
    /// started over since it was last followed (a confirmed jump of its master's time).
    private mutating func steer(toward index: Int, _ status: ClockStatus, at now: Int64) {
        if let followed, followed.index == index, followed.generation != status.generation {
            servo.step(to: status.mapping, at: now)
        } else {
            servo.follow(status.mapping, at: now, pollInterval: status.pollInterval.nanoseconds ?? 0)
        }
        followed = (index, status.generation)
    }

    /// The next local time at which `advance` has work.
    func nextDeadline(after now: Int64) -> Int64? { servo.nextDeadline(after: now) }

    /// The combined status at local time `now`: the followed source's (or in holdover the last
    /// one's), with the published mapping and generation, and a bound that includes the source's
    /// root bound and what is left of a slew.
    func status(at now: Int64) -> ClockStatus? {
        guard let source = selected ?? last, var status = statuses[source] else {
            return statuses.compactMap { $0 }.max { rank($0.state) < rank($1.state) }.map { status in
                var status = status
                status.state = status.state == .locked ? .locking : status.state
                status.generation = generation
                return status
            }
        }
        let local = MediaTime(nanoseconds: now)
        // What is left of a slew toward the source's line, from whichever source was followed last.
        let residual = MediaTime(
            nanoseconds: abs(
                status.mapping.masterNanoseconds(atLocalNanoseconds: now)
                    - mapping.masterNanoseconds(atLocalNanoseconds: now)))
        let rateGap = abs(status.mapping.rate - mapping.rate) * 1e6
        let root = status.path?.rootErrorBound ?? .zero
        status.errorBound = status.errorBound(atLocal: local) + root + residual
        status.guaranteedErrorBound = status.guaranteedErrorBound(atLocal: local) + root + residual
        status.errorBoundGrowthPPM += rateGap
        status.guaranteedErrorBoundGrowthPPM += rateGap
        status.localTime = local
        status.mapping = mapping
        status.offset = MediaTime(nanoseconds: mapping.masterNanoseconds(atLocalNanoseconds: now) - now)
        status.generation = generation
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

/// How a clock source stands with a node, as a reader compares it (in `/status` beside the
/// sentence that says why).
public enum SourceStanding: String, Sendable, Hashable, Codable, CaseIterable {
    /// The source the node follows.
    case followed
    /// Qualified: the node would follow it if the followed one failed.
    case standby
    /// Its client is not locked (yet, or any more).
    case notLocked
    /// It serves another master's timeline (epoch).
    case otherEpoch
    /// It follows this node: following it would make a loop.
    case loop
    /// It is too many relays from the master: a loop of relays, or too long a chain.
    case tooManyRelays
    /// Its error bound is too large to follow.
    case errorBoundTooLarge
}

extension ClockSourceSelector.Standing {
    /// The standing without its particulars.
    var kind: SourceStanding {
        switch self {
        case .followed: return .followed
        case .qualified: return .standby
        case .notLocked: return .notLocked
        case .otherEpoch: return .otherEpoch
        case .loop: return .loop
        case .tooManyRelays: return .tooManyRelays
        case .errorBoundTooLarge: return .errorBoundTooLarge
        }
    }
}
