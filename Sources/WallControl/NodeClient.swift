import AsyncHTTPClient
import Foundation
import LockstepNet
import LockstepTime
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import WallContent
import WallProtocol
import WallTimeline

/// A node's status as one round trip brought it: how long the trip took, and when (on this
/// machine's monotonic clock) the answer came.
public typealias StatusSample = (status: NodeStatus, roundTrip: MediaTime, receivedAt: MediaTime)

/// Talks to one node's control API, over the wall's one `HTTPClient`.
///
/// Every request is bounded by `timeout` as a whole (a deadline), besides the client's connect and
/// read timeouts: a node that accepts the connection and never answers fails the request when the
/// time is up. A refused connection fails at once: the client does not retry connecting.
public struct NodeClient: Sendable {
    public let id: String
    /// `http://HOST:PORT` or `https://HOST:PORT`, as requests are addressed.
    public let base: String
    public let http: HTTPClient
    public let timeout: MediaTime
    /// The `Authorization` header value every request carries, if the wall has a control token.
    public let authorization: String?
    /// The wall every request names (`WallHeader`), and the config's digest: a node of another
    /// wall refuses it.
    public let wall: String
    public let configSHA256: String?
    /// What should be listening at `base`, as a refused connection names it.
    let server: String

    /// The largest reply accepted: a snapshot of a 4K tile at four times its size, with room to spare.
    public static let maximumReplyBytes = 1 << 28

    public init(
        node: NodeConfig, wall: String, configSHA256: String? = nil, http: HTTPClient, scheme: String = "http",
        authorization: String? = nil, timeout: MediaTime
    ) throws(ControlError) {
        let endpoint: Endpoint
        do {
            endpoint = try Endpoint(parsing: node.control)
        } catch {
            throw .badAddress(node: node.id, reason: error.description)
        }
        let host = endpoint.host.contains(":") ? "[\(endpoint.host)]" : endpoint.host
        id = node.id
        base = "\(scheme)://\(host):\(endpoint.port)"
        self.http = http
        self.timeout = timeout
        self.authorization = authorization
        self.wall = wall
        self.configSHA256 = configSHA256
        server = "wallnode"
    }

    /// A client for the control API at `base` (`http://HOST:PORT`): a node, or a content origin.
    public init(
        id: String, base: String, wall: String, http: HTTPClient, authorization: String? = nil, timeout: MediaTime
    ) {
        self.id = id
        self.base = base
        self.http = http
        self.timeout = timeout
        self.authorization = authorization
        self.wall = wall
        configSHA256 = nil
        server = "the control daemon (wallctl serve) or a push's origin"
    }

    /// `GET /status`, with the round trip it took on this machine's monotonic clock.
    public func status() async throws(ControlError) -> StatusSample {
        let sent = LocalClock.monotonic.now()
        let status: NodeStatus = try await get(ControlPath.status)
        let received = LocalClock.monotonic.now()
        return (status, received - sent, received)
    }

    /// Posts a command and returns the node's status after it.
    @discardableResult
    public func command(_ path: String, _ body: some Encodable, method: HTTPMethod = .POST) async throws(ControlError)
        -> NodeStatus
    {
        let data: Data
        do {
            data = try JSONEncoder().encode(body)
        } catch {
            throw .protocolViolation(node: id, detail: "cannot encode the request: \(error)")
        }
        let (replyData, code) = try await send(method, path, body: data)
        let reply: ControlReply = try decode(replyData, path: path, code: code)
        guard reply.ok, let status = reply.status else {
            throw .refused(node: id, command: path, reason: reply.error ?? "HTTP \(code)")
        }
        return status
    }

    /// `GET /timeline`: the timeline the node follows, nil when it has none.
    public func timeline() async throws(ControlError) -> Timeline? {
        let (data, code) = try await send(.GET, ControlPath.timeline, body: nil)
        if code == 404 { return nil }
        return try decode(data, path: ControlPath.timeline, code: code)
    }

    /// `PUT /timeline`: the node follows `timeline` from now on.
    @discardableResult
    public func follow(_ timeline: Timeline) async throws(ControlError) -> NodeStatus {
        try await command(ControlPath.timeline, timeline, method: .PUT)
    }

    /// `POST /media/durations`: the lengths of this node's files for `media` (its own copies of
    /// `content`, where the wall distributes them).
    public func mediaDurations(_ media: [String], content: [ContentID?]? = nil) async throws(ControlError)
        -> [MediaTime]
    {
        let (data, code) = try await post(
            ControlPath.mediaDurations, MediaDurationsRequest(media: media, content: content))
        let reply: MediaDurationsReply = try decode(data, path: ControlPath.mediaDurations, code: code)
        return reply.durations
    }

