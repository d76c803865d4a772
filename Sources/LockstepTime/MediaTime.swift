/// A rational time value, `value / timescale` seconds, with the semantics of Core Media's `CMTime`.
///
/// This is the one time type of Lockstep: media positions, durations, host times on a clock, clock
/// offsets and intervals are all `MediaTime`. Besides numeric values it has the special values
/// `invalid`, `indefinite`, `positiveInfinity` and `negativeInfinity`, which propagate through
/// arithmetic and order as `CMTimeCompare` orders them:
/// `negativeInfinity < numeric < indefinite < positiveInfinity < invalid`.
///
/// Arithmetic is exact where the result can be represented: sums use the least common multiple of
/// the operands' timescales, falling back to the largest timescale (and setting `hasBeenRounded`)
/// when that would exceed `Int32.max`.
public struct MediaTime: Sendable {
    /// The `CMTimeFlags` of a time.
    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        public static let valid = Flags(rawValue: 1 << 0)
        public static let hasBeenRounded = Flags(rawValue: 1 << 1)
        public static let positiveInfinity = Flags(rawValue: 1 << 2)
        public static let negativeInfinity = Flags(rawValue: 1 << 3)
        public static let indefinite = Flags(rawValue: 1 << 4)
    }

    /// How a value is rounded when converted to another timescale (`CMTimeRoundingMethod`).
    public enum RoundingMethod: Sendable {
        /// Round half away from zero, Core Media's default.
        case `default`
        case towardZero
        case awayFromZero
        case towardPositiveInfinity
        case towardNegativeInfinity
    }

    /// The largest timescale a time may have (`kCMTimeMaxTimescale`).
    public static let maxTimescale: Int32 = .max
    /// Nanoseconds per second: the timescale of clock times and GStreamer times.
    public static let nanosecondTimescale: Int32 = 1_000_000_000

    public let value: Int64
    public let timescale: Int32
    public let flags: Flags

    /// A numeric time of `value / timescale` seconds; a timescale of zero or less makes it invalid.
    public init(value: Int64, timescale: Int32) {
        if timescale > 0 {
            self.init(value: value, timescale: timescale, flags: .valid)
        } else {
            self = .invalid
        }
    }

    /// A time from seconds, at `preferredTimescale` (`CMTimeMakeWithSeconds`).
    ///
    /// NaN gives `invalid`; infinities give the infinite times.
    public init(seconds: Double, preferredTimescale: Int32) {
        if seconds.isNaN || preferredTimescale <= 0 {
            self = .invalid
        } else if seconds == .infinity {
            self = .positiveInfinity
        } else if seconds == -.infinity {
            self = .negativeInfinity
        } else {
            let scaled = (seconds * Double(preferredTimescale)).rounded(.toNearestOrAwayFromZero)
            if scaled >= 9.2e18 {
                self = .positiveInfinity
            } else if scaled <= -9.2e18 {
                self = .negativeInfinity
            } else {
                self.init(value: Int64(scaled), timescale: preferredTimescale)
            }
        }
    }

    /// A numeric time of `nanoseconds` ns, at the nanosecond timescale.
    public init(nanoseconds: Int64) {
        self.init(value: nanoseconds, timescale: Self.nanosecondTimescale)
    }

    init(value: Int64, timescale: Int32, flags: Flags) {
        self.value = value
        self.timescale = timescale
        self.flags = flags
    }

    public static let zero = MediaTime(value: 0, timescale: 1)
    public static let invalid = MediaTime(value: 0, timescale: 0, flags: [])
    public static let indefinite = MediaTime(value: 0, timescale: 0, flags: [.valid, .indefinite])
    public static let positiveInfinity = MediaTime(value: 0, timescale: 0, flags: [.valid, .positiveInfinity])
    public static let negativeInfinity = MediaTime(value: 0, timescale: 0, flags: [.valid, .negativeInfinity])

    public var isValid: Bool { flags.contains(.valid) }
    public var isIndefinite: Bool { isValid && flags.contains(.indefinite) }
    public var isPositiveInfinity: Bool { isValid && flags.contains(.positiveInfinity) }
    public var isNegativeInfinity: Bool { isValid && flags.contains(.negativeInfinity) }
    /// Valid and neither indefinite nor infinite (`CMTIME_IS_NUMERIC`).
    public var isNumeric: Bool {
        isValid && flags.isDisjoint(with: [.indefinite, .positiveInfinity, .negativeInfinity])
    }
    public var hasBeenRounded: Bool { flags.contains(.hasBeenRounded) }

    /// The time in seconds (`CMTimeGetSeconds`): NaN for invalid and indefinite, ±infinity for the
    /// infinite times.
    public var seconds: Double {
        if isNumeric { return Double(value) / Double(timescale) }
        if isPositiveInfinity { return .infinity }
        if isNegativeInfinity { return -.infinity }
        return .nan
    }

    /// The time in whole nanoseconds, rounded half away from zero; nil unless numeric or when it
    /// does not fit in 64 bits.
    public var nanoseconds: Int64? {
        guard isNumeric else { return nil }
        if timescale == Self.nanosecondTimescale { return value }
        return Self.scale(Int128(value), from: timescale, to: Self.nanosecondTimescale, method: .default)
            .flatMap { Int64(exactly: $0) }
    }

    /// This time at another timescale (`CMTimeConvertScale`). Special values are returned unchanged;
    /// an invalid timescale gives `invalid`; a value that no longer fits gives an infinity.
    public func convertScale(_ newTimescale: Int32, method: RoundingMethod = .default) -> MediaTime {
        guard isNumeric else { return self }
        guard newTimescale > 0 else { return .invalid }
        if newTimescale == timescale { return self }
        let numerator = Int128(value) * Int128(newTimescale)
        let rounded = Self.divide(numerator, by: Int128(timescale), method: method)
        guard let newValue = Int64(exactly: rounded) else {
            return rounded > 0 ? .positiveInfinity : .negativeInfinity
        }
        var newFlags = flags
        if rounded * Int128(timescale) != numerator { newFlags.insert(.hasBeenRounded) }
        return MediaTime(value: newValue, timescale: newTimescale, flags: newFlags)
    }

    /// The absolute value (`CMTimeAbsoluteValue`).
    public var magnitude: MediaTime {
        if isNegativeInfinity { return .positiveInfinity }
        guard isNumeric, value < 0 else { return self }
        return MediaTime(value: -value, timescale: timescale, flags: flags)
    }

    /// `value * numerator / denominator` at `target`, rounded; nil when the denominator is zero.
    static func scale(_ value: Int128, from source: Int32, to target: Int32, method: RoundingMethod) -> Int128? {
        guard source > 0 else { return nil }
        return divide(value * Int128(target), by: Int128(source), method: method)
    }

    static func divide(_ numerator: Int128, by denominator: Int128, method: RoundingMethod) -> Int128 {
        precondition(denominator != 0)
        let (quotient, remainder) = numerator.quotientAndRemainder(dividingBy: denominator)
        if remainder == 0 { return quotient }
        let negative = (numerator < 0) != (denominator < 0)
        let awayFromZero = negative ? quotient - 1 : quotient + 1
        switch method {
        case .towardZero:
            return quotient
        case .awayFromZero:
            return awayFromZero
        case .towardPositiveInfinity:
            return negative ? quotient : awayFromZero
        case .towardNegativeInfinity:
            return negative ? awayFromZero : quotient
        case .default:
            let twiceRemainder = remainder.magnitude * 2
            return twiceRemainder >= denominator.magnitude ? awayFromZero : quotient
        }
    }
}

