/// Open Sound Control 1.0 packets, as show controllers (QLab, TouchOSC, Bitfocus Companion,
/// WATCHOUT) send them over UDP: a message (an address, a type tag string, arguments) or a bundle
/// of them with a time tag.
///
/// Decoding checks every length against what is left, and bounds the size, the nesting and the
/// number of arguments, so that no datagram can make it read out of bounds, allocate much or
/// recurse deeply: anything else is an `OSCError` saying what was wrong and where.
public enum OSCPacket: Hashable, Sendable {
    case message(OSCMessage)
    case bundle(timeTag: OSCTimeTag, elements: [OSCPacket])

    /// The largest packet taken: far more than a cue needs, far less than a datagram can hold.
    public static let largestSize = 8192
    /// Bundles within bundles, at most.
    public static let deepestNesting = 4
    public static let mostArguments = 64

    /// Decodes one packet filling `bytes` exactly.
    public init(decoding bytes: [UInt8]) throws(OSCError) {
        guard bytes.count <= Self.largestSize else { throw .tooLarge(bytes.count) }
        var reader = OSCReader(bytes: bytes[...])
        self = try Self.decode(&reader, depth: 0)
    }

    private static func decode(_ reader: inout OSCReader, depth: Int) throws(OSCError) -> OSCPacket {
        guard !reader.isAtEnd else { throw .malformed("an empty packet") }
        guard reader.count % 4 == 0 else { throw .malformed("a packet of \(reader.count) bytes, not a multiple of 4") }
        if reader.peek() == UInt8(ascii: "#") {
            let tag = try reader.string()
            guard tag == "#bundle" else { throw .malformed("\"\(tag)\" is neither an address nor #bundle") }
            guard depth < deepestNesting else { throw .malformed("bundles nested over \(deepestNesting) deep") }
            let timeTag = OSCTimeTag(rawValue: try reader.uint64())
            var elements: [OSCPacket] = []
            while !reader.isAtEnd {
                let size = Int(try reader.int32())
                guard size > 0, size % 4 == 0, size <= reader.count else {
                    throw .malformed("a bundle element of \(size) bytes where \(reader.count) remain")
                }
                var element = try reader.take(size)
                elements.append(try decode(&element, depth: depth + 1))
                guard elements.count <= mostArguments else { throw .malformed("over \(mostArguments) bundle elements") }
            }
            return .bundle(timeTag: timeTag, elements: elements)
        }
        let address = try reader.string()
        guard address.hasPrefix("/") else { throw .malformed("the address \"\(address)\" does not start with /") }
        // OSC 1.0 allows a message without a type tag string: it has no arguments we could read.
        guard !reader.isAtEnd else { return .message(OSCMessage(address: address, arguments: [])) }
        let tags = try reader.string()
        guard tags.first == "," else { throw .malformed("\(address): the type tags \"\(tags)\" do not start with ,") }
        guard tags.count - 1 <= mostArguments else { throw .malformed("\(address): over \(mostArguments) arguments") }
        var arguments: [OSCArgument] = []
        for tag in tags.dropFirst() {
            switch tag {
            case "i": arguments.append(.int32(try reader.int32()))
            case "f": arguments.append(.float32(Float(bitPattern: UInt32(bitPattern: try reader.int32()))))
            case "s", "S": arguments.append(.string(try reader.string()))
            case "b":
                let size = Int(try reader.int32())
                guard size >= 0, size <= reader.count else {
                    throw .malformed("\(address): a blob of \(size) bytes where \(reader.count) remain")
                }
                let blob = try reader.take(size)
                try reader.skipPadding(after: size)
                arguments.append(.blob(Array(blob.bytes)))
            case "h": arguments.append(.int64(Int64(bitPattern: try reader.uint64())))
            case "d": arguments.append(.double(Double(bitPattern: try reader.uint64())))
            case "t": arguments.append(.timeTag(OSCTimeTag(rawValue: try reader.uint64())))
            case "c", "r", "m": arguments.append(.int32(try reader.int32()))
            case "T": arguments.append(.bool(true))
            case "F": arguments.append(.bool(false))
            case "N", "I": arguments.append(.nil)
            default: throw .malformed("\(address): an argument of type \"\(tag)\", which this input does not read")
            }
        }
        guard reader.isAtEnd else { throw .malformed("\(address): \(reader.count) bytes after the last argument") }
        return .message(OSCMessage(address: address, arguments: arguments))
    }

    /// The packet's bytes.
    public var encoded: [UInt8] {
        var bytes: [UInt8] = []
        switch self {
        case .message(let message):
            OSCWriter.string(message.address, into: &bytes)
            OSCWriter.string("," + message.arguments.map(\.tag).joined(), into: &bytes)
            for argument in message.arguments { argument.encode(into: &bytes) }
        case .bundle(let timeTag, let elements):
            OSCWriter.string("#bundle", into: &bytes)
            OSCWriter.uint64(timeTag.rawValue, into: &bytes)
            for element in elements {
                let inner = element.encoded
                OSCWriter.int32(Int32(inner.count), into: &bytes)
                bytes += inner
            }
        }
        return bytes
    }

    /// Every message in the packet, each with the time tag of the innermost bundle holding it
    /// (nil outside any bundle).
    public var messages: [(message: OSCMessage, timeTag: OSCTimeTag?)] {
        switch self {
        case .message(let message): return [(message, nil)]
        case .bundle(let timeTag, let elements):
            return elements.flatMap { element in element.messages.map { ($0.message, $0.timeTag ?? timeTag) } }
        }
    }
}

public struct OSCMessage: Hashable, Sendable {
    public var address: String
    public var arguments: [OSCArgument]

    public init(address: String, arguments: [OSCArgument] = []) {
        self.address = address
        self.arguments = arguments
    }
}

