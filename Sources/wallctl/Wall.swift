import ArgumentParser
import Foundation
import LockstepTime
import WallProtocol

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The options every wall command takes.
struct WallOptions: ParsableArguments {
    @Option(help: "The wall's config file (YAML).")
    var config: String

    @Option(help: "Only these nodes (comma-separated ids); all by default.")
    var nodes: String?

    @Option(help: "Seconds to wait for the nodes to answer and get ready.")
    var timeout: Double = 30

    func validate() throws {
        guard timeout.isFinite, timeout > 0 else {
            throw ValidationError("--timeout must be a positive number of seconds")
        }
    }

    /// The wall: its config and a client per node.
    func wall() throws -> Wall {
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
        let session = URLSession(configuration: .ephemeral)
        let limit = MediaTime(seconds: timeout, preferredTimescale: 1000)
        return Wall(
            config: config, clients: try selected.map { try NodeClient(node: $0, session: session, timeout: limit) })
    }
}

/// The nodes of a wall, addressed together.
struct Wall: Sendable {
    let config: WallConfig
    let clients: [NodeClient]

    /// Runs `work` on every node at once. Returns the results by node id, or throws naming every
    /// node that failed and why.
    func everyNode<T: Sendable>(
        _ work: @escaping @Sendable (NodeClient) async throws(ControlError) -> T
    ) async throws -> [String: T] {
        let outcomes = await withTaskGroup(of: (String, Result<T, ControlError>).self) { group in
            for client in clients {
                group.addTask {
                    do throws(ControlError) {
                        return (client.id, .success(try await work(client)))
                    } catch {
                        return (client.id, .failure(error))
                    }
                }
            }
            var all: [String: Result<T, ControlError>] = [:]
            for await (id, outcome) in group { all[id] = outcome }
            return all
        }
        var results: [String: T] = [:]
        var failures: [String: String] = [:]
        for (id, outcome) in outcomes {
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
