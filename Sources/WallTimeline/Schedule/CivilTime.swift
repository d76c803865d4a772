import Foundation

/// A value JSON holds as the text a person writes (a date, a time of day).
public protocol TextCoded: Codable, CustomStringConvertible {
    init?(_ text: String)
    /// What the text must look like, for the error when it does not.
    static var form: String { get }
}

extension TextCoded {
    public init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let value = Self(text) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "\"\(text)\" is not \(Self.form)"))
        }
        self = value
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// A date on the calendar of a place (proleptic Gregorian), with no time zone: what a schedule's
/// day parts and exceptions are written in.
public struct CivilDate: Hashable, Sendable, Comparable, TextCoded {
    /// Days since 1970-01-01.
    public let day: Int64

    public init(day: Int64) { self.day = day }

    /// `year`-`month`-`day`; nil when that date does not exist.
    public init?(year: Int, month: Int, day: Int) {
        guard (1...9999).contains(year), (1...12).contains(month), (1...Self.daysIn(month, of: year)).contains(day)
        else { return nil }
        // Days from civil: March-based years, so that the leap day ends a year.
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        self.day = era * 146_097 + dayOfEra - 719_468
    }

    /// Parses `YYYY-MM-DD`.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            parts.allSatisfy({ $0.allSatisfy(\.isASCII) }),
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2])
        else { return nil }
        self.init(year: year, month: month, day: day)
    }

    public var components: (year: Int, month: Int, day: Int) {
        let z = day + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let d = dayOfYear - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yearOfEra + era * 400 + (m <= 2 ? 1 : 0)
        return (Int(y), Int(m), Int(d))
    }

    public var weekday: Weekday {
        // 1970-01-01 was a Thursday.
        let index = ((day % 7) + 7 + 3) % 7
        return Weekday.allCases[Int(index)]
    }

    public func adding(days: Int64) -> CivilDate { CivilDate(day: day + days) }

    public var description: String {
        let (y, m, d) = components
        return String(format: "%04d-%02d-%02d", y, m, d)
    }

    public static func < (a: CivilDate, b: CivilDate) -> Bool { a.day < b.day }

    static func daysIn(_ month: Int, of year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    public static let form = "a date YYYY-MM-DD"
}

/// A day of the week, Monday first (ISO 8601).
public enum Weekday: String, Hashable, Sendable, Codable, CaseIterable {
    case monday = "mon"
    case tuesday = "tue"
    case wednesday = "wed"
    case thursday = "thu"
    case friday = "fri"
    case saturday = "sat"
    case sunday = "sun"
}

/// A time of day on a place's clocks, to the second: 00:00 to 24:00 (the end of a day).
public struct CivilTime: Hashable, Sendable, Comparable, TextCoded {
    /// Seconds since midnight, 0 to 86 400.
    public let seconds: Int

    public init?(seconds: Int) {
        guard (0...86_400).contains(seconds) else { return nil }
        self.seconds = seconds
    }

    /// Parses `HH:MM` or `HH:MM:SS` (24:00 is the end of the day).
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (2...3).contains(parts.count), parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isNumber) }),
            let hours = Int(parts[0]), let minutes = Int(parts[1]), minutes < 60
        else { return nil }
        let seconds = parts.count == 3 ? Int(parts[2]) : 0
        guard let seconds, seconds < 60 else { return nil }
        self.init(seconds: hours * 3600 + minutes * 60 + seconds)
    }

    public var description: String {
        let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60)
        return s == 0 ? String(format: "%02d:%02d", h, m) : String(format: "%02d:%02d:%02d", h, m, s)
    }

    public static func < (a: CivilTime, b: CivilTime) -> Bool { a.seconds < b.seconds }

    public static let form = "a time HH:MM, 00:00 to 24:00"
}

/// A place's clocks: local dates and times to UTC and back, with one rule for the hours that do
/// not exist or come twice when daylight saving time begins or ends.
///
/// - A local time that does not exist (in the hour the clocks skip in spring) is the instant the
///   clocks jump: a day part from 02:30 on that day begins at the jump (03:00 local).
/// - A local time that comes twice (in the hour repeated in autumn) is its first occurrence: a day
///   part from 02:30 begins at the first 02:30, one that ends at 02:30 ends at the first.
///
/// Only `TimeZone.secondsFromGMT(for:)` is asked of the tz database; the calendar arithmetic is
/// this type's own, so every node with the same tz data computes the same instants.
public struct CivilClock: Sendable, Hashable {
    public let zone: TimeZone