    /// `GET /content`: what the node holds and fetches.
    public func content() async throws(ControlError) -> ContentReport {
        try await get(ControlPath.content)
    }

    /// `POST /content/fetch`: the node fetches `request`'s files (from its peers, else the origins).
    public func fetch(_ request: ContentFetchRequest) async throws(ControlError) {
        _ = try await post(ControlPath.contentFetch, request)
    }

    /// POSTs `body` as JSON; the reply's bytes once it is a 200, else the refusal it says.
    private func post(_ path: String, _ body: some Encodable) async throws(ControlError) -> (Data, Int) {
        let encoded: Data
        do {
            encoded = try JSONEncoder().encode(body)
        } catch {
            throw .protocolViolation(node: id, detail: "cannot encode the request: \(error)")
        }
        let (data, code) = try await send(.POST, path, body: encoded)
        guard code == 200 else {
            let reply = try? JSONDecoder().decode(ControlReply.self, from: data)
            throw .refused(node: id, command: path, reason: reply?.error ?? "HTTP \(code)")
        }
        return (data, code)
    }

    /// `GET /content` of the control daemon's library: what it holds and has sent.
    public func library() async throws(ControlError) -> LibraryReport {
        try await get(ControlPath.content)
    }

    /// What a source answered when asked about a file's chunks.
    public enum ChunkAnswer<Value: Sendable & Equatable>: Sendable, Equatable {
        case held(Value)
        /// It holds none of the file (404).
        case notHeld
        /// It holds the file but cannot say yet (503: reading it to list its chunks), with its reason.
        case busy(String)
    }

    /// `GET /content/<sha256>/chunks`: the source's chunk list of `id` and the chunks it serves.
    public func chunkOffer(_ id: ContentID) async throws(ControlError) -> ChunkAnswer<ChunkOffer> {
        let path = ControlPath.content + "/" + id.sha256 + "/chunks"
        let (data, code) = try await send(.GET, path, body: nil)
        if let answer: ChunkAnswer<ChunkOffer> = Self.unheld(code, data) { return answer }
        guard code == 200 else { throw chunkRefusal(path, code) }
        let offer: ChunkOffer = try decode(data, path: path, code: code)
        guard offer.list.id == id, offer.have.map({ $0.count == offer.list.count }) ?? true else {
            throw .protocolViolation(node: self.id, detail: "its chunk list for \(id) does not fit the file")
        }
        try checkReceiving(offer.receiving, of: id, count: offer.list.count)
        return .held(offer)
    }

    /// `GET /content/<sha256>/chunks?have`: by which list the source holds `id` and which of its
    /// `count` chunks it serves, for a fetch that has the list.
    public func chunkHolding(_ id: ContentID, count: Int) async throws(ControlError) -> ChunkAnswer<ChunkHolding> {
        let path = ControlPath.content + "/" + id.sha256 + "/chunks?have"
        let (data, code) = try await send(.GET, path, body: nil)
        if let answer: ChunkAnswer<ChunkHolding> = Self.unheld(code, data) { return answer }
        guard code == 200 else { throw chunkRefusal(path, code) }
        let holding: ChunkHolding = try decode(data, path: path, code: code)
        guard holding.have.map({ $0.count == count }) ?? true else {
            throw .protocolViolation(node: self.id, detail: "its chunks of \(id) are not \(count)")
        }
        try checkReceiving(holding.receiving, of: id, count: count)
        return .held(holding)
    }

    /// A request about chunks answered otherwise than a content server answers: a 404 of its own
    /// is a server without chunk lists (a release before them).
    private func chunkRefusal(_ path: String, _ code: Int) -> ControlError {
        .refused(
            node: id, command: "GET \(path)",
            reason: code == 404 ? "HTTP 404: it serves no chunk lists (a release older than this one?)" : "HTTP \(code)"
        )
    }

    /// The most chunks of one file a source may say it is receiving at once: a node asks for a few
    /// at a time (4), so more is a source that lies, and would keep every node from asking the
    /// origin for what it claims.
    public static let mostChunksReceiving = 16

    /// Refuses a `receiving` set that does not fit the file's `count` chunks or claims more than a
    /// node receives at once.
    private func checkReceiving(_ receiving: ChunkSet?, of id: ContentID, count: Int) throws(ControlError) {
        guard let receiving else { return }
        guard receiving.count == count else {
            throw .protocolViolation(node: self.id, detail: "the chunks of \(id) it is receiving are not \(count)")
        }
        let claimed = receiving.cardinality
        guard claimed <= Self.mostChunksReceiving else {
            throw .protocolViolation(
                node: self.id,
                detail: "it says it is receiving \(claimed) chunks of \(id) at once (a node receives at most "
                    + "\(Self.mostChunksReceiving))")
        }
    }

