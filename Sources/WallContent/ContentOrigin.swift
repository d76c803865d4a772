import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import LockstepGuard
import LockstepLocks
import Logging
import NIOCore
import NIOSSL
import WallTimeline

/// Where a wall's nodes fetch files no peer holds yet: `wallctl push` serves the files it pushes
/// while the nodes fetch them, at `GET /content/<sha256>` like a node, with the wall's control token.
/// It serves a few transfers at once (`limit`) and each node asks it for one chunk at a time, the
/// chunks no peer has yet: the nodes take the rest of their copies from each other.
public final class ContentOrigin: Sendable {
    public let server: ContentServer
    /// The wall's control token, which every request must carry; nil: the wall has none.
    let token: ControlToken?

    /// The store uploads go to (`wallctl serve`'s library); nil: nothing is taken.
    let library: ContentStore?

    /// - Parameters:
    ///   - files: the file holding each ID, on this machine (checked by the caller).
    ///   - lists: the files' chunk lists, where the caller computed them as it read the files.
    ///   - bytesPerSecond: the most it sends, all transfers together (`content-bandwidth`); nil: no limit.
    public init(
        files: [ContentID: String], lists: [ChunkList] = [], token: ControlToken?, limit: Int = 4,
        bytesPerSecond: Double? = nil
    ) {
        self.token = token
        let byDigest = Dictionary(files.map { ($0.key.sha256, ($0.value, $0.key.size)) }) { first, _ in first }
        server = ContentServer(limit: limit, lists: lists, pacer: TransferPacer(limit: bytesPerSecond)) { sha256 in
            byDigest[sha256]
        }
        library = nil
    }

    /// An origin serving `library`'s complete files, which takes uploads into it
    /// (`PUT /content/<sha256>?size=N`, kept only once the digest matches).
    public init(library: ContentStore, token: ControlToken?, limit: Int = 4, bytesPerSecond: Double? = nil) {
        self.token = token
        self.library = library
        server = ContentServer(limit: limit, pacer: TransferPacer(limit: bytesPerSecond)) { sha256 in
            library.file(sha256: sha256)
        }
    }

    /// Serves on `host`:`port` (0: any free port), over TLS with `tls`, until the task is
    /// cancelled; `bound` hears the port once the server listens.
    public func run(
        host: String, port: Int, tls: TLSConfiguration? = nil, bound: @escaping @Sendable (Int) -> Void
    ) async throws {
        try await application(host: host, port: port, tls: tls, fileLimit: FileLimit.raise(), bound: bound).run()
    }

    /// The origin as a Hummingbird application (a service) on `host`:`port` (0: any free port),
    /// over TLS with `tls`, behind the one connection guard (`ConnectionGuard`) with the bounds
    /// `fileLimit` allows; `bound` hears the port once the server listens.
    ///
    /// - Parameter routes: adds the daemon's other routes; each refuses (the closure it is given
    ///   answers) a request without the wall's token, as the content routes do.
    public func application(
        host: String, port: Int, tls: TLSConfiguration? = nil, fileLimit: UInt64,
        routes: (Router<BasicRequestContext>, _ refusal: @escaping @Sendable (Request) -> Response?) -> Void = { _, _ in
        },
        logger: Logger? = nil, bound: @escaping @Sendable (Int) -> Void
    ) throws -> some ApplicationProtocol {
        // The push says what happens; the server's own lines (its shutdown) are noise there.
        var quiet = Logger(label: "lockstep.origin")
        quiet.logLevel = .critical
        let logger = logger ?? quiet
        let connections = ConnectionGuard(surface: "daemon", policy: .http(fileLimit: fileLimit), logger: logger)
        return Application(
            router: router(routes: routes), server: try connections.httpServer(tls: tls),
            configuration: ApplicationConfiguration(
                address: .hostname(host, port: port), serverName: "wallctl-origin",
                availableConnectionsDelegate: MaximumAvailableConnections(
                    FileLimit.connections(within: fileLimit).accepted, logger: logger)),
            onServerRunning: { channel in bound(channel.localAddress?.port ?? port) }, logger: logger)
    }

    /// The refusal of a request without the wall's token, where the wall has one.
    public func refusal(_ request: Request) -> Response? {
        guard let token, !token.accepts(authorization: request.headers[.authorization]) else { return nil }
        var response = ContentServer.text(
            .unauthorized, "this daemon needs the wall's control token (Authorization: Bearer ...)")
        response.headers[.wwwAuthenticate] = "Bearer realm=\"lockstep\""
        return response
    }

