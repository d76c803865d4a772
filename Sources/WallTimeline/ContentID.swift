/// A media file named by what it holds: its SHA-256 and its size. Two files with one ID are the
/// same file, wherever they came from, so a node may take it from any peer that holds it.
public struct ContentID: Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    /// 64 lowercase hex digits, as `sha256sum` prints them.
    public let sha256: String
    public let size: UInt64

    /// The largest file a wall distributes: 1 TiB.
    public static let largestSize: UInt64 = 1 << 40

    /// Nil unless `sha256` is 64 lowercase hex digits and `size` at most `largestSize`.
    public init?(sha256: String, size: UInt64) {
        guard Self.isDigest(sha256), size <= Self.largestSize else { return nil }
        self.sha256 = sha256
        self.size = size
    }

    /// Whether `text` is a SHA-256 as IDs hold it: 64 lowercase hex digits, and nothing else (it is
    /// a file name in the store).
    public static func isDigest(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    public var description: String { "sha256:\(sha256.prefix(12))… (\(size) bytes)" }

    public static func < (a: ContentID, b: ContentID) -> Bool { (a.sha256, a.size) < (b.sha256, b.size) }

    private enum CodingKeys: String, CodingKey { case sha256, size }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let digest = try container.decode(String.self, forKey: .sha256)
        let size = try container.decode(UInt64.self, forKey: .size)
        guard let id = ContentID(sha256: digest, size: size) else {
            throw DecodingError.dataCorruptedError(
                forKey: .sha256, in: container,
                debugDescription: "a content ID is a SHA-256 of 64 lowercase hex digits and a size up to 1 TiB")
        }
        self = id
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(sha256, forKey: .sha256)
        try container.encode(size, forKey: .size)
    }
}