// MARK: - Comparison

extension MediaTime: Comparable, Hashable {
    /// The rank of a time's kind in `CMTimeCompare`'s order.
    private var orderClass: Int {
        if !isValid { return 4 }
        if flags.contains(.negativeInfinity) { return 0 }
        if flags.contains(.indefinite) { return 2 }
        if flags.contains(.positiveInfinity) { return 3 }
        return 1
    }

    public static func < (lhs: MediaTime, rhs: MediaTime) -> Bool {
        compare(lhs, rhs) < 0
    }

    public static func == (lhs: MediaTime, rhs: MediaTime) -> Bool {
        compare(lhs, rhs) == 0
    }

    /// -1, 0 or 1 as `CMTimeCompare`: numeric times compare exactly across timescales.
    public static func compare(_ lhs: MediaTime, _ rhs: MediaTime) -> Int {
        let (lc, rc) = (lhs.orderClass, rhs.orderClass)
        if lc != rc { return lc < rc ? -1 : 1 }
        guard lc == 1 else { return 0 }
        let left = Int128(lhs.value) * Int128(rhs.timescale)
        let right = Int128(rhs.value) * Int128(lhs.timescale)
        return left < right ? -1 : (left == right ? 0 : 1)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(orderClass)
        guard isNumeric else { return }
        // Equal rationals hash alike: reduce to lowest terms.
        let divisor = Self.gcd(Int128(value).magnitude, UInt128(timescale))
        hasher.combine(Int128(value) / Int128(divisor))
        hasher.combine(Int128(timescale) / Int128(divisor))
    }

