/// Splits a byte stream into lines of text (`\n` or `\r\n`), as a show-control TCP sender writes
/// them, with a bound on a line's length so that a sender can never make a reader hold more.
///
/// Blank lines (spaces, tabs and `\r` only) are skipped: a terminal's stray Enter is no command.
public struct LineReader: Sendable {
    /// The longest line, in bytes, without its end.
    public let longest: Int
    private var pending: [UInt8] = []

    public init(longest: Int) {
        self.longest = longest
    }

    /// Whether part of a line has arrived without its end.
    public var hasPartialLine: Bool { !pending.isEmpty }

    /// The lines `bytes` completes, each without its end; throws once a line grows past `longest`
    /// (the reader is then spent: the connection ends).
    public mutating func feed(_ bytes: some Sequence<UInt8>) throws(LineTooLong) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                if pending.last == UInt8(ascii: "\r") { pending.removeLast() }
                guard pending.count <= longest else { throw LineTooLong(longest: longest) }
                if !pending.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { lines.append(pending) }
                pending.removeAll(keepingCapacity: true)
                continue
            }
            // One more than `longest` may be a `\r` before the end.
            guard pending.count <= longest else { throw LineTooLong(longest: longest) }
            pending.append(byte)
        }
        if pending.count > longest, pending.last != UInt8(ascii: "\r") { throw LineTooLong(longest: longest) }
        return lines
    }
}

/// A line longer than a reader takes.
public struct LineTooLong: Error, Hashable, CustomStringConvertible {
    public let longest: Int
    public var description: String { "a line over \(longest) bytes" }
}
