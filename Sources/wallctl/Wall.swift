import ArgumentParser
import AsyncHTTPClient
import Foundation
import LockstepTime
import NIOCore
import NIOPosix
import NIOSSL
import WallControl
import WallProtocol

/// The options every wall command takes.
struct WallOptions: ParsableArguments {
    @Option(help: "The wall's config file (YAML).")
    var config: String

    @Option(help: "Only these nodes (comma-separated ids); all by default.")
    var nodes: String?

    @Option(help: "Seconds each request to a node may take, from connecting to the last byte of its answer.")
    var timeout: Double = 30

    func validate() throws {
        guard timeout.isFinite, timeout > 0 else {
            throw ValidationError("--timeout must be a positive number of seconds")
        }
    }

    /// Runs `body` with the wall, then shuts the wall's HTTP client down, whether `body` threw or
    /// not: one client per command, shut down once.
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
        let config: WallConfig
        do {
            config = try WallConfig.load(path: self.config)
        } catch {
            throw ControlError.config(error.description)
        }
        var selected = config.nodes
        if let nodes {
            let wanted = nodes.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }
            let unknown = wanted.filter { id in !config.nodes.contains { $0.id == id } }
            guard unknown.isEmpty else { throw ControlError.unknownNodes(unknown) }
            selected = config.nodes.filter { wanted.contains($0.id) }
        }
        let connection = try ControlConnection(
            config: config, nodes: selected, timeout: MediaTime(seconds: timeout, preferredTimescale: 1000))
        return Wall(config: config, http: connection.http, clients: connection.clients)
    }
}

/// The nodes of a wall, addressed together.
struct Wall: Sendable {
    let config: WallConfig
    let http: HTTPClient
    let clients: [NodeClient]

    /// Shuts the HTTP client down: its connections close, and no request can be made after.
    func shutdown() async throws {
        try await http.shutdown()
    }

    /// Runs `work` on every node at once: each node's result or error, by node id.
    func eachNode<T: Sendable>(
        _ work: @escaping @Sendable (NodeClient) async throws(ControlError) -> T
    ) async -> [String: Result<T, ControlError>] {
        await withTaskGroup(of: (String, Result<T, ControlError>).self) { group in
            for client in clients {
                group.addTask {
                    // Assigned here and returned after the `do`: Swift 6.3 at -O miscompiles a
                    // `return` inside `do throws(E)` in an async closure whose result is generic
                    // (a task group child's), leaving the result uninitialised. Release builds
                    // then crashed in swift_retain when the group copied it out.
                    let outcome: Result<T, ControlError>
                    do throws(ControlError) {
                        outcome = .success(try await work(client))
                    } catch {
                        outcome = .failure(error)
                    }
                    return (client.id, outcome)
                }
            }
            var all: [String: Result<T, ControlError>] = [:]
            for await (id, outcome) in group { all[id] = outcome }
            return all
        }
    }

    /// Runs `work` on every node at once. Returns the results by node id, or throws naming every
    /// node that failed and why.
    func everyNode<T: Sendable>(
        _ work: @escaping @Sendable (NodeClient) async throws(ControlError) -> T
    ) async throws -> [String: T] {
        var results: [String: T] = [:]
        var failures: [String: String] = [:]
        for (id, outcome) in await eachNode(work) {
            switch outcome {
            case .success(let value): results[id] = value
            case .failure(let error): failures[id] = error.description
            }
        }
        guard failures.isEmpty else { throw WallFailure(failures: failures) }
        return results
    }
}

/// Some nodes failed a wall command: each is named with its reason.
struct WallFailure: Error, CustomStringConvertible {
    let failures: [String: String]

    var description: String {
        let lines = failures.sorted { $0.key < $1.key }.map { "  \($0.key): \($0.value)" }
        return "\(failures.count) node\(failures.count == 1 ? "" : "s") failed:\n" + lines.joined(separator: "\n")
    }
}
