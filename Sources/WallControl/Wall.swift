import AsyncHTTPClient
import Foundation
import LockstepGuard
import LockstepTime
import WallProtocol
import WallTimeline

/// The nodes of a wall, addressed together over one HTTP client: what `wallctl` drives.
public struct Wall: Sendable {
    public let config: WallConfig
    public let http: HTTPClient
    public let clients: [NodeClient]
    /// The wall's control token; nil: the wall has none.
    public let token: ControlToken?
    /// How long a command may wait for what it needs (nodes answering, clocks usable, media there).
    public let waitLimit: MediaTime
    /// Where a command says what it waits for and what it did.
    public let say: @Sendable (String) -> Void

    /// How often a waiting command asks the nodes again.
    static let pollInterval = Duration.milliseconds(250)
    /// The longest one request may take while a command waits: a node that does not answer is
    /// asked again rather than waited on for the whole limit.
    static let requestLimit = MediaTime(value: 5, timescale: 1)

    /// The wall of `config`, or of its nodes in `only` (ids), with every command waiting at most
    /// `waitLimit`.
    public init(
        config: WallConfig, only: [String]? = nil, waitLimit: MediaTime,
        say: @escaping @Sendable (String) -> Void = { _ in }
    ) throws(ControlError) {
        var selected = config.nodes
        if let only {
            let unknown = only.filter { id in !config.nodes.contains { $0.id == id } }
            guard unknown.isEmpty else { throw .unknownNodes(unknown) }
            selected = config.nodes.filter { only.contains($0.id) }
        }
        let connection = try ControlConnection(
            config: config, nodes: selected, timeout: MediaTime.minimum(waitLimit, Self.requestLimit))
        self.config = config
        http = connection.http
        clients = connection.clients
        token = connection.token
        self.waitLimit = waitLimit
        self.say = say
    }

    /// Shuts the HTTP client down: its connections close, and no request can be made after.
    public func shutdown() async throws {
        try await http.shutdown()
    }

    /// Runs `work` on every node at once: each node's result or error, by node id.
    public func eachNode<T: Sendable>(
        _ work: @escaping @Sendable (NodeClient) async throws(ControlError) -> T
    ) async -> [String: Result<T, ControlError>] {
        await withTaskGroup(of: (String, Result<T, ControlError>).self) { group in
            for client in clients {
                group.addTask { (client.id, await Result.of { () throws(ControlError) in try await work(client) }) }
            }
            var all: [String: Result<T, ControlError>] = [:]
            for await (id, outcome) in group { all[id] = outcome }
            return all
        }
    }

    /// Runs `work` on every node at once. Returns the results by node id, or throws naming every
    /// node that failed and why.
    public func everyNode<T: Sendable>(
        _ work: @escaping @Sendable (NodeClient) async throws(ControlError) -> T
    ) async throws -> [String: T] {
        var results: [String: T] = [:]
        var failures: [String: ControlError] = [:]
        for (id, outcome) in await eachNode(work) {
            switch outcome {
            case .success(let value): results[id] = value
            case .failure(let error): failures[id] = error
            }
        }
        guard failures.isEmpty else { throw WallFailure(failures: failures, succeeded: Set(results.keys)) }
        return results
    }

    // MARK: Waiting

    /// Asks every node with `check` until it has what the command needs (nil), or until
    /// `waitLimit`; says once what it waits for, and again when that changes. Returns what each
    /// node answered; throws naming the nodes still waited for.
    ///
    /// - Parameter check: what a node still lacks, or nil; its error counts as what it lacks.
    public func waitFor<T: Sendable>(
        _ what: String, _ check: @escaping @Sendable (NodeClient) async throws(ControlError) -> (T, String?)
    ) async throws -> [String: T] {
        let began = LocalClock.monotonic.now()
        var said: [String: String] = [:]
        while true {
            var answers: [String: T] = [:]
            var lacking: [String: String] = [:]
            var lasting: [String: ControlError] = [:]
            for (id, outcome) in await eachNode(check) {
                switch outcome {
                case .success((let answer, let lack)):
                    answers[id] = answer
                    if let lack { lacking[id] = lack }
                case .failure(let error):
                    lacking[id] = error.description
                    if error.isLasting { lasting[id] = error }
                }
            }
            // What waiting cannot change ends the command at once.
            guard lasting.isEmpty else { throw WallFailure(failures: lasting) }
            let waited = LocalClock.monotonic.now() - began
            if lacking.isEmpty {
                if !said.isEmpty { say("\(what): every node ready after \(String(format: "%.1f", waited.seconds)) s") }
                return answers
            }
            guard waited < waitLimit else {
                throw ControlError.notReady(
                    nodes: lacking.mapValues { "\($0), after waiting \(String(format: "%.1f", waited.seconds)) s" })
            }
            if lacking != said {
                say(
                    "waiting for \(what): "
                        + lacking.sorted { $0.key < $1.key }.map { "\($0.key) (\($0.value))" }.joined(separator: "; "))
                said = lacking
            }
            try await Task.sleep(for: Self.pollInterval)
        }
    }

