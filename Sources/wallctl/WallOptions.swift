import ArgumentParser
import Foundation
import LockstepTime
import WallControl
import WallProtocol

/// The options every wall command takes.
struct WallOptions: ParsableArguments {
    @Option(help: "The wall's config file (YAML).")
    var config: String

    @Option(help: "Only these nodes (comma-separated ids); all by default.")
    var nodes: String?

    @Option(
        help: ArgumentHelp(
            "Seconds a command waits for what it needs (nodes answering, clocks locked, media present) and for "
                + "every screen to carry it out."))
    var timeout: Double = 30

    func validate() throws {
        guard timeout.isFinite, timeout > 0, timeout <= 86_400 else {
            throw ValidationError("--timeout must be a positive number of seconds, at most a day")
        }
    }

    /// Runs `body` with the wall, then shuts the wall's HTTP client down, whether `body` threw or
    /// not: one client per command, shut down once.
    @discardableResult
    func withWall<T>(_ body: (Wall) async throws -> T) async throws -> T {
        let wall = try wall()
        let result: Result<T, any Error>
        do {
            result = .success(try await body(wall))
        } catch {
            result = .failure(error)
        }
        try await wall.shutdown()
        return try result.get()
    }

    /// The wall: its config and a client per node, sharing one HTTP client.
    private func wall() throws -> Wall {
        let config = try loadConfig(self.config)
        let only = nodes.map { $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) } }
        return try Wall(
            config: config, only: only, waitLimit: MediaTime(seconds: timeout, preferredTimescale: 1000),
            say: { Output.line($0) })
    }
}

extension MediaTime {
    /// Milliseconds with three decimals, for reports.
    var milliseconds: String { String(format: "%.3f ms", seconds * 1000) }
}

/// The wall config at `path`, or the loader's sentence for what is wrong with it.
func loadConfig(_ path: String) throws -> WallConfig {
    do {
        return try WallConfig.load(path: path)
    } catch {
        throw ControlError.config(error.description)
    }
}
