import Foundation
import WallTimeline

/// The SHA-256 of each fixed-size piece (chunk) of a file: what lets a node check every chunk as it
/// arrives, serve its peers the chunks it has checked while it still receives the others, and blame
/// a damaged chunk on the one source that sent it.
///
/// The list is not trusted on its word: a chunk is kept when it matches the list, and the file only
/// when its whole SHA-256 matches its ID. A list that does not describe the file (every chunk matched
/// it, the file did not match its ID) is thrown away with the file, and its sender no longer asked.
///
/// Chunks are `chunkSize` bytes (the last one shorter), a size every node derives from the file's
/// alone (`chunkSize(forFileOf:)`), so two lists of one file never disagree on where a chunk starts.
public struct ChunkList: Sendable, Hashable, Codable {
    public let id: ContentID
    public let chunkSize: UInt64
    /// One SHA-256 per chunk, in order, 64 lowercase hex digits each.
    public let digests: [String]
    /// The SHA-256 of the digests one after the other: names the list in a short answer (which
    /// chunks a source holds, by which list) without sending the list again.
    public let fingerprint: String

    /// The smallest chunk: a quarter of a second of a 200 Mbit/s link, small enough for a wall's
    /// copies to spread chunk by chunk, large enough that a request's overhead is small beside it.
    public static let smallestChunk: UInt64 = 4 << 20
    /// The most chunks a file is cut into: its list stays under 4.5 MB of JSON, a 1 TiB file included.
    public static let mostChunks: UInt64 = 1 << 16

    /// The chunk size of a file of `size` bytes: `smallestChunk`, doubled until the file is at most
    /// `mostChunks` chunks.
    public static func chunkSize(forFileOf size: UInt64) -> UInt64 {
        var chunk = smallestChunk
        while size > chunk * mostChunks { chunk *= 2 }
        return chunk
    }

    /// How many chunks a file of `size` bytes is cut into (none for an empty file).
    public static func count(forFileOf size: UInt64) -> Int {
        let chunk = chunkSize(forFileOf: size)
        return Int((size + chunk - 1) / chunk)
    }

    /// A list for `id`, refused unless it has the chunk size and count `id`'s size gives, and every
    /// digest is a SHA-256.
    public init(id: ContentID, digests: [String]) throws(ContentError) {
        guard digests.count == Self.count(forFileOf: id.size) else {
            throw .corrupt(
                id, "its chunk list has \(digests.count) chunks where its size makes \(Self.count(forFileOf: id.size))")
        }
        guard digests.allSatisfy(ContentID.isDigest) else {
            throw .corrupt(id, "its chunk list holds something that is not a SHA-256")
        }
        self.id = id
        chunkSize = Self.chunkSize(forFileOf: id.size)
        self.digests = digests
        fingerprint = try ContentDigest.sha256(of: Data(digests.joined().utf8))
    }

    public var count: Int { digests.count }

    /// The bytes of chunk `index` in the file.
    public func range(of index: Int) -> Range<UInt64> {
        let start = UInt64(index) * chunkSize
        return start..<min(start + chunkSize, id.size)
    }

    /// The chunks holding any byte of `bytes`.
    public func chunks(covering bytes: Range<UInt64>) -> Range<Int> {
        guard !bytes.isEmpty else { return 0..<0 }
        let first = Int(bytes.lowerBound / chunkSize)
        let last = Int((min(bytes.upperBound, id.size) - 1) / chunkSize)
        return first..<max(first, last + 1)
    }

    private enum CodingKeys: String, CodingKey { case id, chunkSize, digests }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let id = try container.decode(ContentID.self, forKey: .id)
        let digests = try container.decode([String].self, forKey: .digests)
        // The chunk size is derived, never taken: a list that names another is of no use here.
        if let size = try container.decodeIfPresent(UInt64.self, forKey: .chunkSize),
            size != Self.chunkSize(forFileOf: id.size)
        {
            throw DecodingError.dataCorruptedError(
                forKey: .chunkSize, in: container,
                debugDescription: "a file of \(id.size) bytes is cut in chunks of \(Self.chunkSize(forFileOf: id.size))"
            )
        }
        do {
            self = try ChunkList(id: id, digests: digests)
        } catch {
            throw DecodingError.dataCorruptedError(forKey: .digests, in: container, debugDescription: "\(error)")
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(chunkSize, forKey: .chunkSize)
        try container.encode(digests, forKey: .digests)
    }
}

