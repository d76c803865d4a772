import Foundation
import HTTPTypes
import Hummingbird
import LockstepLocks
import LockstepTime
import NIOCore
import WallTimeline

/// Serves files by their SHA-256 (`GET /content/<sha256>`, `Range: bytes=N-` and `bytes=N-M`
/// honoured), and their chunk lists with the chunks held (`GET /content/<sha256>/chunks`): a node to
/// its peers, `wallctl push` and the control daemon to the wall. Of a file still arriving, only the
/// ranges within chunks it has checked are served, never the whole file. At most `limit` transfers
/// at once; past that a 503 sends the asker to another source, so that the wall's copies come from
/// each other and an uplink carries a file about once.
public final class ContentServer: Sendable {
    /// What the paths of content requests begin with: their answers are bulk traffic.
    public static let pathPrefix = "/content/"
    /// The complete file holding `sha256`, and its size; nil when not held.
    public typealias Lookup = @Sendable (_ sha256: String) -> (path: String, size: UInt64)?
    /// The file holding `sha256` that is still arriving, if any.
    public typealias PartialLookup = @Sendable (_ sha256: String) -> PartialFile?

    let lookup: Lookup
    let partial: PartialLookup
    let limit: Int
    /// Keeps what this server sends, all transfers together, under a rate (`content-bandwidth`).
    let pacer: TransferPacer?
    private let active = Mutex(0)
    /// Bytes sent, for reports and benchmarks.
    private let sent = Mutex(UInt64(0))
    /// The chunk lists of complete files: known (remembered, or computed once: a read of the whole
    /// file) or being computed.
    private let lists = Mutex([String: ListState]())

    private enum ListState {
        case known(ChunkList)
        case computing
        /// The file here did not match its name when read, at that time: not read again for a while.
        case failed(MediaTime)
    }

    /// Where complete files are read to list their chunks: one at a time, off the task threads a
    /// whole-file read would hold up.
    private static let listing = DispatchQueue(label: "lockstep.chunk-lists", qos: .utility)
    /// How long a file whose listing found it not matching its name is left unread.
    static let failedListWait = MediaTime(value: 60, timescale: 1)

    /// Told the SHA-256 of a complete file that, read whole to list its chunks, no longer matched
    /// its name (its copy here is damaged: months of a disk), so the holder can drop it and fetch
    /// it again.
    public typealias Damaged = @Sendable (_ sha256: String) -> Void
    let damaged: Damaged?

    /// - Parameters:
    ///   - lists: chunk lists known already (an origin computed them as it read its files).
    ///   - pacer: what keeps the bytes sent under the link's rate; nil: as fast as they go.
    ///   - damaged: told of a complete copy found not matching its SHA-256.
    public init(
        limit: Int, lists: [ChunkList] = [], pacer: TransferPacer? = nil, lookup: @escaping Lookup,
        partial: @escaping PartialLookup = { _ in nil }, damaged: Damaged? = nil
    ) {
        self.limit = limit
        self.pacer = pacer
        self.lookup = lookup
        self.damaged = damaged
        self.partial = partial
        self.lists.withLock { known in for list in lists { known[list.id.sha256] = .known(list) } }
    }

    public var bytesSent: UInt64 { sent.withLock { $0 } }