    /// Waits until every node answers with a clock a wall can play on (`ClockReport.usable`) and
    /// says the master's time; returns their statuses.
    public func waitForClocks() async throws -> [String: NodeStatus] {
        try await waitFor("clocks") { client throws(ControlError) in
            let status = try await client.status().status
            if !status.clock.usable { return (status, "clock \(status.clock.state)") }
            if status.masterTime == nil { return (status, "no master time yet") }
            return (status, nil)
        }
    }

    /// Waits until every node has every file of `media` (paths or `{id}` templates); returns each
    /// node's lengths of them, in order.
    ///
    /// - Parameter content: by node id, the content the wall distributes for each of `media` (nil
    ///   for a file in the media roots): the node measures its own copy.
    public func waitForMedia(_ media: [String], content: [String: [ContentID?]] = [:]) async throws
        -> [String: [MediaTime]]
    {
        guard !media.isEmpty else { return [:] }
        return try await waitFor("media") { client throws(ControlError) in
            do throws(ControlError) {
                return (try await client.mediaDurations(media, content: content[client.id]), nil)
            } catch .refused(let node, _, let reason) {
                // A file not there yet may come (copied, or pushed); one outside the media roots, or
                // not a playable video, will not by waiting.
                guard reason.hasSuffix(": no such file") || reason.hasSuffix("content store yet") else {
                    throw .unplayable(node: node, reason: reason)
                }
                return ([], reason)
            }
        }
    }

    // MARK: The master's time

    /// The master's time now, as the node that answers fastest tells it (it read its master time
    /// about half a round trip before its answer arrived), and the slowest round trip.
    public func masterNow() async throws -> (time: MediaTime, slowestRoundTrip: MediaTime) {
        try Self.masterNow(from: try await everyNode { client throws(ControlError) in try await client.status() })
    }

    /// The master's time now, from status answers read a moment ago: the fastest one's, plus half
    /// its round trip and what passed since; and the slowest round trip.
    public static func masterNow(
        from samples: [String: StatusSample]
    ) throws -> (time: MediaTime, slowestRoundTrip: MediaTime) {
        guard let fastest = samples.values.min(by: { $0.roundTrip < $1.roundTrip }),
            let master = fastest.status.masterTime
        else { throw ControlError.notReady(nodes: ["wall": "no node reported the master time"]) }
        let slowest = samples.values.map(\.roundTrip).max() ?? .zero
        let now =
            master + fastest.roundTrip.multiplied(byRatio: 1, 2) + (LocalClock.monotonic.now() - fastest.receivedAt)
        return (now, slowest)
    }
}

/// Some nodes failed a wall command: each is named with its reason, and the nodes that carried it
/// out are named too.
public struct WallFailure: Error, CustomStringConvertible {
    public let failures: [String: ControlError]
    /// The nodes that carried the command out: with any, the wall is split.
    public let succeeded: Set<String>

    public init(failures: [String: ControlError], succeeded: Set<String> = []) {
        self.failures = failures
        self.succeeded = succeeded
    }

    public var description: String {
        let lines = failures.sorted { $0.key < $1.key }.map { "  \($0.key): \($0.value)" }
        let split =
            succeeded.isEmpty
            ? "" : "; \(succeeded.sorted().joined(separator: ", ")) carried it out, so the wall is split"
        return "\(failures.count) node\(failures.count == 1 ? "" : "s") failed\(split):\n"
            + lines.joined(separator: "\n")
    }

    /// The HTTP status a daemon answers it with: the request's own fault (4xx) when every node
    /// refused it for what it asked (a still outside the media roots), the wall's (502) otherwise,
    /// and whenever some nodes carried it out: the request changed the wall, so it was not simply
    /// refused.
    public var httpStatus: Int {
        let statuses = Set(failures.values.map(\.httpStatus))
        guard succeeded.isEmpty, statuses.allSatisfy({ (400..<500).contains($0) }) else { return 502 }
        return statuses.max() ?? 502
    }
}