    public init?(identifier: String) {
        guard !identifier.isEmpty, identifier.utf8.count <= 64, let zone = TimeZone(identifier: identifier) else {
            return nil
        }
        self.zone = zone
    }

    /// The UTC offset in force at `utc` (seconds since 1970).
    func offset(at utc: Int64) -> Int64 {
        Int64(zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(utc))))
    }

    /// The UTC instant (seconds since 1970) of `time` on `date` on this place's clocks.
    public func utc(_ date: CivilDate, _ time: CivilTime) -> Int64 {
        let naive = date.day * 86_400 + Int64(time.seconds)
        // The offsets in force a day either side cover every transition near `naive`.
        let offsets = Set([offset(at: naive - 86_400), offset(at: naive), offset(at: naive + 86_400)])
        let valid = offsets.map { naive - $0 }.filter { offset(at: $0) == naive - $0 }
        if let first = valid.min() { return first }
        // In the skipped hour: the instant the clocks jumped, between the two readings.
        var low = naive - (offsets.max() ?? 0)
        var high = naive - (offsets.min() ?? 0)
        let before = offset(at: low)
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if offset(at: middle) == before { low = middle } else { high = middle }
        }
        return high
    }

    /// The local date and time at `utc` (seconds since 1970).
    public func local(_ utc: Int64) -> (date: CivilDate, time: CivilTime) {
        let naive = utc + offset(at: utc)
        let day = naive >= 0 ? naive / 86_400 : (naive - 86_399) / 86_400
        return (CivilDate(day: day), CivilTime(seconds: Int(naive - day * 86_400))!)
    }

    /// The local date at `utc`.
    public func date(_ utc: Int64) -> CivilDate { local(utc).date }

    /// The UTC offset in force at `utc`, as reports write it: `UTC+01:00`.
    public func offsetName(_ utc: Int64) -> String {
        let offset = offset(at: utc)
        let minutes = abs(offset) / 60
        return String(format: "UTC%@%02d:%02d", offset < 0 ? "-" : "+", minutes / 60, minutes % 60)
    }

    public static func == (a: CivilClock, b: CivilClock) -> Bool { a.zone.identifier == b.zone.identifier }
    public func hash(into hasher: inout Hasher) { hasher.combine(zone.identifier) }
}

extension CivilClock {
    /// Why `identifier` cannot name a place's clocks in a config, nil when it can: it must be a name
    /// of the tz database (`Europe/Berlin`, `UTC`, or `Etc/GMT-2` for a fixed offset). Foundation
    /// also takes `GMT+2` or `UTC+1` as fixed offsets; a site that writes its winter offset so
    /// loses daylight saving time without a word, and tz's own `Etc/GMT+2` means UTC-02:00, so
    /// the sign is explained rather than guessed.
    public static func nameProblem(_ identifier: String) -> String? {
        let example = "such as Europe/Paris or America/New_York"
        guard let clock = CivilClock(identifier: identifier) else {
            return "\"\(identifier)\" is not a time zone of the tz database (\(example))"
        }
        // Fixed offsets as Foundation reads them: `GMT+2`, `UTC-05:30`.
        let upper = identifier.uppercased()
        let isOffset = ["GMT", "UTC", "UT"].contains { prefix in
            upper.hasPrefix(prefix) && ["+", "-"].contains(upper.dropFirst(prefix.count).first)
        }
        guard isOffset else { return nil }
        let offset = clock.zone.secondsFromGMT()
        var advice = "write the place's tz name (\(example)), whose clocks follow its daylight saving time"
        if offset % 3600 == 0, abs(offset) <= 14 * 3600 {
            let hours = offset / 3600
            let etc = hours == 0 ? "Etc/UTC" : "Etc/GMT\(hours > 0 ? "-" : "+")\(abs(hours))"
            advice +=
                "; a fixed offset of \(clock.offsetName(0)) is \(etc) (the tz database's Etc names count "
                + "hours the other way: Etc/GMT-2 is two hours ahead of UTC)"
        }
        return "\"\(identifier)\" is a fixed offset, not a place: \(advice)"
    }
}