    /// The reply to a request for `sha256` with `range` (the `Range` header, if any).
    public func response(sha256: String, range: String?) -> Response {
        guard ContentID.isDigest(sha256) else {
            return Self.text(.badRequest, "\(sha256.prefix(80)) is not a SHA-256 (64 lowercase hex digits)")
        }
        let complete = lookup(sha256)
        let arriving = complete == nil ? partial(sha256) : nil
        guard let file = complete ?? arriving.map({ (path: $0.path, size: $0.list.id.size) }) else {
            return Self.text(.notFound, "not held here")
        }
        var offset: UInt64 = 0
        var end = file.size
        if let range {
            // RFC 9110, 14.1.2: a first byte at or past the end cannot be satisfied (416); a last
            // byte past the end means the end.
            guard let asked = Self.byteRange(range), asked.start < file.size else {
                var headers = HTTPFields()
                headers[.contentRange] = "bytes */\(file.size)"
                return Response(status: .rangeNotSatisfiable, headers: headers)
            }
            offset = asked.start
            end = asked.end.map { min($0, file.size - 1) + 1 } ?? file.size
        }
        if let arriving, range == nil || !arriving.holds(offset..<end) {
            return Self.text(.notFound, "not held here yet: ask for the chunks it lists as held")
        }
        let admitted = active.withLock { count -> Bool in
            guard count < limit else { return false }
            count += 1
            return true
        }
        guard admitted else { return Self.text(.serviceUnavailable, "serving \(limit) transfers: ask another source") }
        // The slot is given back when the body is done with, written or not (a client gone first).
        let slot = Slot { [self] in active.withLock { $0 -= 1 } }
        // A file still arriving is read through its own descriptor: kept (renamed) or replaced
        // meanwhile, what is served is still the chunks checked.
        guard let handle = arriving?.reader() ?? FileHandle(forReadingAtPath: file.path) else {
            return Self.text(.notFound, "not held here")
        }
        let start = offset
        let length = end - start
        var headers = HTTPFields()
        headers[.contentType] = "application/octet-stream"
        headers[.acceptRanges] = "bytes"
        if range != nil { headers[.contentRange] = "bytes \(start)-\(end - 1)/\(file.size)" }
        let body = ResponseBody(contentLength: Int(length)) { [self] writer in
            defer {
                try? handle.close()
                slot.release()
            }
            try handle.seek(toOffset: start)
            var left = length
            // Paced, a tenth of a second's bytes at a time: a slow rate never leaves a reader
            // waiting past its read timeout between writes.
            let piece = pacer.map { max(16 * 1024, min(256 * 1024, Int($0.bytesPerSecond / 10))) } ?? 256 * 1024
            while left > 0 {
                guard let chunk = try handle.read(upToCount: Int(min(left, UInt64(piece)))), !chunk.isEmpty else {
                    break
                }
                try await writer.write(ByteBuffer(bytes: chunk))
                left -= UInt64(chunk.count)
                sent.withLock { $0 += UInt64(chunk.count) }
                if let wait = pacer?.take(chunk.count, at: LocalClock.monotonic.now()).nanoseconds, wait > 1_000_000 {
                    try await Task.sleep(for: .nanoseconds(wait))
                }
            }
            try await writer.finish(nil)
        }
        return Response(status: range == nil ? .ok : .partialContent, headers: headers, body: body)
    }

    /// Keeps `list` for its file, once held complete: what a node that received it by that list
    /// offers its peers without reading the file again.
    public func remember(_ list: ChunkList) {
        lists.withLock { $0[list.id.sha256] = .known(list) }
    }

    /// Forgets what is known of `sha256`'s list: the file is gone (collected), and a wall running
    /// for months must not keep every list it ever served.
    public func forget(_ sha256: String) {
        lists.withLock { $0[sha256] = nil }
    }

