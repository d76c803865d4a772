import ArgumentParser
import Foundation
import Hummingbird
import LockstepCLI
import LockstepGuard
import LockstepNet
import LockstepTime
import Logging
import NIOCore
import ServiceLifecycle
import ShowControl
import WallConsole
import WallContent
import WallControl
import WallProtocol

/// `wallctl serve`: the wall's control daemon.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract:
            "Run the wall's control daemon: the content library the nodes fetch from, show control, and the operator "
            + "console.",
        discussion: """
            Optional: the wall plays without it, every node holding its desired state. It keeps the content \
            library (controller.library in the config, else controller-library in the state directory): \
            wallctl push uploads each file to it once, verified, and the nodes fetch what their timeline names \
            from each other first and from it, also a node replaced or restarted long after the push. It listens \
            on controller.listen, answering only requests with the wall's control token where the config has \
            one, over HTTPS where it has control-tls (its certificate must name this address too). With a show-control: \
            section it takes cues and transport verbs over OSC, UDP and TCP (from the addresses show-control.allow \
            names) and over HTTP (POST /cue/NAME, POST /show/pause ..., with the token), each a timeline edit \
            (docs/SHOW-CONTROL.md). Operators open its console at /console on the same address: a live page \
            of the wall that drives it, behind a login with the wall's token (docs/CONSOLE.md). Runs until \
            SIGINT or SIGTERM; under systemd (the lockstep-controller unit), Type=notify.
            """)

    @Option(help: "The wall's config file (YAML), with a controller: section.")
    var config: String

    func run() async throws {
        let wall = try loadConfig(config)
        guard let controller = wall.controller else {
            throw ControlError.config("\(config) has no controller: section (controller: {listen: HOST:PORT})")
        }
        let endpoint: Endpoint
        do {
            endpoint = try Endpoint(parsing: controller.listen)
        } catch {
            throw ControlError.config("controller.listen: \(error)")
        }
        let controlToken: ControlToken?
        do {
            controlToken = try wall.security.tokenFile.map { try ControlToken(contentsOfFile: $0) }
        } catch {
            throw ControlError.config("\(error)")
        }
        let folder = controller.library ?? ((wall.stateDirectory ?? "/var/lib/lockstep") + "/controller-library")
        let library = ContentStore(root: folder)
        do {
            try library.prepare()
        } catch {
            throw ControlError.config("controller.library: \(error)")
        }
        Termination.exitAfterSignal(within: Self.shutdownLimit, program: "wallctl serve")
        let fileLimit = FileLimit.raise()
        let origin = ContentOrigin(library: library, token: controlToken)
        let tls = try originTLS(wall)
        let notifier = ServiceNotifier.fromEnvironment()
        let show = try ShowControlService(wall: wall, say: { Output.line($0) })
        // Every show-control input listens before the daemon says it serves: one that cannot
        // stops the daemon here, with a sentence naming it.
        do {
            try await show.listen()
        } catch {
            try? await show.shutdown()
            throw ControlError.config("\(error)")
        }
        let console = try Console(config: wall, token: controlToken, secure: tls != nil, library: library)
        var logger = Logger(label: "lockstep.daemon")
        logger.logLevel = .notice
        let application = try origin.application(
            host: endpoint.host, port: Int(endpoint.port), tls: tls, fileLimit: fileLimit,
            routes: { router, refusal in
                show.routes(router, refusal: refusal)
                console.routes(router)
            }, logger: logger
        ) { port in
            Output.line(
                "wallctl: serving wall \(wall.name)'s content library \(folder) (\(library.holdings().count) files) "
                    + "on \(endpoint.host):\(port); the operator console at \(tls == nil ? "http" : "https")://"
                    + "\(endpoint.host):\(port)/console")
            notifier.ready(status: "content library on \(endpoint.host):\(port)")
        }
        Termination.onHangup { Output.line("wallctl: SIGHUP ignored; the daemon keeps serving") }
        var configuration = ServiceGroupConfiguration(
            services: [
                .init(service: application),
                .init(service: TaskService("show-control") { try await show.run() }),
                .init(service: TaskService("console") { await console.run() }),
            ],
            gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = .seconds(1)
        do {
            try await ServiceGroup(configuration: configuration).run()
        } catch let error as IOError {
            await console.shutdown()
            try? await show.shutdown()
            // The HTTP server's bind: NIO names the system call, not the address.
            throw ControlError.config(
                "cannot serve on \(controller.listen): \(String(cString: strerror(error.errnoCode)))")
        } catch {
            await console.shutdown()
            try? await show.shutdown()
            throw ControlError.config("the daemon stopped: \(error)")
        }
        await console.shutdown()
        try await show.shutdown()
        notifier.stopping()
        Output.line("wallctl: stopped; sent \(origin.server.bytesSent) bytes")
    }

    /// How long after SIGTERM or SIGINT the daemon ends, gracefully or not (the unit gives it 5 s).
    static let shutdownLimit = 2.0
}

extension ShowControlService {
    /// The daemon's HTTP input: `POST /cue/NAME` and `POST /show/VERB` (pause, resume, next,
    /// previous, black, stop), with the wall's token; 202 once queued, 404 naming an unknown cue or
    /// verb.
    func routes(_ router: Router<BasicRequestContext>, refusal: @escaping @Sendable (Request) -> Response?) {
        let runner = self.runner
        let take: @Sendable (Request, String) -> Response = { request, text in
            if let refused = refusal(request) { return refused }
            guard let runner else {
                return ContentServer.text(.notFound, "this wall's config has no show-control: section")
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
