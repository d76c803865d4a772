import LockstepTime

/// What every screen of a wall shows at every master time: a versioned playlist anchored on the
/// master clock, and the edits (pause, seek, rate, next, stop, a still, a test card...) that take
/// effect at host times. It is the wall's desired state: every command edits it, every node keeps
/// it, and a node that restarts computes from it where the wall is.
///
/// A node holds the newest version and drives its player toward `position(at:)` continuously, so a
/// node that restarts, falls behind or joins late computes where the wall is instead of waiting to
/// be told. The arithmetic is exact: a position is computed from its segment's anchor in one step,
/// so a million loops of a 10 s entry land on the same frame as the first.
///
/// Every time a timeline holds is kept in nanoseconds (an initializer or the decoder converts, to
/// the nearest nanosecond), and `validate()` bounds every number, so that no position a node
/// computes from a valid timeline can overflow (`TimelineLimits`).
public struct Timeline: Hashable, Sendable, Codable {
    /// The wall it belongs to (a node refuses another wall's timeline).
    public var wall: String
    /// Each edit makes a new version; a node keeps the newest.
    public var version: UInt64
    /// The master clock's epoch its host times count from: a master that starts over names a new one.
    public var epoch: UInt64
    /// SHA-256 of the config the controller made it with, when it says: a node whose config differs
    /// reports it.
    public var configSHA256: String?
    /// In order of `from`, the first starting the timeline; each holds until the next (or, with a
    /// schedule, until the schedule's next change).
    public internal(set) var segments: [TimelineSegment]
    /// The calendar the wall plays by, if it has one: its changes take over from the segments in
    /// force before them (`segment(at:)`). Host times are then UTC: it needs a master serving real
    /// time.
    public internal(set) var schedule: Schedule?

    /// A timeline that starts `playlist` at host time `start` from `origin`, playing at `rate`.
    public init(
        wall: String, version: UInt64 = 1, epoch: UInt64, configSHA256: String? = nil, playlist: Playlist,
        start: MediaTime, origin: PlaylistPoint = PlaylistPoint(entry: 0), rate: PlaybackRate = .normal
    ) throws(TimelineError) {
        try playlist.validate()
        try Self.check(rate)
        guard start.isNumeric else { throw .notNumeric(field: "start") }
        self.wall = wall
        self.version = version
        self.epoch = epoch
        self.configSHA256 = configSHA256
        segments = [
            TimelineSegment(from: start, playlist: playlist, origin: origin, rate: rate, isPlaying: true)
        ]
        self = normalized()
        try validate()
    }

    /// A timeline that plays `schedule` from host time (UTC) `now` on: every node computes the same
    /// segments from it.
    public init(
        wall: String, version: UInt64 = 1, epoch: UInt64, configSHA256: String? = nil, schedule: Schedule,
        now: MediaTime
    ) throws(TimelineError) {
        try schedule.validate()
        guard now.isNumeric else { throw .notNumeric(field: "now") }
        let schedule = schedule.normalized()
        let first =
            schedule.segment(at: now)
            ?? TimelineSegment(
                from: TimelineLimits.nanoseconds(now), show: schedule.outside,
                playlist: schedule.playlists.keys.min().flatMap { schedule.playlists[$0] }!,
                origin: PlaylistPoint(entry: 0), rate: .normal, isPlaying: false)
        self.wall = wall
        self.version = version
        self.epoch = epoch
        self.configSHA256 = configSHA256
        self.schedule = schedule
        segments = [first]
        self = normalized()
        try validate()
    }

    /// When the timeline starts.
    public var start: MediaTime { segments[0].from }

    /// The segment in force at `hostTime` (the first one before the start): the last one begun, of
    /// the timeline's own and (from the start on) the schedule's changes; an edit at the instant of a
    /// change wins.
    public func segment(at hostTime: MediaTime) -> TimelineSegment {
        let own = segments.last { $0.from <= hostTime } ?? segments[0]
        guard let schedule, hostTime >= start, let scheduled = schedule.segment(at: hostTime),
            scheduled.from > own.from
        else { return own }
        return scheduled
    }

    /// The first segment that takes effect after `hostTime`, if one is scheduled.
    public func segment(after hostTime: MediaTime) -> TimelineSegment? {
        let own = segments.first { $0.from > hostTime }
        guard let schedule, let scheduled = schedule.segment(after: max(hostTime, start)) else { return own }
        guard let own, own.from <= scheduled.from else { return scheduled }
        return own
    }

    /// The next version's number, or an error when the wall has used every version there is.
    public var nextVersion: UInt64 {
        get throws(TimelineError) {
            guard version < TimelineLimits.largestVersion else { throw .versionsExhausted(version) }
            return version + 1
        }
    }

    /// Drops the segments no time from `hostTime` on needs: those before the one in force then, and
    /// before the segment a cue in force then would return to.
    public mutating func forget(before hostTime: MediaTime) {
        guard var keep = segments.lastIndex(where: { $0.from <= hostTime }) else { return }
        let inForce = keep
        while keep > 0, segments[keep].cue != nil { keep -= 1 }
        // Cues back to back: what they interrupted and the first of them (where the interruption
        // is read) stay; the cues between it and the one in force go, so a wall that takes cue
        // after cue for months sends a timeline of constant size.
        if segments[keep].cue == nil, inForce > keep + 2 { segments.removeSubrange((keep + 2)..<inForce) }
        guard keep > 0 else { return }
        segments.removeFirst(keep)
    }