    /// The answer a 404 or 503 about chunks is; nil for any other status, and for a 404 that is not
    /// a content server's "not held here" (a server that has no such route).
    private static func unheld<Value: Sendable & Equatable>(_ code: Int, _ data: Data) -> ChunkAnswer<Value>? {
        switch code {
        case 404 where String(decoding: data.prefix(13), as: UTF8.self) == "not held here": return .notHeld
        case 503:
            return .busy(
                String(decoding: data.prefix(200), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        default: return nil
        }
    }

    /// How a chunk's download ended.
    public enum ChunkDownload: Sendable, Hashable {
        /// Every byte of the chunk went to the writer, which says whether they match.
        case received
        /// The source does not serve that chunk (404).
        case notHeld
        /// The source serves as many transfers as it will now (503).
        case busy
    }

    /// `GET /content/<sha256>` with `Range` the bytes of `writer`'s chunk, written to it as they
    /// arrive, no faster than `pacer` lets the node's transfers go together; `progress` hears each
    /// piece's length. A chunk that stalls for the client's read timeout fails.
    ///
    /// - Throws: `ControlError` when the source cannot be reached or refuses; `ContentError` when
    ///   the store cannot keep the bytes, or more came than the chunk holds (damage).
    public func download(
        chunk writer: ChunkWriter, of list: ChunkList, pacer: TransferPacer?, progress: @Sendable (Int) -> Void
    ) async throws -> ChunkDownload {
        let range = list.range(of: writer.index)
        var request = HTTPClientRequest(url: base + ControlPath.content + "/" + list.id.sha256)
        addIdentity(to: &request)
        request.headers.add(name: "Range", value: "bytes=\(range.lowerBound)-\(range.upperBound - 1)")
        do {
            let response = try await http.execute(request, deadline: .now() + .minutes(10))
            switch response.status.code {
            case 404: return .notHeld
            case 503: return .busy
            case 401: throw ControlError.unauthorized(node: id, tokenSent: authorization != nil)
            case 206: break
            default:
                throw ControlError.refused(
                    node: id, command: "GET /content",
                    reason: "HTTP \(response.status.code) for chunk \(writer.index) of \(list.id)")
            }
            for try await piece in response.body {
                try writer.append(Data(piece.readableBytesView))
                progress(piece.readableBytes)
                if let pacer {
                    let wait = pacer.take(piece.readableBytes, at: LocalClock.monotonic.now())
                    if let nanoseconds = wait.nanoseconds, nanoseconds > 1_000_000 {
                        try await Task.sleep(for: .nanoseconds(nanoseconds))
                    }
                }
            }
        } catch let error as ControlError {
            throw error
        } catch let error as ContentError {
            throw error
        } catch {
            throw ControlError.unreachable(
                node: id, address: base, reason: Self.reason(error, timeout: timeout, server: server))
        }
        return .received
    }

    /// `GET /check`: the node's version, config digest and sinks.
    public func check() async throws(ControlError) -> NodeCheck {
        try await get(ControlPath.check)
    }

    /// `GET /plays`: what the node's screen presented in [`from`, `to`) (ms since 1970, UTC).
    public func plays(fromUnixMs from: Int64, toUnixMs to: Int64) async throws(ControlError) -> PlaysReply {
        try await get("\(ControlPath.plays)?fromUnixMs=\(from)&toUnixMs=\(to)")
    }

    /// `GET /frames?after=`.
    public func frames(after sequence: UInt64) async throws(ControlError) -> FramesReply {
        try await get("\(ControlPath.frames)?after=\(sequence)&limit=4096")
    }

    /// One node's frame from `GET /snapshot`: packed RGB, and which frame it is.
    public struct Snapshot: Sendable {
        public var width: Int
        public var height: Int
        public var rgb: Data
        /// The frame's time in its item.
        public var presentationTimestamp: MediaTime?
        /// The node's master-clock time when it copied the frame.
        public var copiedAt: MediaTime?
    }

    /// `GET /snapshot`: the frame on screen now, or at master time `at` (the node waits for it).
    public func snapshot(width: Int, height: Int, at: MediaTime? = nil) async throws(ControlError) -> Snapshot {
        var path = "\(ControlPath.snapshot)?width=\(width)&height=\(height)"
        if let at = at?.nanoseconds { path += "&atNs=\(at)" }
        let (data, code, headers) = try await exchange(.GET, path, body: nil)
        guard code == 200 else {
            let reply = try? JSONDecoder().decode(ControlReply.self, from: data)
            throw .refused(node: id, command: path, reason: reply?.error ?? "HTTP \(code)")
        }
        guard data.count == width * height * 3 else {
            throw .protocolViolation(node: id, detail: "snapshot of \(data.count) bytes for \(width)x\(height) RGB")
        }
        func time(_ name: String) -> MediaTime? {
            headers.first(name: name).flatMap { Int64($0) }.map { MediaTime(nanoseconds: $0) }
        }
        return Snapshot(
            width: width, height: height, rgb: data,
            presentationTimestamp: time(SnapshotHeader.presentationTimestamp), copiedAt: time(SnapshotHeader.copiedAt))
    }

    private func get<T: Decodable>(_ path: String) async throws(ControlError) -> T {
        let (data, code) = try await send(.GET, path, body: nil)
        return try decode(data, path: path, code: code)
    }

    private func decode<T: Decodable>(_ data: Data, path: String, code: Int) throws(ControlError) -> T {
        do {
            return try JSONBody.decode(T.self, from: data)
        } catch {
            let text = String(decoding: data.prefix(200), as: UTF8.self)
            throw .protocolViolation(
                node: id, detail: "\(path) answered HTTP \(code) with content it cannot take (\(error.reason)): \(text)"
            )
        }
    }

    /// One request, whole reply read, within `timeout`. A 401 is an error of its own: the node did
    /// not take the token (or wants one), which no retry or other command changes.
    private func send(_ method: HTTPMethod, _ path: String, body: Data?) async throws(ControlError) -> (Data, Int) {
        let (data, code, _) = try await exchange(method, path, body: body)
        return (data, code)
    }

    private func exchange(_ method: HTTPMethod, _ path: String, body: Data?) async throws(ControlError)
        -> (Data, Int, HTTPHeaders)
    {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        addIdentity(to: &request)
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let limit = TimeAmount.nanoseconds(timeout.nanoseconds ?? Int64.max)
        let deadline = NIODeadline.now() + limit
        let response: HTTPClientResponse
        let bytes: ByteBuffer
        do {
            response = try await http.execute(request, deadline: deadline)
            bytes = try await response.body.collect(upTo: Self.maximumReplyBytes)
        } catch {
            throw .unreachable(node: id, address: base, reason: Self.reason(error, timeout: timeout, server: server))
        }
        if response.status == .unauthorized { throw .unauthorized(node: id, tokenSent: authorization != nil) }
        if let theirs = response.headers.first(name: WallHeader.wall), theirs != wall {
            throw .otherWall(node: id, wall: theirs, expected: wall)
        }
        return (Data(bytes.readableBytesView), Int(response.status.code), response.headers)
    }

    /// What every request carries: the token, the wall's name and the config's digest.
    private func addIdentity(to request: inout HTTPClientRequest) {
        if let authorization { request.headers.add(name: "Authorization", value: authorization) }
        request.headers.add(name: WallHeader.wall, value: wall)
        if let configSHA256 { request.headers.add(name: WallHeader.configSHA256, value: configSHA256) }
    }

    /// A sentence for why a request got no answer: refused, timed out, or what TLS objected to.
    ///
    /// - Parameter server: what should be listening there (`wallnode`, `wallctl serve`).
    public static func reason(_ error: any Error, timeout: MediaTime, server: String = "wallnode") -> String {
        let seconds = String(format: "%g s", timeout.seconds)
        switch error {
        case let error as HTTPClientError where error == .connectTimeout:
            return "no connection within \(seconds) (--timeout)"
        case let error as HTTPClientError where error == .readTimeout || error == .deadlineExceeded:
            return "no answer within \(seconds) (--timeout)"
        case let error as HTTPClientError where error == .remoteConnectionClosed:
            return "the node closed the connection without answering"
        case let error as NIOConnectionError:
            if let underlying = error.connectionErrors.lazy.compactMap({ $0.error as? IOError }).first {
                return reason(underlying, timeout: timeout, server: server)
            }
            return error.description
        case let error as IOError where error.errnoCode == ECONNREFUSED:
            return "connection refused (is \(server) running there?)"
        case let error as NIOSSLExtraError where error == .failedToValidateHostname:
            return "TLS: the node's certificate does not name the address connected to"
        case let error as NIOSSLError where "\(error)".contains("CERTIFICATE_VERIFY_FAILED"):
            return "TLS: the node's certificate does not verify against control-tls.trust-roots "
                + "(signed by another CA, expired or not yet valid)"
        case let error as NIOSSLError:
            return "TLS: \(error)"
        case let error as NIOSSLExtraError:
            return "TLS: \(error)"
        case let error as BoringSSLError:
            return "TLS: \(error)"
        default:
            return "\(error)"
        }
    }
}
