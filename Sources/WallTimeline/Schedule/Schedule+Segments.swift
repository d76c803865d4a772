import LockstepTime

/// One day part on one date, as instants: what is on from `start` to `end` (UTC nanoseconds).
struct ScheduledPart: Hashable, Sendable {
    var playlist: String
    var start: Int64
    var end: Int64
    /// Its place in the day's list: of two beginning at once, the later one is on.
    var rank: Int
}

/// Computes a schedule's transitions on a place's clocks, remembering the days it has worked out.
struct ScheduleCalendar {
    let schedule: Schedule
    let clock: CivilClock
    private var days: [CivilDate: [ScheduledPart]] = [:]

    init?(_ schedule: Schedule) {
        guard let clock = CivilClock(identifier: schedule.timeZone) else { return nil }
        self.schedule = schedule
        self.clock = clock
    }

    /// Seconds either side of 1970 a schedule is worked out within: the timeline's host times
    /// (`TimelineLimits.largestHostTime`, about 146 years), so no instant overflows nanoseconds.
    static let reach = TimelineLimits.largestHostTime / 1_000_000_000

    /// `seconds` since 1970 in nanoseconds, kept within `reach`.
    static func nanoseconds(_ seconds: Int64) -> Int64 { min(max(seconds, -reach), reach) * 1_000_000_000 }

    /// Midnight starting `date` on the place's clocks, UTC nanoseconds.
    func midnight(_ date: CivilDate) -> Int64 { Self.nanoseconds(clock.utc(date, CivilTime(seconds: 0)!)) }

    /// The day parts of `date` as instants (`spans(on:)`), those that last some time.
    mutating func parts(on date: CivilDate) -> [ScheduledPart] {
        if let known = days[date] { return known }
        // Beyond the timeline's host times nothing is scheduled (and no date arithmetic overflows).
        guard (-Self.reach / 86_400 + 2...Self.reach / 86_400 - 2).contains(date.day) else { return [] }
        let parts = spans(on: date).enumerated().map { rank, span in part(span, on: date, rank: rank) }
            .filter { $0.end > $0.start }  // a part inside a skipped hour lasts no time
        if days.count > 64 { days.removeAll() }
        days[date] = parts
        return parts
    }

    /// Where a day part of a date comes from: the schedule's regular day part at `index`, or an
    /// exception's (`exception`, `index` within it).
    struct Span: Hashable {
        var exception: Int?
        var index: Int
        var playlist: String
        var from: CivilTime
        var to: CivilTime
    }

    /// The day parts written for `date`, in their order: an exception's if one covers it (the first
    /// listed), else the regular ones for its weekday and dates.
    func spans(on date: CivilDate) -> [Span] {
        if let number = schedule.exceptions.firstIndex(where: { $0.dates.contains(date) }) {
            return schedule.exceptions[number].dayParts.enumerated().map {
                Span(
                    exception: number, index: $0.offset, playlist: $0.element.playlist, from: $0.element.from,
                    to: $0.element.to)
            }
        }
        return schedule.dayParts.enumerated()
            .filter { $0.element.days.contains(date.weekday) && ($0.element.dates?.contains(date) ?? true) }
            .map {
                Span(
                    exception: nil, index: $0.offset, playlist: $0.element.playlist, from: $0.element.from,
                    to: $0.element.to)
            }
    }

    /// `span` on `date` as instants: one that ends at or before it begins ends the next day.
    func part(_ span: Span, on date: CivilDate, rank: Int) -> ScheduledPart {
        let end = span.to > span.from ? clock.utc(date, span.to) : clock.utc(date.adding(days: 1), span.to)
        return ScheduledPart(
            playlist: span.playlist, start: Self.nanoseconds(clock.utc(date, span.from)), end: Self.nanoseconds(end),
            rank: rank)
    }

    /// The day part on at `instant` (UTC ns), nil outside every one: of those in force, the one that
    /// began last.
    mutating func onAt(_ instant: Int64) -> ScheduledPart? {
        let date = clock.date(Self.seconds(instant))
        var best: ScheduledPart?
        for day in [date.adding(days: -2), date.adding(days: -1), date] {
            for part in parts(on: day) where part.start <= instant && instant < part.end {
                if let current = best, (current.start, current.rank) > (part.start, part.rank) { continue }
                best = part
            }
        }
        return best
    }

    /// Whether what is on changes at `instant`.
    mutating func changes(at instant: Int64) -> Bool {
        let before = onAt(instant - 1)
        let after = onAt(instant)
        return before != after
    }