    static func gcd(_ a: UInt128, _ b: UInt128) -> UInt128 {
        var (x, y) = (a, b)
        while y != 0 { (x, y) = (y, x % y) }
        return x == 0 ? 1 : x
    }
}

// MARK: - Arithmetic

extension MediaTime {
    /// The sum (`CMTimeAdd`): exact at the least common multiple of the timescales where that fits.
    public static func + (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        if let special = specialSum(lhs, rhs) { return special }
        return combine(lhs, rhs, +)
    }

    /// The difference (`CMTimeSubtract`).
    public static func - (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        lhs + (-rhs)
    }

    public static prefix func - (time: MediaTime) -> MediaTime {
        if time.isPositiveInfinity { return .negativeInfinity }
        if time.isNegativeInfinity { return .positiveInfinity }
        guard time.isNumeric else { return time }
        guard time.value != .min else { return .positiveInfinity }
        return MediaTime(value: -time.value, timescale: time.timescale, flags: time.flags)
    }

    public static func += (lhs: inout MediaTime, rhs: MediaTime) { lhs = lhs + rhs }
    public static func -= (lhs: inout MediaTime, rhs: MediaTime) { lhs = lhs - rhs }

    /// The time multiplied by an integer (`CMTimeMultiply`).
    public static func * (lhs: MediaTime, rhs: Int64) -> MediaTime {
        lhs.multiplied(byRatio: rhs, 1)
    }

    /// The time multiplied by `multiplier / divisor` (`CMTimeMultiplyByRatio`): exact where the reduced
    /// result fits a timescale, otherwise rounded at this time's timescale; a zero divisor gives
    /// `invalid`.
    public func multiplied(byRatio multiplier: Int64, _ divisor: Int64) -> MediaTime {
        guard divisor != 0 else { return .invalid }
        let negative = (multiplier < 0) != (divisor < 0)
        if isPositiveInfinity || isNegativeInfinity {
            if multiplier == 0 { return .invalid }
            return (isPositiveInfinity != negative) ? .positiveInfinity : .negativeInfinity
        }
        guard isNumeric else { return self }
        let numerator = Int128(value) * Int128(multiplier)
        var denominator = Int128(timescale) * Int128(divisor)
        var exactNumerator = denominator < 0 ? -numerator : numerator
        denominator = denominator.magnitude > 0 ? Int128(denominator.magnitude) : 1
        let common = Int128(Self.gcd(exactNumerator.magnitude, UInt128(denominator)))
        exactNumerator /= common
        denominator /= common
        if denominator <= Int128(Self.maxTimescale), let exactValue = Int64(exactly: exactNumerator) {
            return MediaTime(value: exactValue, timescale: Int32(denominator), flags: flags)
        }
        let result = Self.divide(numerator, by: Int128(divisor), method: .default)
        guard let newValue = Int64(exactly: result) else {
            return result > 0 ? .positiveInfinity : .negativeInfinity
        }
        var newFlags = flags
        if result * Int128(divisor) != numerator { newFlags.insert(.hasBeenRounded) }
        return MediaTime(value: newValue, timescale: timescale, flags: newFlags)
    }

    /// The time multiplied by a real factor (`CMTimeMultiplyByFloat64`), kept at its timescale.
    public func multiplied(by factor: Double) -> MediaTime {
        guard factor.isFinite else { return .invalid }
        if isPositiveInfinity || isNegativeInfinity {
            if factor == 0 { return .invalid }
            return (isPositiveInfinity == (factor > 0)) ? .positiveInfinity : .negativeInfinity
        }
        guard isNumeric else { return self }
        let product = (Double(value) * factor).rounded(.toNearestOrAwayFromZero)
        guard product.magnitude < 9.2e18 else { return product > 0 ? .positiveInfinity : .negativeInfinity }
        var newFlags = flags
        if product != Double(value) * factor { newFlags.insert(.hasBeenRounded) }
        return MediaTime(value: Int64(product), timescale: timescale, flags: newFlags)
    }

