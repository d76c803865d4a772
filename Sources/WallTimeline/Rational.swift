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
        // Every time that is not a number has timescale 0: one comparison, not the flags.
        precondition(time.timescale > 0, "only numeric times are rational")
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
    var floor: Int128 { numerator.quotientRoundedDown(by: denominator) }

    /// As a media time in whole nanoseconds, rounded down: every time the timeline hands out is in
    /// nanoseconds, as every time it holds, so nothing computed from one brings in a timescale
    /// whose products could overflow.
    var mediaTime: MediaTime {
        let nanoseconds = (numerator * 1_000_000_000).quotientRoundedDown(by: denominator)
        guard let value = Int64(exactly: nanoseconds) else {
            return nanoseconds > 0 ? .positiveInfinity : .negativeInfinity
        }
        return MediaTime(value: value, timescale: 1_000_000_000)
    }

    /// As a media time in whole nanoseconds, rounded up: the first nanosecond at or after this time.
    var mediaTimeRoundedUp: MediaTime {
        let rounded = mediaTime
        guard rounded.isNumeric, Rational(rounded) < self else { return rounded }
        return rounded + MediaTime(value: 1, timescale: 1_000_000_000)
    }

    /// Stein's binary algorithm: shifts and subtractions, no 128-bit division, which is slow.
    private static func gcd(_ a: UInt128, _ b: UInt128) -> UInt128 {
        if a == 0 { return b == 0 ? 1 : b }
        if b == 0 { return a }
        if a == 1 || b == 1 { return 1 }
        let shift = (a | b).trailingZeroBitCount
        var x = a >> a.trailingZeroBitCount
        var y = b
        repeat {
            y >>= y.trailingZeroBitCount
            if x > y { swap(&x, &y) }
            y -= x
        } while y != 0
        return x << shift
    }
}

extension Int128 {
    /// The quotient rounded toward negative infinity; `divisor` is positive.
    fileprivate func quotientRoundedDown(by divisor: Int128) -> Int128 {
        let quotient = self / divisor
        return self < 0 && quotient * divisor != self ? quotient - 1 : quotient
    }
}