    /// The last instant at or before `instant` at which what is on changed; nil when none lies within
    /// `Schedule.searchDays`.
    mutating func lastChange(atOrBefore instant: Int64) -> Int64? {
        let today = clock.date(Self.seconds(instant))
        var candidates: [Int64] = []
        for back in 0...Schedule.searchDays {
            let day = today.adding(days: -back)
            for part in parts(on: day) {
                for edge in [part.start, part.end] where edge <= instant { candidates.append(edge) }
            }
            // Days before this one end their parts before the next midnight: every candidate from
            // there on is known.
            let complete = midnight(day.adding(days: 1))
            candidates.sort(by: >)
            while let edge = candidates.first, edge >= complete {
                candidates.removeFirst()
                if changes(at: edge) { return edge }
            }
        }
        return nil
    }

    /// The first instant after `instant` at which what is on changes; nil when none lies within
    /// `Schedule.searchDays`.
    mutating func nextChange(after instant: Int64) -> Int64? {
        let today = clock.date(Self.seconds(instant))
        var candidates: [Int64] = []
        for ahead in -1...Schedule.searchDays {
            let day = today.adding(days: ahead)
            for part in parts(on: day) {
                for edge in [part.start, part.end] where edge > instant { candidates.append(edge) }
            }
            // Later days' parts begin at or after their midnight.
            let complete = midnight(day.adding(days: 1))
            candidates.sort()
            while let edge = candidates.first, edge < complete {
                candidates.removeFirst()
                if changes(at: edge) { return edge }
            }
        }
        return nil
    }

    /// The segment that begins at `instant`, a change of the schedule: the day part on then, its
    /// playlist where its clock says, or the outside show.
    mutating func segment(from instant: Int64) -> TimelineSegment {
        let from = MediaTime(nanoseconds: instant)
        guard let part = onAt(instant), let playlist = schedule.playlists[part.playlist] else {
            let any = schedule.playlists.keys.min().flatMap { schedule.playlists[$0] }!
            return TimelineSegment(
                from: from, show: schedule.outside, playlist: any, origin: PlaylistPoint(entry: 0), rate: .normal,
                isPlaying: false)
        }
        let located = playlist.locate(Rational(MediaTime(nanoseconds: instant - part.start)))
        return TimelineSegment(
            from: from, show: .playlist, playlist: playlist, origin: located.point, rate: .normal,
            isPlaying: !located.ended)
    }

    /// Seconds since 1970 of a UTC instant in nanoseconds, rounded down.
    static func seconds(_ instant: Int64) -> Int64 {
        instant >= 0 ? instant / 1_000_000_000 : (instant - 999_999_999) / 1_000_000_000
    }
}

extension Schedule {
    /// The schedule's segment in force at `hostTime` (UTC), from its last change; nil when no change
    /// lies within the search.
    public func segment(at hostTime: MediaTime) -> TimelineSegment? {
        guard var calendar = ScheduleCalendar(self), let instant = TimelineLimits.clampedHostTime(hostTime).nanoseconds,
            let change = calendar.lastChange(atOrBefore: instant)
        else { return nil }
        return calendar.segment(from: change)
    }

    /// The schedule's next segment after `hostTime` (UTC); nil when no change lies within the search.
    public func segment(after hostTime: MediaTime) -> TimelineSegment? {
        guard var calendar = ScheduleCalendar(self), let instant = TimelineLimits.clampedHostTime(hostTime).nanoseconds,
            let change = calendar.nextChange(after: instant)
        else { return nil }
        return calendar.segment(from: change)
    }

    /// What plays when from `hostTime` for `days` days: each change, with its local date and time.
    public func changes(from hostTime: MediaTime, days: Int) -> [ScheduleChange] {
        let days = min(max(days, 0), 3660)
        guard var calendar = ScheduleCalendar(self), var instant = TimelineLimits.clampedHostTime(hostTime).nanoseconds
        else { return [] }
        let end =
            min(instant, TimelineLimits.largestHostTime - Int64(days) * 86_400 * 1_000_000_000)
            + Int64(days) * 86_400 * 1_000_000_000
        var changes: [ScheduleChange] = []
        if let first = calendar.lastChange(atOrBefore: instant) {
            changes.append(ScheduleChange(calendar, at: first))
        }
        while let next = calendar.nextChange(after: instant), next < end {
            changes.append(ScheduleChange(calendar, at: next))
            instant = next
        }
        return changes
    }
}

/// A change of what a schedule shows, as `wallctl schedule` lists it.
public struct ScheduleChange: Hashable, Sendable {
    /// UTC nanoseconds.
    public var instant: Int64
    public var localDate: CivilDate
    public var localTime: CivilTime
    /// The place's UTC offset then (`UTC+01:00`).
    public var utcOffset: String
    /// The playlist on from then, nil for the outside show.
    public var playlist: String?
    public var show: TimelineShow

    init(_ calendar: ScheduleCalendar, at instant: Int64) {
        var calendar = calendar
        let seconds = ScheduleCalendar.seconds(instant)
        (localDate, localTime) = calendar.clock.local(seconds)
        utcOffset = calendar.clock.offsetName(seconds)
        self.instant = instant
        playlist = calendar.onAt(instant)?.playlist
        show = playlist == nil ? calendar.schedule.outside : .playlist
    }
}
