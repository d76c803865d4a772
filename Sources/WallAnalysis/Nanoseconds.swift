import LockstepTime

/// Integer nanosecond arithmetic for the analyzers' hot paths: each frame's times are converted to
/// nanoseconds once, as `MediaTime`'s exact rational arithmetic costs more than a wall's worth of
/// frames per second needs, and converted back at the public boundary.
enum Nanoseconds {
    static let perMicrosecond: Int64 = 1_000
    static let perMillisecond: Int64 = 1_000_000
    static let perSecond: Int64 = 1_000_000_000

    /// `numerator / denominator` rounded half away from zero; `denominator` must be positive.
    static func roundedQuotient(_ numerator: Int128, _ denominator: Int128) -> Int128 {
        let (quotient, remainder) = numerator.quotientAndRemainder(dividingBy: denominator)
        guard remainder.magnitude * 2 >= denominator.magnitude else { return quotient }
        return numerator < 0 ? quotient - 1 : quotient + 1
    }

    /// `numerator / denominator` rounded toward negative infinity; `denominator` must be positive.
    static func flooredQuotient(_ numerator: Int64, _ denominator: Int64) -> Int64 {
        let (quotient, remainder) = numerator.quotientAndRemainder(dividingBy: denominator)
        return remainder < 0 ? quotient - 1 : quotient
    }

    /// The time in nanoseconds when it is a finite time. Nodes send nanosecond times, which take
    /// a shortcut past `MediaTime.nanoseconds`' general conversion: the per-record path of an
    /// hour-long analysis.
    static func value(of time: MediaTime) -> Int64? {
        if time.timescale == MediaTime.nanosecondTimescale, time.flags.rawValue == MediaTime.Flags.valid.rawValue {
            return time.value
        }
        return time.nanoseconds
    }

    /// The time in nanoseconds, or a typed error naming `what` when it is not a finite time.
    static func of(_ time: MediaTime, _ what: @autoclosure () -> String) throws(AnalysisError) -> Int64 {
        guard let nanoseconds = value(of: time) else { throw .nonNumericTime(what: what(), value: time) }
        return nanoseconds
    }

    /// `nanoseconds` in `unit`s (milliseconds or seconds) with three decimals ("0.700", "-1.250"),
    /// rounded half away from zero: reports are read in milliseconds, where a microsecond is the
    /// last digit that means anything, and durations in seconds.
    static func text(_ nanoseconds: Int64, per unit: Int64) -> String {
        let thousandths = roundedQuotient(Int128(nanoseconds), Int128(unit / 1_000))
        let sign = thousandths < 0 ? "-" : ""
        let whole = thousandths.magnitude / 1_000
        let fraction = String(thousandths.magnitude % 1_000)
        return sign + String(whole) + "." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}

extension MediaTime {
    /// This time in milliseconds with three decimals, or "-" when it is not a finite time.
    var millisecondsText: String {
        nanoseconds.map { Nanoseconds.text($0, per: Nanoseconds.perMillisecond) } ?? "-"
    }

    /// This time in seconds with three decimals, or "-" when it is not a finite time.
    var secondsText: String {
        nanoseconds.map { Nanoseconds.text($0, per: Nanoseconds.perSecond) } ?? "-"
    }
}
