import LockstepTime

/// A day part that does not play as it is written: what `wallctl schedule` and `wallctl check` warn
/// of, since the schedule itself is valid and the screens would show something else without a word.
public struct ScheduleWarning: Hashable, Sendable, CustomStringConvertible {
    /// The day part: `day part 3 (lunch, 12:00-14:00)`, or an exception's.
    public var part: String
    /// What becomes of it, and why.
    public var why: String

    public var description: String { "\(part) \(why)" }
}

extension Schedule {
    /// The day parts that do not play as written, from `hostTime` (UTC) for `days` days:
    /// - a regular day part whose days fall on none of its dates never plays at all;
    /// - one whose dates are over plays no more;
    /// - one inside the hour the clocks skip when daylight saving time begins lasts no time that
    ///   day (`CivilClock`: it begins and ends at the jump);
    /// - one another is on over throughout (of the parts on at once, the one that began last is on;
    ///   of two beginning at once, the one listed later) is never seen that day.
    ///
    /// Each part is named once, with the dates it concerns.
    public func warnings(from hostTime: MediaTime, days: Int) -> [ScheduleWarning] {
        guard var calendar = ScheduleCalendar(self), let instant = TimelineLimits.clampedHostTime(hostTime).nanoseconds
        else { return [] }
        let today = calendar.clock.date(ScheduleCalendar.seconds(instant))
        var warnings: [ScheduleWarning] = []
        for (index, part) in dayParts.enumerated() {
            guard let dates = part.dates else { continue }
            let name = Self.name(
                ScheduleCalendar.Span(
                    exception: nil, index: index, playlist: part.playlist, from: part.from, to: part.to), exceptions)
            let firstWeek = (0..<min(7, max(0, dates.last.day - dates.first.day + 1))).map {
                dates.first.adding(days: $0)
            }
            if !firstWeek.contains(where: { part.days.contains($0.weekday) }) {
                let weekdays = Weekday.allCases.filter(part.days.contains).map(\.rawValue).joined(separator: ", ")
                warnings.append(
                    ScheduleWarning(
                        part: name,
                        why:
                            "never plays: none of its dates (\(dates.first) to \(dates.last)) falls on its days (\(weekdays))"
                    ))
            } else if dates.last < today {
                warnings.append(ScheduleWarning(part: name, why: "plays no more: its dates ended on \(dates.last)"))
            }
        }
        var skipped: [ScheduleCalendar.Span: [CivilDate]] = [:]
        var covered: [ScheduleCalendar.Span: (dates: [CivilDate], by: String)] = [:]
        var order: [ScheduleCalendar.Span] = []
        for offset in 0..<Int64(min(max(days, 0), 3660)) {
            let date = today.adding(days: offset)
            for (rank, span) in calendar.spans(on: date).enumerated() {
                let scheduled = calendar.part(span, on: date, rank: rank)
                if scheduled.end <= scheduled.start {
                    if skipped[span] == nil && covered[span] == nil { order.append(span) }
                    skipped[span, default: []].append(date)
                    continue
                }
                // What is on changes only at the parts' edges: the part is seen if it is on at its
                // start or at another part's edge within it.
                var instants = [scheduled.start]
                for day in (-2...2).map({ date.adding(days: $0) }) {
                    for other in calendar.parts(on: day) {
                        for edge in [other.start, other.end] where scheduled.start < edge && edge < scheduled.end {
                            instants.append(edge)
                        }
                    }
                }
                guard !instants.contains(where: { calendar.onAt($0) == scheduled }) else { continue }
                if skipped[span] == nil && covered[span] == nil { order.append(span) }
                let by = calendar.onAt(scheduled.start).map { "\"\($0.playlist)\"" } ?? "another day part"
                covered[span, default: ([], by)].dates.append(date)
            }
        }
        for span in order {
            let name = Self.name(span, exceptions)
            if let dates = skipped[span] {
                let seconds = ScheduleCalendar.seconds(calendar.part(span, on: dates[0], rank: 0).start)
                warnings.append(
                    ScheduleWarning(
                        part: name,
                        why: "lasts no time on \(Self.list(dates)): it lies in the hour the clocks skip (from "
                            + "\(calendar.clock.offsetName(seconds - 1)) to \(calendar.clock.offsetName(seconds)))"))
            }
            if let (dates, by) = covered[span] {
                warnings.append(
                    ScheduleWarning(
                        part: name,
                        why:
                            "is never seen on \(Self.list(dates)): the day part of \(by) is on throughout (of day parts on at "
                            + "once, the one that began last is on; of two that begin at once, the one listed later)"))
            }
        }
        return warnings
    }

    /// `day part 3 (lunch, 12:00-14:00)`, `exception 1 (Christmas), its day part 2 (...)`.
    static func name(_ span: ScheduleCalendar.Span, _ exceptions: [ScheduleException]) -> String {
        let part = "day part \(span.index + 1) (\(span.playlist), \(span.from)-\(span.to))"
        guard let number = span.exception else { return part }
        let exception = exceptions[number].name.map { " (\($0))" } ?? ""
        return "exception \(number + 1)\(exception), its \(part)"
    }

    /// `on 2027-03-28`, `on 2027-03-28, 2027-04-04 and 3 more days`.
    static func list(_ dates: [CivilDate]) -> String {
        let shown = dates.prefix(3).map(\.description)
        let more = dates.count > 3 ? " and \(dates.count - 3) more days" : ""
        return shown.count == 1
            ? shown[0]
            : shown.dropLast().joined(separator: ", ")
                + (more.isEmpty ? " and \(shown.last!)" : ", \(shown.last!)\(more)")
    }
}
