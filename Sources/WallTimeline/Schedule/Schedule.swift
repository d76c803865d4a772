import LockstepTime

/// What a wall plays by the calendar: named playlists in day parts (weekdays, times, date ranges)
/// on a place's clocks, dated exceptions (holidays, one-off events), and a show outside them.
///
/// Part of a timeline: every node computes the same segments from it and the master's UTC (a
/// master serving real time), so transitions happen at the same master time on every screen with no
/// controller running, across restarts and power cuts.
///
/// - A day part plays its playlist from the first entry at the instant it begins; the playlist
///   runs on by the clock from there (a loop that began at 09:00 continues where 09:00 says).
/// - Where day parts overlap, the one that began last is on; when it ends, the one it interrupted
///   plays on from where its clock says.
/// - A date with an exception has the exception's day parts instead of the regular ones (none:
///   closed all day).
/// - Outside every day part the screens show `outside`: black, each node's still (`stopped`), or an
///   image.
/// - An operator's edit (pause, seek, black...) holds until the next transition of the schedule,
///   which then takes over again.
public struct Schedule: Hashable, Sendable, Codable {
    /// The tz database name of the place whose clocks the times are on (`Europe/Paris`).
    public var timeZone: String
    public var playlists: [String: Playlist]
    public var dayParts: [DayPart]
    public var exceptions: [ScheduleException]
    /// What the screens show outside every day part.
    public var outside: TimelineShow

    public init(
        timeZone: String, playlists: [String: Playlist], dayParts: [DayPart], exceptions: [ScheduleException] = [],
        outside: TimelineShow = .black
    ) {
        self.timeZone = timeZone
        self.playlists = playlists
        self.dayParts = dayParts
        self.exceptions = exceptions
        self.outside = outside
    }

    /// At most this many day parts, exceptions and playlists.
    public static let mostParts = 500
    /// How far a transition is searched for, either way: a schedule closed for longer shows its
    /// outside show with no transition in sight.
    static let searchDays: Int64 = 400

    public func validate() throws(TimelineError) {
        guard CivilClock(identifier: timeZone) != nil else {
            throw .invalidSchedule("time zone \"\(timeZone)\" is not in this machine's tz database")
        }
        guard !playlists.isEmpty else { throw .invalidSchedule("it names no playlists") }
        for (what, count) in [
            ("playlists", playlists.count), ("day parts", dayParts.count), ("exceptions", exceptions.count),
        ] where count > Self.mostParts {
            throw .tooMany(what: "schedule \(what)", count: count, limit: Self.mostParts)
        }
        for (name, playlist) in playlists {
            guard !name.isEmpty, name.utf8.count <= 256 else {
                throw .invalidSchedule("a playlist name must be 1 to 256 bytes")
            }
            do {
                try playlist.validate()
            } catch {
                throw .invalidSchedule("playlist \"\(name)\": \(error)")
            }
        }
        switch outside {
        case .playlist, .testCard:
            throw .invalidSchedule("outside its day parts a schedule shows black, stopped or a still")
        case .still(let image):
            guard !image.isEmpty, image.utf8.count <= TimelineLimits.longestName else {
                throw .invalidShow("a still names an image of 1 to \(TimelineLimits.longestName) bytes")
            }
        case .black, .stopped:
            break
        }
        for (index, part) in dayParts.enumerated() {
            try check(part.playlist, part.from, part.to, "day part \(index + 1)")
            guard !part.days.isEmpty else { throw .invalidSchedule("day part \(index + 1) names no days") }
            if let dates = part.dates, dates.last < dates.first {
                throw .invalidSchedule("day part \(index + 1): its dates end (\(dates.last)) before they begin")
            }
        }
        for (index, exception) in exceptions.enumerated() {
            let name = "exception \(index + 1)\(exception.name.map { " (\($0))" } ?? "")"
            guard exception.dates.last >= exception.dates.first else {
                throw .invalidSchedule("\(name): its dates end before they begin")
            }
            guard exception.dates.last.day - exception.dates.first.day < 3660 else {
                throw .invalidSchedule("\(name): spans more than ten years")
            }
            for part in exception.dayParts { try check(part.playlist, part.from, part.to, name) }
        }
    }

    private func check(_ playlist: String, _ from: CivilTime, _ to: CivilTime, _ name: String) throws(TimelineError) {
        guard playlists[playlist] != nil else {
            throw .invalidSchedule(
                "\(name) plays \"\(playlist)\", which is not one of its playlists (\(playlists.keys.sorted().joined(separator: ", ")))"
            )
        }
        guard from.seconds < 86_400 else { throw .invalidSchedule("\(name) begins at 24:00: use 00:00") }
        guard from != to else { throw .invalidSchedule("\(name) begins and ends at \(from)") }
    }

    /// This schedule with every playlist's times in nanoseconds.
    func normalized() -> Schedule {
        var schedule = self
        schedule.playlists = playlists.mapValues { $0.normalized() }
        return schedule
    }
}

/// A stretch of some days on which a playlist plays: on each of `days` (within `dates`, if given)
/// from `from` to `to` on the place's clocks; a `to` at or before `from` ends the next day.
public struct DayPart: Hashable, Sendable, Codable {
    public var playlist: String
    public var days: Set<Weekday>
    public var from: CivilTime
    public var to: CivilTime
    public var dates: DateRange?

    public init(playlist: String, days: Set<Weekday>, from: CivilTime, to: CivilTime, dates: DateRange? = nil) {
        self.playlist = playlist
        self.days = days
        self.from = from
        self.to = to
        self.dates = dates
    }

    private enum CodingKeys: String, CodingKey { case playlist, days, from, to, dates }

    /// The days in the week's order, Monday first: a set's own order is its hash order, which
    /// differs from one process to the next. Nodes compare the encodings of timelines of one
    /// version (`Timeline.supersedes`); with the days in hash order, every node found a peer's
    /// copy of a scheduled wall's timeline newer than its own about every other time it asked,
    /// and took it again, every 5 s, for good (2,054 times in an hour of bench/chaos).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(playlist, forKey: .playlist)
        try container.encode(Weekday.allCases.filter(days.contains), forKey: .days)
        try container.encode(from, forKey: .from)
        try container.encode(to, forKey: .to)
        try container.encodeIfPresent(dates, forKey: .dates)
    }
}

/// Dates, both included.
public struct DateRange: Hashable, Sendable, Codable {
    public var first: CivilDate
    public var last: CivilDate

    public init(first: CivilDate, last: CivilDate) {
        self.first = first
        self.last = last
    }

    public func contains(_ date: CivilDate) -> Bool { first <= date && date <= last }
}

/// Dates that play other day parts than the regular ones: none for a closed day, or a one-off event.
public struct ScheduleException: Hashable, Sendable, Codable {
    public var name: String?
    public var dates: DateRange
    public var dayParts: [Part]

    /// A day part of an exception: on each of its dates.
    public struct Part: Hashable, Sendable, Codable {
        public var playlist: String
        public var from: CivilTime
        public var to: CivilTime

        public init(playlist: String, from: CivilTime, to: CivilTime) {
            self.playlist = playlist
            self.from = from
            self.to = to
        }
    }

    public init(name: String? = nil, dates: DateRange, dayParts: [Part] = []) {
        self.name = name
        self.dates = dates
        self.dayParts = dayParts
    }
}
