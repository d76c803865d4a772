import LockstepTime

/// The bounds every timeline keeps, so that nothing a node computes from one can overflow or
/// trap, however long the wall runs: a timeline a node accepts is one it can follow for good.
///
/// Positions are exact rationals on 128-bit integers. With every time in nanoseconds, host times
/// within ±2^62 ns (146 years either side of the master's zero), media times and a playlist's cycle
/// within those, and rates whose terms are at most 256, every intermediate product stays below
/// 2^115: a margin of a thousand times, checked by the property tests with the extremes.
public enum TimelineLimits {
    /// Host times a timeline may name, ns: about 146 years either side of the master's zero (a
    /// master serving real time is at about 2^60.6 ns in 2026).
    public static let largestHostTime: Int64 = 1 << 62
    public static let hostTimes =
        MediaTime(nanoseconds: -largestHostTime)...MediaTime(nanoseconds: largestHostTime)
    /// The longest media an entry may play, ns: about 13 days.
    public static let longestMedia: Int64 = 1 << 50
    /// The longest cycle of a playlist (all its entries and repeats), ns.
    public static let longestCycle: Int64 = 1 << 62
    /// Repeats of one entry at most (more: repeat forever).
    public static let mostRepeats = 1_000_000
    public static let mostEntries = 10_000
    /// Segments a timeline holds at most: a controller forgets those no time from now on needs.
    public static let mostSegments = 1_000
    /// The largest numerator and denominator of a rate.
    public static let largestRateTerm: UInt32 = 256
    /// The largest version: 2^53 − 1, which a web page's numbers still hold exactly. At one edit a
    /// second a wall uses 2^25 a year.
    public static let largestVersion: UInt64 = (1 << 53) - 1
    /// The longest text a timeline names (a wall, a media path, an image).
    public static let longestName = 4096
    public static let testCardDurations = MediaTime(value: 1, timescale: 1)...MediaTime(value: 600, timescale: 1)

    /// `time` in nanoseconds, to the nearest one (an infinity when it does not fit).
    static func nanoseconds(_ time: MediaTime) -> MediaTime {
        time.isNumeric ? time.convertScale(MediaTime.nanosecondTimescale) : time
    }

    /// A host time to compute a position at: in nanoseconds, within `hostTimes` (a time outside
    /// counts as the nearest bound; a time that is not a number as zero).
    static func clampedHostTime(_ time: MediaTime) -> MediaTime {
        if time.isPositiveInfinity { return hostTimes.upperBound }
        if time.isNegativeInfinity { return hostTimes.lowerBound }
        guard time.isNumeric else { return .zero }
        return min(max(nanoseconds(time), hostTimes.lowerBound), hostTimes.upperBound)
    }
}
