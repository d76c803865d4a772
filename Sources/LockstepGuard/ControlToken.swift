import Foundation

/// The shared secret every control request carries as `Authorization: Bearer TOKEN`.
///
/// It lives in a file named by the config's `control-token-file`, so the config itself can be
/// copied around and checked in; the token is never logged or printed.
public struct ControlToken: Sendable, Hashable {
    /// Shorter tokens are refused: a token is only as good as it is hard to guess.
    public static let minimumLength = 16

    /// The token's bytes (printable ASCII, no white space).
    public let bytes: [UInt8]

    /// Reads the token from `path`: the file's text with surrounding white space removed.
    public init(contentsOfFile path: String) throws(ControlTokenError) {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .unreadable(file: path, reason: (error as NSError).localizedDescription)
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        try self.init(text, file: path)
    }

    /// A token given as text; `file` names where it came from in errors.
    public init(_ text: String, file: String = "the token") throws(ControlTokenError) {
        guard text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw .invalid(file: file, reason: "a token is printable ASCII with no white space inside")
        }
        guard text.utf8.count >= Self.minimumLength else {
            throw .invalid(
                file: file,
                reason: "a token needs at least \(Self.minimumLength) characters, this one has \(text.utf8.count)")
        }
        bytes = Array(text.utf8)
    }

    /// The `Authorization` header value that carries this token.
    public var authorization: String { "Bearer " + String(decoding: bytes, as: UTF8.self) }

    /// Whether an `Authorization` header carries this token, compared over the whole of what was
    /// given in time that does not depend on where the first difference lies. A difference in
    /// length is kept whole, never narrowed: the token followed by anything is refused.
    public func accepts(authorization header: String?) -> Bool {
        guard let header, header.hasPrefix("Bearer ") else { return false }
        let given = Array(header.utf8.dropFirst("Bearer ".utf8.count))
        var difference = given.count ^ bytes.count
        for index in 0..<max(given.count, bytes.count) {
            let wanted = index < bytes.count ? bytes[index] : 0
            let got = index < given.count ? given[index] : 0
            difference |= Int(wanted ^ got)
        }
        return difference == 0
    }
}

/// Why a control token could not be read.
public enum ControlTokenError: Error, Hashable, CustomStringConvertible {
    case unreadable(file: String, reason: String)
    case invalid(file: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let file, let reason): return "\(file): cannot read the control token: \(reason)"
        case .invalid(let file, let reason): return "\(file): not a usable control token: \(reason)"
        }
    }
}
