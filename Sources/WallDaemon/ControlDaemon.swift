import Foundation
import Hummingbird
import LockstepCLI
import LockstepGuard
import LockstepNet
import LockstepTime
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle
import ShowControl
import WallConsole
import WallContent
import WallControl
import WallProtocol

/// The wall's control daemon (`wallctl serve`): the content library the nodes fetch from, show
/// control over OSC, UDP, TCP and HTTP, and the operator console, on one HTTP port behind the one
/// connection guard. Its parts are made here from the config; `router()` is what tests drive in
/// process, `services` what the daemon runs as one `ServiceGroup`.
public final class ControlDaemon: Sendable {
    public let config: WallConfig
    /// Where the daemon listens (`controller.listen`).
    public let endpoint: Endpoint
    public let library: ContentStore
    public let origin: ContentOrigin
    public let show: ShowControlService
    public let console: Console
    /// Every action taken on the wall through the daemon, and every refusal (`AuditLog`).
    public let audit: AuditLog
    /// The TLS the daemon serves with: the wall's `control-tls`; nil without.
    public let tls: TLSConfiguration?

    /// The daemon of `config`, or a sentence saying what in the config keeps it from being one.
    ///
    /// - Parameter say: where each show-control command's outcome goes.
    public init(config: WallConfig, say: @escaping @Sendable (String) -> Void) throws(ControlError) {
        guard let controller = config.controller else {
            throw .config("the config has no controller: section (controller: {listen: HOST:PORT})")
        }
        do {
            endpoint = try Endpoint(parsing: controller.listen)
        } catch {
            throw .config("controller.listen: \(error)")
        }
        let token: ControlToken?
        let viewerToken: ControlToken?
        do {
            token = try config.security.tokenFile.map { path throws(ControlTokenError) in
                try ControlToken(contentsOfFile: path)
            }
            viewerToken = try config.security.viewerTokenFile.map { path throws(ControlTokenError) in
                try ControlToken(contentsOfFile: path)
            }
        } catch {
            throw .config("\(error)")
        }
        if let token, token == viewerToken {
            throw .config("viewer-token-file holds the control token: a viewer's token must be another")
        }
        library = ContentStore(root: Self.libraryFolder(config))
        do {
            try library.prepare()
        } catch {
            throw .config("controller.library: \(error)")
        }
        do {
            tls = try config.security.tls.map { tls in
                try ContentOrigin.serverTLS(certificate: tls.certificate, key: tls.key)
            }
        } catch {
            throw .config("control-tls: \(error)")
        }
        self.config = config
        origin = ContentOrigin(library: library, token: token, bytesPerSecond: config.contentBandwidth)
        audit = AuditLog(path: Self.auditFile(config))
        if audit.unreadableLines > 0 {
            say("audit log \(audit.path): \(audit.unreadableLines) line(s) that are not records skipped (a cut write)")
        }
        do {
            show = try ShowControlService(wall: config, audit: audit, say: say)
            console = try Console(
                config: config, token: token, viewerToken: viewerToken, secure: tls != nil, library: library,
                audit: audit)
        } catch let error as ControlError {
            throw error
        } catch {
            throw .config("\(error)")
        }
    }

    /// Where the audit log is kept: `controller-audit.jsonl` in the state directory.
    public static func auditFile(_ config: WallConfig) -> String {
        (config.stateDirectory ?? "/var/lib/lockstep") + "/controller-audit.jsonl"
    }

    /// Where the library is kept: `controller.library`, else `controller-library` in the state
    /// directory.
    public static func libraryFolder(_ config: WallConfig) -> String {
        config.controller?.library ?? ((config.stateDirectory ?? "/var/lib/lockstep") + "/controller-library")
    }

    /// Every route the daemon answers: the content library's, show control's and the console's.
    public func router() -> Router<BasicRequestContext> {
        origin.router(routes: addRoutes)
    }

    /// Adds show control's and the console's routes beside the library's.
    private func addRoutes(_ router: Router<BasicRequestContext>, refusal: @escaping @Sendable (Request) -> Response?) {
        show.routes(router, refusal: refusal)
        console.routes(router)
    }

    /// Binds every show-control input, or throws a sentence naming the one that cannot listen: the
    /// daemon does this before it says it serves, and stops if it cannot.
    public func listen() async throws(ShowControlError) {
        try await show.listen()
    }

    /// The daemon's services, for one `ServiceGroup`: the HTTP server (behind the connection guard,
    /// with the bounds `fileLimit` allows), the show-control inputs and runner, the console's
    /// watch of the wall. `serving` hears the port once the server listens.
    public func services(
        fileLimit: UInt64, logger: Logger, serving: @escaping @Sendable (Int) -> Void
    ) throws -> [ServiceGroupConfiguration.ServiceConfiguration] {
        let show = self.show
        let console = self.console
        let application = try origin.application(
            host: endpoint.host, port: Int(endpoint.port), tls: tls, fileLimit: fileLimit, routes: addRoutes,
            logger: logger, bound: serving)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: application), .init(service: TaskService("console") { await console.run() }),
        ]
        if show.input != nil { services.append(.init(service: TaskService("show-control") { try await show.run() })) }
        return services
    }

    /// Closes the connections to the nodes: after the services ran, or when they never did.
    public func shutdown() async {
        await console.shutdown()
        try? await show.shutdown()
    }
}

extension ShowControlService {
    /// The daemon's HTTP input: `POST /cue/NAME` and `POST /show/VERB` (pause, resume, next,
    /// previous, black, stop), with the wall's token, within show-control's rate (every token
    /// holder over HTTP shares one bucket); 202 once queued, 404 naming an unknown cue or verb, 429
    /// past the rate.
    func routes(_ router: Router<BasicRequestContext>, refusal: @escaping @Sendable (Request) -> Response?) {
        let runner = self.runner
        let input = self.input
        let take: @Sendable (Request, String) -> Response = { request, text in
            if let refused = refusal(request) { return refused }
            guard let runner, let input else {
                return ContentServer.text(.notFound, "this wall's config has no show-control: section")
            }
            if let refused = input.connections.admitAuthenticatedMessage(via: "http") {
                var response = ContentServer.text(.tooManyRequests, "\(refused)")
                response.headers[.retryAfter] = "1"
                return response
            }
            let command: ShowCommand
            do {
                command = try ShowCommand(line: Substring(text))
            } catch {
                return ContentServer.text(.notFound, "\(error)")
            }
            let arrival = LocalClock.monotonic.now()
            if let refused = runner.submit(ShowRequest(command: command, sender: "http", via: "http", arrival: arrival))
            {
                return ContentServer.text(.notFound, "\(refused)")
            }
            return ContentServer.text(.accepted, "queued: \(command)")
        }
        router.post("/cue/:name") { request, context -> Response in
            take(request, "cue " + (context.parameters.get("name") ?? ""))
        }
        router.post("/show/:verb") { request, context -> Response in
            let verb = context.parameters.get("verb") ?? ""
            guard verb != "cue", !verb.contains(" ") else {
                return ContentServer.text(.notFound, "POST /cue/NAME for a cue")
            }
            return take(request, verb)
        }
    }
}
