/// A playback rate as an exact fraction (1, 1/2, 2, -1), so that where the timeline is after any
/// time at any rate is exact.
public struct PlaybackRate: Hashable, Sendable, Codable, CustomStringConvertible {
    public let numerator: Int32
    public let denominator: Int32

    /// - Precondition: `denominator` > 0.
    public init(_ numerator: Int32, _ denominator: Int32 = 1) {
        precondition(denominator > 0, "a rate's denominator is positive")
        self.numerator = numerator
        self.denominator = denominator
    }

    public static let normal = PlaybackRate(1)

    /// The rate as a float, for the player.
    public var floatValue: Float { Float(numerator) / Float(denominator) }

    var rational: Rational { Rational(Int128(numerator), Int128(denominator)) }

    public var description: String { denominator == 1 ? "\(numerator)" : "\(numerator)/\(denominator)" }

    private enum CodingKeys: String, CodingKey { case numerator, denominator }

    /// A rate as data: a denominator that is not positive is refused here, before any arithmetic.
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let numerator = try container.decode(Int32.self, forKey: .numerator)
        let denominator = try container.decode(Int32.self, forKey: .denominator)
        guard denominator > 0 else {
            throw DecodingError.dataCorruptedError(
                forKey: .denominator, in: container, debugDescription: "a rate's denominator must be positive")
        }
        self.init(numerator, denominator)
    }
}
