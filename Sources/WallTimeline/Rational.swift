import LockstepTime

/// An exact rational number on 128-bit integers: the timeline's arithmetic, so that a position a
/// million loops in is computed from the anchor in one step, with nothing accumulated.
struct Rational: Hashable, Comparable, Sendable {
    /// Always reduced, with a positive denominator.
    let numerator: Int128
    let denominator: Int128

    init(_ numerator: Int128, _ denominator: Int128 = 1) {
        precondition(denominator != 0, "a rational needs a non-zero denominator")
        let sign: Int128 = denominator < 0 ? -1 : 1
        let divisor = Int128(Self.gcd(numerator.magnitude, denominator.magnitude))
        self.numerator = sign * numerator / divisor
        self.denominator = sign * denominator / divisor
    }

    /// A numeric time in seconds.
    init(_ time: MediaTime) {
        precondition(time.isNumeric, "only numeric times are rational")
        self.init(Int128(time.value), Int128(time.timescale))
    }

    static let zero = Rational(0)

    static func + (a: Rational, b: Rational) -> Rational {
        Rational(a.numerator * b.denominator + b.numerator * a.denominator, a.denominator * b.denominator)
    }

    static func - (a: Rational, b: Rational) -> Rational {
        Rational(a.numerator * b.denominator - b.numerator * a.denominator, a.denominator * b.denominator)
    }

    static func * (a: Rational, b: Rational) -> Rational {
        Rational(a.numerator * b.numerator, a.denominator * b.denominator)
    }

    static func / (a: Rational, b: Rational) -> Rational {
        Rational(a.numerator * b.denominator, a.denominator * b.numerator)
    }

    static func < (a: Rational, b: Rational) -> Bool {
        a.numerator * b.denominator < b.numerator * a.denominator
    }

    /// The largest whole number not above this one.
    var floor: Int128 {
        let quotient = numerator / denominator
        return numerator < 0 && quotient * denominator != numerator ? quotient - 1 : quotient
    }

    /// As a media time: exact where the denominator fits a timescale, otherwise to the nearest
    /// nanosecond below.
    var mediaTime: MediaTime {
        if denominator <= Int128(Int32.max), let value = Int64(exactly: numerator) {
            return MediaTime(value: value, timescale: Int32(denominator))
        }
        let nanoseconds = (self * Rational(1_000_000_000)).floor
        guard let value = Int64(exactly: nanoseconds) else {
            return nanoseconds > 0 ? .positiveInfinity : .negativeInfinity
        }
        return MediaTime(value: value, timescale: 1_000_000_000)
    }

    private static func gcd(_ a: UInt128, _ b: UInt128) -> UInt128 {
        var (x, y) = (a, b)
        while y != 0 { (x, y) = (y, x % y) }
        return x == 0 ? 1 : x
    }
}