    static func check(_ rate: PlaybackRate) throws(TimelineError) {
        let terms = TimelineLimits.largestRateTerm
        guard rate.numerator != 0, rate.numerator.magnitude <= terms, rate.denominator > 0,
            rate.denominator.magnitude <= terms
        else {
            throw .invalidRate(rate)
        }
        let magnitude = abs(Double(rate.numerator) / Double(rate.denominator))
        guard magnitude >= 1.0 / 16, magnitude <= 16 else { throw .invalidRate(rate) }
        // Passes, loops and entries are counted forward; the player could play an MP4 backwards,
        // but a timeline has no meaning for it. Refused, never accepted and left frozen.
        guard rate.numerator > 0 else { throw .reverseRate(rate) }
    }

    /// Supersedes every segment from `segment.from` on with `segment`.
    mutating func replaceSegments(with segment: TimelineSegment) {
        segments = segments.filter { $0.from < segment.from } + [segment]
    }

    private enum CodingKeys: String, CodingKey { case wall, version, epoch, configSHA256, segments, schedule }

    /// Decodes a timeline with every time in nanoseconds; `validate()` checks it.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        wall = try container.decode(String.self, forKey: .wall)
        version = try container.decode(UInt64.self, forKey: .version)
        epoch = try container.decode(UInt64.self, forKey: .epoch)
        configSHA256 = try container.decodeIfPresent(String.self, forKey: .configSHA256)
        segments = try container.decode([TimelineSegment].self, forKey: .segments)
        schedule = try container.decodeIfPresent(Schedule.self, forKey: .schedule)
        self = normalized()
    }
}

/// A stretch of the timeline from one host time to the next segment's: what the screens show, and
/// for the playlist, where it starts, at what rate, playing or paused.
public struct TimelineSegment: Hashable, Sendable, Codable {
    /// Master-clock host time from which this segment holds.
    public var from: MediaTime
    /// What the screens show: the playlist, or something in its place (the playlist waits where it
    /// was, for a resume).
    public var show: TimelineShow
    public var playlist: Playlist
    /// The playlist point shown at `from`.
    public var origin: PlaylistPoint
    public var rate: PlaybackRate
    public var isPlaying: Bool
    /// The show-control cue this segment carries out, if it is one: a cue over a cue returns to
    /// what the first interrupted.
    public var cue: String?
    /// What follows the cue's clip when it ends, so a verb that changes when it ends (a pause, a
    /// resume, a rate, a seek in it) moves what follows with it.
    public var cueThen: Cue.After?

    init(
        from: MediaTime, show: TimelineShow = .playlist, playlist: Playlist, origin: PlaylistPoint,
        rate: PlaybackRate, isPlaying: Bool
    ) {
        self.from = from
        self.show = show
        self.playlist = playlist
        self.origin = origin
        self.rate = rate
        self.isPlaying = isPlaying
    }

    private enum CodingKeys: String, CodingKey { case from, show, playlist, origin, rate, isPlaying, cue, cueThen }

    /// A segment stored before there were shows other than the playlist shows the playlist.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        from = try container.decode(MediaTime.self, forKey: .from)
        show = try container.decodeIfPresent(TimelineShow.self, forKey: .show) ?? .playlist
        playlist = try container.decode(Playlist.self, forKey: .playlist)
        origin = try container.decode(PlaylistPoint.self, forKey: .origin)
        rate = try container.decode(PlaybackRate.self, forKey: .rate)
        isPlaying = try container.decode(Bool.self, forKey: .isPlaying)
        cue = try container.decodeIfPresent(String.self, forKey: .cue)
        cueThen = try container.decodeIfPresent(Cue.After.self, forKey: .cueThen)
    }
}

/// What the screens show during a segment.
public enum TimelineShow: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The playlist, at the segment's point and rate.
    case playlist
    /// Between shows: each node's configured still, or black where it has none (`wallctl stop`).
    case stopped
    case black
    /// An image from the media roots, each screen showing its tile of it.
    case still(image: String)
    /// Each screen's test card: its id, its tile and the wall's alignment grid.
    case testCard

    private enum CodingKeys: String, CodingKey { case kind, image }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        if case .still(let image) = self { try container.encode(image, forKey: .image) }
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try container.decode(String.self, forKey: .kind)
        switch kind {
        case "playlist": self = .playlist
        case "stopped": self = .stopped
        case "black": self = .black
        case "testCard": self = .testCard
        case "still": self = .still(image: try container.decode(String.self, forKey: .image))
        default:
            throw DecodingError.dataCorruptedError(
                forKey: .kind, in: container,
                debugDescription: "unknown show \"\(kind)\"; expected playlist, stopped, black, still or testCard")
        }
    }

    /// Its name in JSON and in reports.
    public var kind: String {
        switch self {
        case .playlist: return "playlist"
        case .stopped: return "stopped"
        case .black: return "black"
        case .still: return "still"
        case .testCard: return "testCard"
        }
    }

    public var description: String {
        if case .still(let image) = self { return "still \(image)" }
        return kind
    }
}