    /// The origin's routes and the daemon's others: what `application` serves, and what tests
    /// drive in-process.
    public func router(
        routes: (Router<BasicRequestContext>, _ refusal: @escaping @Sendable (Request) -> Response?) -> Void = { _, _ in
        }
    ) -> Router<BasicRequestContext> {
        let router = Router()
        let server = self.server
        let refusal: @Sendable (Request) -> Response? = { [self] request in self.refusal(request) }
        router.get("/content/:sha256") { request, context -> Response in
            if let refused = refusal(request) { return refused }
            return server.response(sha256: context.parameters.get("sha256") ?? "", range: request.headers[.range])
        }
        router.get("/content/:sha256/chunks") { request, context -> Response in
            if let refused = refusal(request) { return refused }
            return server.chunks(
                sha256: context.parameters.get("sha256") ?? "",
                holdingsOnly: request.uri.queryParameters.get("have") != nil)
        }
        if let library {
            router.get("/content") { request, _ -> Response in
                if let refused = refusal(request) { return refused }
                var headers = HTTPFields()
                headers[.contentType] = "application/json"
                let body = try JSONEncoder().encode(
                    LibraryReport(held: library.holdings(), bytesSent: server.bytesSent))
                return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
            }
            router.put("/content/:sha256") { request, context -> Response in
                if let refused = refusal(request) { return refused }
                guard let digest = context.parameters.get("sha256"),
                    let size = request.uri.queryParameters.get("size").flatMap({ UInt64($0) }),
                    let id = ContentID(sha256: digest, size: size)
                else {
                    return ContentServer.text(
                        .badRequest, "PUT /content/<sha256>?size=<bytes>, a SHA-256 of 64 lowercase hex digits")
                }
                if library.holds(id) { return ContentServer.text(.ok, "held already") }
                do {
                    // A new upload starts over: what an earlier one left may be from another sender.
                    try? FileManager.default.removeItem(atPath: library.root + "/partial/" + id.sha256)
                    let handle = try library.appending(to: id)
                    var received: UInt64 = 0
                    do {
                        for try await chunk in request.body {
                            received += UInt64(chunk.readableBytes)
                            guard received <= id.size else {
                                throw ContentError.corrupt(id, "the upload is longer than its size")
                            }
                            try handle.write(contentsOf: Data(chunk.readableBytesView))
                        }
                        try handle.close()
                    } catch let error as ContentError {
                        try? handle.close()
                        throw error
                    } catch {
                        // The sender's connection ended or broke the body: its fault, kept as far as it came.
                        try? handle.close()
                        return ContentServer.text(
                            .badRequest, "the upload of \(id) ended after \(received) of \(id.size) bytes: \(error)")
                    }
                    guard received == id.size else {
                        return ContentServer.text(
                            .badRequest, "the upload of \(id) ended after \(received) of \(id.size) bytes")
                    }
                    try library.commit(id)
                    // Its chunk list, computed now, so that the nodes asking for it are not told
                    // to wait while the daemon reads the whole file.
                    if let list = try? ContentDigest.chunkList(ofFileAt: library.root + "/sha256/" + id.sha256) {
                        server.remember(list)
                    }
                    return ContentServer.text(.ok, "kept")
                } catch let error as ContentError {
                    switch error {
                    case .noSpace:
                        return ContentServer.text(
                            HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage"), "\(error)")
                    case .corrupt:
                        return ContentServer.text(.unprocessableContent, "\(error)")
                    case .storage, .unavailable:
                        return ContentServer.text(.internalServerError, "\(error)")
                    }
                }
            }
        }
        routes(router, refusal)
        return router
    }
}

/// `GET /content` of the control daemon's library: what it holds, and the bytes it has sent the
/// nodes since it started (a push reads it before and after, to say what the origin sent).
public struct LibraryReport: Sendable, Hashable, Codable {
    public var held: [ContentID]
    public var bytesSent: UInt64

    public init(held: [ContentID], bytesSent: UInt64) {
        self.held = held
        self.bytesSent = bytesSent
    }
}

extension ContentOrigin {
    /// The server side of `control-tls`: the certificate chain and its key, PEM.
    public static func serverTLS(certificate: String, key: String) throws -> TLSConfiguration {
        let chain = try NIOSSLCertificate.fromPEMFile(certificate)
        guard !chain.isEmpty else {
            throw ContentError.storage("control-tls.certificate: \(certificate) holds no certificate")
        }
        return TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
    }
}