    /// The smaller of two times (`CMTimeMinimum`).
    public static func minimum(_ a: MediaTime, _ b: MediaTime) -> MediaTime { a <= b ? a : b }
    /// The larger of two times (`CMTimeMaximum`).
    public static func maximum(_ a: MediaTime, _ b: MediaTime) -> MediaTime { a >= b ? a : b }

    private static func specialSum(_ lhs: MediaTime, _ rhs: MediaTime) -> MediaTime? {
        if !lhs.isValid || !rhs.isValid { return .invalid }
        let infinities = (
            lhs.isPositiveInfinity || rhs.isPositiveInfinity, lhs.isNegativeInfinity || rhs.isNegativeInfinity
        )
        switch infinities {
        case (true, true): return .invalid
        case (true, false): return .positiveInfinity
        case (false, true): return .negativeInfinity
        case (false, false): break
        }
        if lhs.isIndefinite || rhs.isIndefinite { return .indefinite }
        return nil
    }

    private static func combine(_ lhs: MediaTime, _ rhs: MediaTime, _ op: (Int128, Int128) -> Int128) -> MediaTime {
        var roundedFlag: Flags = lhs.flags.union(rhs.flags).intersection(.hasBeenRounded)
        let divisor = gcd(UInt128(lhs.timescale), UInt128(rhs.timescale))
        let lcm = Int128(lhs.timescale) / Int128(divisor) * Int128(rhs.timescale)
        let timescale: Int32
        let exact: Int128
        if lcm <= Int128(maxTimescale) {
            timescale = Int32(lcm)
            exact = op(
                Int128(lhs.value) * (lcm / Int128(lhs.timescale)), Int128(rhs.value) * (lcm / Int128(rhs.timescale)))
        } else {
            timescale = maxTimescale
            let left = divide(Int128(lhs.value) * Int128(maxTimescale), by: Int128(lhs.timescale), method: .default)
            let right = divide(Int128(rhs.value) * Int128(maxTimescale), by: Int128(rhs.timescale), method: .default)
            exact = op(left, right)
            roundedFlag.insert(.hasBeenRounded)
        }
        guard let value = Int64(exactly: exact) else {
            return exact > 0 ? .positiveInfinity : .negativeInfinity
        }
        return MediaTime(value: value, timescale: timescale, flags: Flags.valid.union(roundedFlag))
    }
}

// MARK: - Description

extension MediaTime: CustomStringConvertible {
    /// Seconds with nanosecond precision, or the name of a special value.
    public var description: String {
        if !isValid { return "invalid" }
        if isIndefinite { return "indefinite" }
        if isPositiveInfinity { return "+infinity" }
        if isNegativeInfinity { return "-infinity" }
        let ns = Int128(value) * 1_000_000_000 / Int128(timescale)
        let sign = ns < 0 ? "-" : ""
        let whole = ns.magnitude / 1_000_000_000
        let fraction = String(ns.magnitude % 1_000_000_000)
        let padded = String(repeating: "0", count: 9 - fraction.count) + fraction
        return "\(sign)\(whole).\(padded)s"
    }
}

// MARK: - Codable

extension MediaTime: Codable {
    private enum CodingKeys: String, CodingKey { case value, timescale, special }

    /// Numeric times encode as `{"value": v, "timescale": t}`, special ones as
    /// `{"special": "indefinite" | "+infinity" | "-infinity" | "invalid"}`.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if isNumeric {
            try container.encode(value, forKey: .value)
            try container.encode(timescale, forKey: .timescale)
        } else {
            try container.encode(description, forKey: .special)
        }
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let special = try container.decodeIfPresent(String.self, forKey: .special) {
            switch special {
            case "invalid": self = .invalid
            case "indefinite": self = .indefinite
            case "+infinity": self = .positiveInfinity
            case "-infinity": self = .negativeInfinity
            default:
                throw DecodingError.dataCorruptedError(
                    forKey: .special, in: container,
                    debugDescription:
                        "unknown special time \"\(special)\"; expected invalid, indefinite, +infinity or -infinity")
            }
            return
        }
        let value = try container.decode(Int64.self, forKey: .value)
        let timescale = try container.decode(Int32.self, forKey: .timescale)
        guard timescale > 0 else {
            throw DecodingError.dataCorruptedError(
                forKey: .timescale, in: container, debugDescription: "timescale must be positive, got \(timescale)")
        }
        self.init(value: value, timescale: timescale)
    }
}
