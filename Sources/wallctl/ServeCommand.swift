import ArgumentParser
import Foundation
import LockstepCLI
import LockstepNet
import WallContent
import WallControl
import WallProtocol

/// `wallctl serve`: the wall's control daemon.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the wall's control daemon: the content library the nodes fetch from.",
        discussion: """
            Optional: the wall plays without it, every node holding its desired state. It keeps the content \
            library (controller.library in the config, else controller-library in the state directory): \
            wallctl push uploads each file to it once, verified, and the nodes fetch what their timeline names \
            from each other first and from it, also a node replaced or restarted long after the push. It listens \
            on controller.listen, answering only requests with the wall's control token where the config has \
            one, over HTTPS where it has control-tls (its certificate must name this address too). Runs until \
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
        let token: String?
        do {
            token = try wall.security.tokenFile.map { try ControlToken(contentsOfFile: $0).authorization }
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
        let origin = ContentOrigin(library: library, authorization: token)
        let tls = try originTLS(wall)
        let notifier = ServiceNotifier.fromEnvironment()
        let serving = Task {
            try await origin.run(host: endpoint.host, port: Int(endpoint.port), tls: tls) { port in
                Output.line(
                    "wallctl: serving wall \(wall.name)'s content library \(folder) (\(library.holdings().count) files) "
                        + "on \(endpoint.host):\(port)")
                notifier.ready(status: "content library on \(endpoint.host):\(port)")
            }
        }
        Termination.onHangup { Output.line("wallctl: SIGHUP ignored; the daemon keeps serving") }
        let stopped = Task {
            _ = await Termination.wait(seconds: nil)
            serving.cancel()
        }
        do {
            try await serving.value
        } catch is CancellationError {
        } catch {
            stopped.cancel()
            throw ControlError.config("cannot serve on \(controller.listen): \(error)")
        }
        notifier.stopping()
        Output.line("wallctl: stopped; sent \(origin.server.bytesSent) bytes")
    }
}
