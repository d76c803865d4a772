import Foundation
import HTTPTypes
import Hummingbird
import LockstepLocks
import Logging
import NIOCore
import WallTimeline

/// Where a wall's nodes fetch files no peer holds yet: `wallctl push` serves the files it pushes
/// while the nodes fetch them, at `GET /content/<sha256>` like a node, with the wall's control token.
/// It serves one transfer at a time, so the other nodes take their copies from the first.
public final class ContentOrigin: Sendable {
    public let server: ContentServer
    let authorization: String?

    /// - Parameter files: the file holding each ID, on this machine (checked by the caller).
    public init(files: [ContentID: String], authorization: String?, limit: Int = 1) {
        self.authorization = authorization
        let byDigest = Dictionary(files.map { ($0.key.sha256, ($0.value, $0.key.size)) }) { first, _ in first }
        server = ContentServer(limit: limit) { sha256 in byDigest[sha256] }
    }

    /// Serves on `host`:`port` (0: any free port) until the task is cancelled; `bound` hears the
    /// port once the server listens.
    public func run(host: String, port: Int, bound: @escaping @Sendable (Int) -> Void) async throws {
        let router = Router()
        let authorization = self.authorization
        let server = self.server
        router.get("/content/:sha256") { request, context -> Response in
            if let authorization, request.headers[.authorization] != authorization {
                return ContentServer.text(.unauthorized, "this origin needs the wall's control token")
            }
            return server.response(sha256: context.parameters.get("sha256") ?? "", range: request.headers[.range])
        }
        // The push says what happens; the server's own lines (its shutdown) are noise there.
        var logger = Logger(label: "lockstep.origin")
        logger.logLevel = .critical
        let application = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "wallctl-origin"),
            onServerRunning: { channel in bound(channel.localAddress?.port ?? port) }, logger: logger)
        try await application.run()
    }
}