public enum OSCArgument: Hashable, Sendable {
    case int32(Int32)
    case float32(Float)
    case string(String)
    case blob([UInt8])
    case int64(Int64)
    case double(Double)
    case timeTag(OSCTimeTag)
    case bool(Bool)
    case `nil`

    var tag: String {
        switch self {
        case .int32: return "i"
        case .float32: return "f"
        case .string: return "s"
        case .blob: return "b"
        case .int64: return "h"
        case .double: return "d"
        case .timeTag: return "t"
        case .bool(let value): return value ? "T" : "F"
        case .nil: return "N"
        }
    }

    func encode(into bytes: inout [UInt8]) {
        switch self {
        case .int32(let value): OSCWriter.int32(value, into: &bytes)
        case .float32(let value): OSCWriter.int32(Int32(bitPattern: value.bitPattern), into: &bytes)
        case .string(let value): OSCWriter.string(value, into: &bytes)
        case .blob(let value):
            OSCWriter.int32(Int32(value.count), into: &bytes)
            bytes += value
            bytes += [UInt8](repeating: 0, count: (4 - value.count % 4) % 4)
        case .int64(let value): OSCWriter.uint64(UInt64(bitPattern: value), into: &bytes)
        case .double(let value): OSCWriter.uint64(value.bitPattern, into: &bytes)
        case .timeTag(let value): OSCWriter.uint64(value.rawValue, into: &bytes)
        case .bool, .nil: break
        }
    }

    /// The argument as a number, if it is one (a button's 1 on press, 0 on release).
    public var number: Double? {
        switch self {
        case .int32(let value): return Double(value)
        case .float32(let value): return Double(value)
        case .int64(let value): return Double(value)
        case .double(let value): return value
        case .bool(let value): return value ? 1 : 0
        default: return nil
        }
    }
}

/// An OSC time tag: NTP's 64-bit fixed point, seconds since 1900 in the high 32 bits. The value 1
/// means "immediately".
public struct OSCTimeTag: Hashable, Sendable {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let immediately = OSCTimeTag(rawValue: 1)
    /// Seconds from NTP's epoch (1900) to Unix's (1970).
    static let unixOffset: UInt64 = 2_208_988_800

    /// Nanoseconds since 1970 (UTC), or nil for "immediately" or a time before 1970.
    public var unixNanoseconds: Int64? {
        guard rawValue != 1 else { return nil }
        let seconds = rawValue >> 32
        guard seconds >= Self.unixOffset else { return nil }
        let fraction = ((rawValue & 0xFFFF_FFFF) * 1_000_000_000) >> 32
        return Int64(seconds - Self.unixOffset) * 1_000_000_000 + Int64(fraction)
    }

    public init(unixNanoseconds: Int64) {
        let seconds = UInt64(unixNanoseconds / 1_000_000_000) + Self.unixOffset
        let fraction = (UInt64(unixNanoseconds % 1_000_000_000) << 32) / 1_000_000_000
        rawValue = seconds << 32 | fraction
    }
}

public enum OSCError: Error, Hashable, CustomStringConvertible {
    case tooLarge(Int)
    case malformed(String)

    public var description: String {
        switch self {
        case .tooLarge(let size): return "an OSC packet of \(size) bytes (at most \(OSCPacket.largestSize))"
        case .malformed(let reason): return "malformed OSC: \(reason)"
        }
    }
}

/// Reads big-endian OSC fields from a slice, never past its end.
struct OSCReader {
    var bytes: ArraySlice<UInt8>

    var isAtEnd: Bool { bytes.isEmpty }
    var count: Int { bytes.count }
    func peek() -> UInt8? { bytes.first }

    mutating func take(_ count: Int) throws(OSCError) -> OSCReader {
        guard count >= 0, count <= bytes.count else {
            throw .malformed("\(count) bytes wanted where \(bytes.count) remain")
        }
        let taken = bytes.prefix(count)
        bytes = bytes.dropFirst(count)
        return OSCReader(bytes: taken)
    }

    mutating func skipPadding(after size: Int) throws(OSCError) {
        _ = try take((4 - size % 4) % 4)
    }

    mutating func int32() throws(OSCError) -> Int32 {
        let field = try take(4).bytes
        return field.reduce(Int32(0)) { $0 << 8 | Int32($1) }
    }

    mutating func uint64() throws(OSCError) -> UInt64 {
        let field = try take(8).bytes
        return field.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    /// A NUL-terminated string padded to a multiple of 4 bytes; UTF-8.
    mutating func string() throws(OSCError) -> String {
        guard let end = bytes.firstIndex(of: 0) else { throw .malformed("a string without its terminating NUL") }
        let length = end - bytes.startIndex
        let text = try take(length).bytes
        _ = try take(1)
        try skipPadding(after: length + 1)
        guard let string = String(validating: text, as: UTF8.self) else { throw .malformed("a string that is not UTF-8") }
        return string
    }
}

enum OSCWriter {
    static func int32(_ value: Int32, into bytes: inout [UInt8]) {
        let raw = UInt32(bitPattern: value)
        bytes += [UInt8(raw >> 24), UInt8(raw >> 16 & 0xFF), UInt8(raw >> 8 & 0xFF), UInt8(raw & 0xFF)]
    }

    static func uint64(_ value: UInt64, into bytes: inout [UInt8]) {
        int32(Int32(bitPattern: UInt32(value >> 32)), into: &bytes)
        int32(Int32(bitPattern: UInt32(value & 0xFFFF_FFFF)), into: &bytes)
    }

    static func string(_ value: String, into bytes: inout [UInt8]) {
        bytes += Array(value.utf8) + [0]
        bytes += [UInt8](repeating: 0, count: (4 - bytes.count % 4) % 4)
    }
}