    /// The reply to `GET /content/<sha256>/chunks`: the file's chunk list and the chunks served
    /// here (`ChunkOffer`); with `holdingsOnly` (`?have`), the chunks served alone (`ChunkHolding`),
    /// for a fetch that has the list already. A complete file's list never seen is computed once, off
    /// the server's event loop, meanwhile a 503 says to ask again.
    public func chunks(sha256: String, holdingsOnly: Bool = false) -> Response {
        guard ContentID.isDigest(sha256) else {
            return Self.text(.badRequest, "\(sha256.prefix(80)) is not a SHA-256 (64 lowercase hex digits)")
        }
        let reply: any Encodable
        if let file = lookup(sha256) {
            let listed = list(of: sha256, at: file.path, size: file.size)
            guard let list = listed.list else {
                return listed.mismatch
                    ? Self.text(.notFound, "its copy here does not match its SHA-256")
                    : Self.text(.serviceUnavailable, "reading it to list its chunks: ask again in a moment")
            }
            reply =
                holdingsOnly
                ? ChunkHolding(list: list.fingerprint, have: nil) as any Encodable : ChunkOffer(list: list, have: nil)
        } else if let arriving = partial(sha256) {
            reply =
                holdingsOnly
                ? ChunkHolding(list: arriving.list.fingerprint, have: arriving.have, receiving: arriving.receiving)
                    as any Encodable
                : ChunkOffer(list: arriving.list, have: arriving.have, receiving: arriving.receiving)
        } else {
            return Self.text(.notFound, "not held here")
        }
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        guard let body = try? JSONEncoder().encode(reply) else {
            return Self.text(.internalServerError, "cannot encode the chunk list")
        }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// The complete file's chunk list if it is known; else nil, its listing started (once), or
    /// `mismatch` when a listing found the file here not matching its name lately.
    private func list(of sha256: String, at path: String, size: UInt64) -> (list: ChunkList?, mismatch: Bool) {
        let now = LocalClock.monotonic.now()
        let (known, start, mismatch) = lists.withLock { lists -> (ChunkList?, Bool, Bool) in
            switch lists[sha256] {
            case .known(let list) where list.id.size == size: return (list, false, false)
            case .computing: return (nil, false, false)
            case .failed(let at) where now - at < Self.failedListWait: return (nil, false, true)
            default:
                lists[sha256] = .computing
                return (nil, true, false)
            }
        }
        if start {
            Self.listing.async { [self] in
                let computed = try? ContentDigest.chunkList(ofFileAt: path)
                let matches = computed?.id.sha256 == sha256
                settle(sha256, matches ? computed : nil)
                // Read whole and found another file: the copy here is damaged (a read that failed
                // says nothing of the copy, and is only tried again later).
                if computed != nil, !matches { damaged?(sha256) }
            }
        }
        return (known, mismatch)
    }

    /// A listing's outcome, unless a list was remembered meanwhile.
    private func settle(_ sha256: String, _ list: ChunkList?) {
        lists.withLock { lists in
            guard case .computing = lists[sha256] else { return }
            lists[sha256] = list.map { .known($0) } ?? .failed(LocalClock.monotonic.now())
        }
    }

    /// `bytes=N-` or `bytes=N-M` (the forms transfers send: a resumed file, a chunk); nil for any
    /// other, or a last byte before the first.
    static func byteRange(_ header: String) -> (start: UInt64, end: UInt64?)? {
        guard header.hasPrefix("bytes=") else { return nil }
        let parts = header.dropFirst(6).split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let start = UInt64(parts[0]) else { return nil }
        if parts[1].isEmpty { return (start, nil) }
        guard let end = UInt64(parts[1]), end >= start else { return nil }
        return (start, end)
    }

    public static func text(_ status: HTTPResponse.Status, _ message: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        return Response(
            status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: message + "\n")))
    }
}

/// What a source offers of a file: its chunk list, the chunks it serves (nil: all of them, the
/// file is complete there), and those it is receiving now.
public struct ChunkOffer: Sendable, Hashable, Codable {
    public var list: ChunkList
    public var have: ChunkSet?
    public var receiving: ChunkSet?

    public init(list: ChunkList, have: ChunkSet?, receiving: ChunkSet? = nil) {
        self.list = list
        self.have = have
        self.receiving = receiving
    }
}

/// What a source serves of a file whose list the asker has: the list it holds the file by (its
/// `ChunkList.fingerprint`: another list's chunks are not this list's), and the chunks it serves
/// (nil: every chunk, it is complete there).
public struct ChunkHolding: Sendable, Hashable, Codable {
    public var list: String
    public var have: ChunkSet?
    /// The chunks it is receiving now.
    public var receiving: ChunkSet?

    public init(list: String, have: ChunkSet?, receiving: ChunkSet? = nil) {
        self.list = list
        self.have = have
        self.receiving = receiving
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
