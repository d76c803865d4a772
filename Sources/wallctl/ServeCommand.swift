import ArgumentParser
import Foundation
import LockstepCLI
import LockstepGuard
import Logging
import NIOCore
import ServiceLifecycle
import WallControl
import WallDaemon

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
        let daemon = try ControlDaemon(config: try loadConfig(config), say: { Output.line($0) })
        let wall = daemon.config
        // Every show-control input listens before the daemon says it serves: one that cannot
        // stops the daemon here, with a sentence naming it.
        do {
            try await daemon.listen()
        } catch {
            await daemon.shutdown()
            throw ControlError.config("\(error)")
        }
        Termination.exitAfterSignal(within: Self.shutdownLimit, program: "wallctl serve")
        Termination.onHangup { Output.line("wallctl: SIGHUP ignored; the daemon keeps serving") }
        let notifier = ServiceNotifier.fromEnvironment()
        var logger = Logger(label: "lockstep.daemon")
        logger.logLevel = .notice
        let host = daemon.endpoint.host
        let services = try daemon.services(fileLimit: FileLimit.raise(), logger: logger) { port in
            Output.line(
                "wallctl: serving wall \(wall.name)'s content library \(daemon.library.root) "
                    + "(\(daemon.library.holdings().count) files) on \(host):\(port); the operator console at "
                    + "\(daemon.tls == nil ? "http" : "https")://\(host):\(port)/console")
            notifier.ready(status: "content library on \(host):\(port)")
        }
        var configuration = ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        configuration.maximumGracefulShutdownDuration = .seconds(1)
        do {
            try await ServiceGroup(configuration: configuration).run()
        } catch let error as IOError {
            await daemon.shutdown()
            // The HTTP server's bind: NIO names the system call, not the address.
            throw ControlError.config(
                "cannot serve on \(host):\(daemon.endpoint.port): \(String(cString: strerror(error.errnoCode)))")
        } catch {
            await daemon.shutdown()
            throw ControlError.config("the daemon stopped: \(error)")
        }
        await daemon.shutdown()
        notifier.stopping()
        Output.line("wallctl: stopped; sent \(daemon.origin.server.bytesSent) bytes")
    }

    /// How long after SIGTERM or SIGINT the daemon ends, gracefully or not (the unit gives it 5 s).
    static let shutdownLimit = 2.0
}
