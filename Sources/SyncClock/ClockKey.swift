#if canImport(Glibc)
    import Glibc
#endif

/// The key a clock server and its clients share to authenticate Lockstep time packets
/// (HMAC-SHA256, see `LockstepTimePacket`).
///
/// Its bytes never leave it in text: `description` names only its length, so a key cannot end up in
/// a log by accident.
public struct ClockKey: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The shortest key accepted: 128 bits.
    public static let minimumLength = 16

    let bytes: [UInt8]

    /// A key of these bytes.
    ///
    /// - Throws: `SyncClockError.invalidKey` when shorter than `minimumLength` bytes.
    public init(bytes: [UInt8]) throws(SyncClockError) {
        guard bytes.count >= Self.minimumLength else {
            throw .invalidKey("it has \(bytes.count) bytes; a clock key needs at least \(Self.minimumLength)")
        }
        self.bytes = bytes
    }

    /// The key in a file: its raw bytes, or, when the whole file (surrounding whitespace aside) is an
    /// even number of hexadecimal digits, the bytes they spell. Either way at least 16 bytes.
    ///
    /// Generate one with `head -c 32 /dev/urandom > clock.key` or `openssl rand -hex 32 > clock.key`.
    ///
    /// - Throws: `SyncClockError.invalidKey` naming the file (never its content) when it cannot be
    ///   read or is too short.
    public init(contentsOfFile path: String) throws(SyncClockError) {
        guard let content = Self.read(path) else {
            throw .invalidKey("cannot read the key file \(path): \(String(cString: strerror(errno)))")
        }
        let key = Self.hexDecoded(content) ?? content
        do {
            try self.init(bytes: key)
        } catch {
            throw .invalidKey("the key file \(path) is too short: \(key.count) bytes, at least \(Self.minimumLength)")
        }
    }

    public var description: String { "clock key (\(bytes.count) bytes)" }
    public var debugDescription: String { description }
    /// No children: `dump` and debuggers show no bytes either.
    public var customMirror: Mirror { Mirror(self, children: [:]) }

    private static func read(_ path: String) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var content: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = fread(&buffer, 1, buffer.count, file)
            content += buffer[..<count]
            if count < buffer.count { return ferror(file) == 0 ? content : nil }
            // A key file is small; anything this large is the wrong file.
            if content.count > 1 << 20 { return content }
        }
    }

    /// The bytes `text` spells in hexadecimal, or nil when it is not just hex digits.
    static func hexDecoded(_ text: [UInt8]) -> [UInt8]? {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        guard let first = text.firstIndex(where: { !isSpace($0) }) else { return nil }
        let last = text.lastIndex(where: { !isSpace($0) })!
        let digits = text[first...last]
        guard digits.count % 2 == 0 else { return nil }
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
            default: return nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = digits.startIndex
        while index < digits.endIndex {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}
