import Foundation
import HTTPTypes
import Hummingbird
import LockstepLocks
import NIOCore
import WallTimeline

/// Serves complete files by their SHA-256 (`GET /content/<sha256>`, `Range: bytes=N-` honoured):
/// a node to its peers, `wallctl push` to the wall. Never a partial file: what a lookup finds is
/// whole and verified. At most `limit` transfers at once; past that a 503 sends the asker to
/// another source, so that the wall's copies come from each other and an uplink carries a file
/// about once.
public final class ContentServer: Sendable {
    /// The complete file holding `sha256`, and its size; nil when not held.
    public typealias Lookup = @Sendable (_ sha256: String) -> (path: String, size: UInt64)?

    let lookup: Lookup
    let limit: Int
    private let active = Mutex(0)
    /// Bytes sent, for reports and benchmarks.
    private let sent = Mutex(UInt64(0))

    public init(limit: Int, lookup: @escaping Lookup) {
        self.limit = limit
        self.lookup = lookup
    }

    public var bytesSent: UInt64 { sent.withLock { $0 } }

    /// The reply to a request for `sha256` with `range` (the `Range` header, if any).
    public func response(sha256: String, range: String?) -> Response {
        guard ContentID.isDigest(sha256) else {
            return Self.text(.badRequest, "\(sha256.prefix(80)) is not a SHA-256 (64 lowercase hex digits)")
        }
        guard let file = lookup(sha256) else { return Self.text(.notFound, "not held here") }
        var offset: UInt64 = 0
        if let range {
            // RFC 9110, 14.1.2: a first byte at or past the end cannot be satisfied (416).
            guard let start = Self.rangeStart(range), start < file.size else {
                var headers = HTTPFields()
                headers[.contentRange] = "bytes */\(file.size)"
                return Response(status: .rangeNotSatisfiable, headers: headers)
            }
            offset = start
        }
        let admitted = active.withLock { count -> Bool in
            guard count < limit else { return false }
            count += 1
            return true
        }
        guard admitted else { return Self.text(.serviceUnavailable, "serving \(limit) transfers: ask another source") }
        // The slot is given back when the body is done with, written or not (a client gone first).
        let slot = Slot { [self] in active.withLock { $0 -= 1 } }
        guard let handle = FileHandle(forReadingAtPath: file.path) else {
            return Self.text(.notFound, "not held here")
        }
        let start = offset
        let length = file.size - start
        var headers = HTTPFields()
        headers[.contentType] = "application/octet-stream"
        headers[.acceptRanges] = "bytes"
        if range != nil { headers[.contentRange] = "bytes \(start)-\(max(file.size, 1) - 1)/\(file.size)" }
        let body = ResponseBody(contentLength: Int(length)) { [self] writer in
            defer {
                try? handle.close()
                slot.release()
            }
            try handle.seek(toOffset: start)
            var left = length
            while left > 0 {
                guard let chunk = try handle.read(upToCount: Int(min(left, 256 * 1024))), !chunk.isEmpty else { break }
                try await writer.write(ByteBuffer(bytes: chunk))
                left -= UInt64(chunk.count)
                sent.withLock { $0 += UInt64(chunk.count) }
            }
            try await writer.finish(nil)
        }
        return Response(status: range == nil ? .ok : .partialContent, headers: headers, body: body)
    }

    /// `bytes=N-` (the only form a resumed transfer sends); nil for any other.
    static func rangeStart(_ header: String) -> UInt64? {
        guard header.hasPrefix("bytes="), header.hasSuffix("-") else { return nil }
        return UInt64(header.dropFirst(6).dropLast())
    }

    public static func text(_ status: HTTPResponse.Status, _ message: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        return Response(
            status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: message + "\n")))
    }
}

/// A transfer's place among those a server serves at once: given back once, when released or when
/// nothing holds it any more.
final class Slot: Sendable {
    private let onRelease: Mutex<(@Sendable () -> Void)?>

    init(_ onRelease: @escaping @Sendable () -> Void) {
        self.onRelease = Mutex(onRelease)
    }

    func release() {
        let action = onRelease.withLock { action -> (@Sendable () -> Void)? in
            defer { action = nil }
            return action
        }
        action?()
    }

    deinit { release() }
}
