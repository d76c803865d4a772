import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTLS
import LockstepLocks
import Logging
import NIOCore
import NIOSSL
import WallTimeline

/// Where a wall's nodes fetch files no peer holds yet: `wallctl push` serves the files it pushes
/// while the nodes fetch them, at `GET /content/<sha256>` like a node, with the wall's control token.
/// It serves one transfer at a time, so the other nodes take their copies from the first.
public final class ContentOrigin: Sendable {
    public let server: ContentServer
    let authorization: String?

    /// The store uploads go to (`wallctl serve`'s library); nil: nothing is taken.
    let library: ContentStore?

    /// - Parameter files: the file holding each ID, on this machine (checked by the caller).
    public init(files: [ContentID: String], authorization: String?, limit: Int = 1) {
        self.authorization = authorization
        let byDigest = Dictionary(files.map { ($0.key.sha256, ($0.value, $0.key.size)) }) { first, _ in first }
        server = ContentServer(limit: limit) { sha256 in byDigest[sha256] }
        library = nil
    }

    /// An origin serving `library`'s complete files, which takes uploads into it
    /// (`PUT /content/<sha256>?size=N`, kept only once the digest matches).
    public init(library: ContentStore, authorization: String?, limit: Int = 1) {
        self.authorization = authorization
        self.library = library
        server = ContentServer(limit: limit) { sha256 in library.file(sha256: sha256) }
    }

    /// Serves on `host`:`port` (0: any free port), over TLS with `tls`, until the task is
    /// cancelled; `bound` hears the port once the server listens.
    ///
    /// - Parameter routes: adds the daemon's other routes; each refuses (the closure it is given
    ///   answers) a request without the wall's token, as the content routes do.
    public func run(
        host: String, port: Int, tls: TLSConfiguration? = nil,
        routes: (Router<BasicRequestContext>, _ refusal: @escaping @Sendable (Request) -> Response?) -> Void = { _, _ in },
        bound: @escaping @Sendable (Int) -> Void
    ) async throws {
        let router = Router()
        let authorization = self.authorization
        let server = self.server
        /// The refusal of a request without the wall's token, where the wall has one.
        let refusal: @Sendable (Request) -> Response? = { request in
            guard let authorization, request.headers[.authorization] != authorization else { return nil }
            return ContentServer.text(.unauthorized, "this origin needs the wall's control token")
        }
        router.get("/content/:sha256") { request, context -> Response in
            if let refused = refusal(request) { return refused }
            return server.response(sha256: context.parameters.get("sha256") ?? "", range: request.headers[.range])
        }
        // The push says what happens; the server's own lines (its shutdown) are noise there.
        var logger = Logger(label: "lockstep.origin")
        logger.logLevel = .critical
        if let library {
            router.get("/content") { request, _ -> Response in
                if let refused = refusal(request) { return refused }
                var headers = HTTPFields()
                headers[.contentType] = "application/json"
                let body = try JSONEncoder().encode(["held": library.holdings()])
                return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
            }
            router.put("/content/:sha256") { request, context -> Response in
                if let refused = refusal(request) { return refused }
                guard let digest = context.parameters.get("sha256"),
                    let size = request.uri.queryParameters.get("size").flatMap({ UInt64($0) }),
                    let id = ContentID(sha256: digest, size: size)
                else {
                    return ContentServer.text(.badRequest, "PUT /content/<sha256>?size=<bytes>, a SHA-256 of 64 lowercase hex digits")
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
                            guard received <= id.size else { throw ContentError.corrupt(id, "the upload is longer than its size") }
                            try handle.write(contentsOf: Data(chunk.readableBytesView))
                        }
                        try handle.close()
                    } catch {
                        try? handle.close()
                        throw error
                    }
                    try library.commit(id)
                    return ContentServer.text(.ok, "kept")
                } catch let error as ContentError {
                    if case .noSpace = error {
                        return ContentServer.text(HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage"), "\(error)")
                    }
                    return ContentServer.text(.unprocessableContent, "\(error)")
                }
            }
        }
        routes(router, refusal)
        let application = Application(
            router: router, server: try tls.map { try .tls(.http1(), tlsConfiguration: $0) } ?? .http1(),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "wallctl-origin"),
            onServerRunning: { channel in bound(channel.localAddress?.port ?? port) }, logger: logger)
        try await application.run()
    }
}

extension ContentOrigin {
    /// The server side of `control-tls`: the certificate chain and its key, PEM.
    public static func serverTLS(certificate: String, key: String) throws -> TLSConfiguration {
        let chain = try NIOSSLCertificate.fromPEMFile(certificate)
        guard !chain.isEmpty else { throw ContentError.storage("control-tls.certificate: \(certificate) holds no certificate") }
        return TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
    }
}