/// A set of a file's chunks (those a node has checked, those a peer offers), as bits.
///
/// Coded as a string of hex digits, four chunks a digit, the first chunk the highest bit of the first
/// digit: 65,536 chunks take 16 KB on the wire.
public struct ChunkSet: Sendable, Hashable, Codable, CustomStringConvertible {
    public let count: Int
    private var words: [UInt64]

    /// An empty set of `count` chunks, or a full one.
    public init(count: Int, full: Bool = false) {
        self.count = max(0, count)
        words = Array(repeating: 0, count: (self.count + 63) / 64)
        if full { for index in 0..<self.count { insert(index) } }
    }

    public func contains(_ index: Int) -> Bool {
        guard index >= 0, index < count else { return false }
        return words[index / 64] & (1 << UInt64(index % 64)) != 0
    }

    public mutating func insert(_ index: Int) {
        guard index >= 0, index < count else { return }
        words[index / 64] |= 1 << UInt64(index % 64)
    }

    public mutating func remove(_ index: Int) {
        guard index >= 0, index < count else { return }
        words[index / 64] &= ~(1 << UInt64(index % 64))
    }

    /// How many chunks the set holds.
    public var cardinality: Int { words.reduce(0) { $0 + $1.nonzeroBitCount } }
    public var isFull: Bool { cardinality == count }
    public var isEmpty: Bool { words.allSatisfy { $0 == 0 } }

    /// The chunks held, in order.
    public var members: [Int] { (0..<count).filter(contains) }

    public var description: String { "\(cardinality) of \(count) chunks" }

    /// The set as hex digits (see the type's comment).
    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity((count + 3) / 4)
        for start in stride(from: 0, to: count, by: 4) {
            var nibble = 0
            for bit in 0..<4 where contains(start + bit) { nibble |= 8 >> bit }
            text.append(digits[nibble])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The set of `count` chunks `hex` codes; nil unless `count` is one a file can have, `hex` is
    /// exactly the digits that many take, and it names no chunk past the last.
    public init?(count: Int, hex: String) {
        guard (0...Int(ChunkList.mostChunks)).contains(count), hex.utf8.count == (count + 3) / 4 else { return nil }
        self.init(count: count)
        for (position, character) in hex.utf8.enumerated() {
            let nibble: Int
            switch character {
            case 48...57: nibble = Int(character) - 48
            case 97...102: nibble = Int(character) - 87
            default: return nil
            }
            for bit in 0..<4 where nibble & (8 >> bit) != 0 {
                let index = position * 4 + bit
                guard index < count else { return nil }
                insert(index)
            }
        }
    }

    private enum CodingKeys: String, CodingKey { case count, chunks }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let count = try container.decode(Int.self, forKey: .count)
        let hex = try container.decode(String.self, forKey: .chunks)
        // The count comes from a peer: nothing is computed from it before it is known to be small.
        guard (0...Int(ChunkList.mostChunks)).contains(count) else {
            throw DecodingError.dataCorruptedError(
                forKey: .count, in: container,
                debugDescription: "a chunk set of \(count) chunks: a file has 0 to \(ChunkList.mostChunks)")
        }
        guard let set = ChunkSet(count: count, hex: hex) else {
            throw DecodingError.dataCorruptedError(
                forKey: .chunks, in: container,
                debugDescription:
                    "a chunk set of \(count) chunks is \((count + 3) / 4) lowercase hex digits naming none past the last, "
                    + "not \(hex.utf8.count) characters")
        }
        self = set
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(count, forKey: .count)
        try container.encode(hex, forKey: .chunks)
    }
}
