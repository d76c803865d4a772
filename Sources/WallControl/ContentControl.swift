import Foundation
import LockstepTime
import WallProtocol
import WallTimeline

/// Getting content onto a wall: every node told which files it needs (by content ID, with the name
/// an operator knows them by), fetching them from its peers or from an origin, and a report of
/// their progress until every node holds every file.
public struct ContentControl: Sendable {
    public let wall: Wall

    public init(wall: Wall) {
        self.wall = wall
    }

    /// One node's progress: what it holds of what it needs, how fast it comes, and what stands in
    /// the way.
    public struct Progress: Sendable, Hashable {
        public var node: String
        public var have: UInt64
        public var total: UInt64
        public var bytesPerSecond: Double?
        public var source: String?
        public var problem: String?
        /// Whether the node holds every file it needs, verified (a transfer that has every byte is
        /// not done until its digest matched).
        public var done = false

        /// "n1  12.0/40.0 MB  5.1 MB/s  6 s left  from n0".
        public var line: String {
            var text = "\(node)  \(Self.megabytes(have))/\(Self.megabytes(total)) MB"
            if done { return text + "  ready" }
            if let rate = bytesPerSecond, rate > 0 {
                text += String(format: "  %.1f MB/s  %.0f s left", rate / 1e6, Double(total - have) / rate)
            }
            if let source { text += "  from \(source)" }
            if let problem { text += "  (\(problem))" }
            return text
        }

        static func megabytes(_ bytes: UInt64) -> String { String(format: "%.1f", Double(bytes) / 1e6) }
    }

    /// Tells every node to hold its files of `needs` (by node id), fetching from `origins` when no
    /// peer holds them; calls `report` with every node's progress about twice a second until every
    /// node holds all of its files. Throws naming the nodes that do not within the wall's wait
    /// limit.
    public func distribute(
        _ needs: [String: [ContentNeed]], origins: [String], report: @Sendable ([Progress]) -> Void
    ) async throws {
        let began = LocalClock.monotonic.now()
        var done: Set<String> = []
        while true {
            // Asked again each round until it holds everything: a node restarted meanwhile forgets.
            // A node down for a moment (restarted) is waited for, like one still fetching.
            let outcomes = await wall.eachNode { [done] client throws(ControlError) in
                if !done.contains(client.id) {
                    try await client.fetch(ContentFetchRequest(content: needs[client.id] ?? [], origins: origins))
                }
                return try await client.content()
            }
            let progress = outcomes.keys.sorted().map { id in
                switch outcomes[id]! {
                case .success(let report): return Self.progress(of: report, needs: needs[id] ?? [])
                case .failure(let error):
                    if error.isLasting { return Progress(node: id, have: 0, total: 1, problem: "\(error)") }
                    // Not done: it did not say it holds anything.
                    return Progress(
                        node: id, have: 0, total: (needs[id] ?? []).reduce(0) { $0 + $1.id.size },
                        problem: "\(error)")
                }
            }
            for (id, outcome) in outcomes {
                if case .failure(let error) = outcome, error.isLasting { throw WallFailure(failures: [id: error]) }
            }
            report(progress)
            if progress.allSatisfy(\.done) { return }
            done = Set(progress.filter(\.done).map(\.node))
            let waited = LocalClock.monotonic.now() - began
            guard waited < wall.waitLimit else {
                throw ControlError.notReady(
                    nodes: Dictionary(
                        uniqueKeysWithValues: progress.filter { !$0.done }.map {
                            ($0.node, "has \($0.line) after waiting \(String(format: "%.1f", waited.seconds)) s")
                        }))
            }
            try await Task.sleep(for: .milliseconds(500))
        }
    }

    /// What `report` says of `needs`.
    static func progress(of report: ContentReport, needs: [ContentNeed]) -> Progress {
        let held = Set(report.held)
        var progress = Progress(node: report.node, have: 0, total: 0)
        progress.done = needs.allSatisfy { held.contains($0.id) }
        var rate = 0.0
        for need in needs {
            progress.total += need.id.size
            if held.contains(need.id) {
                progress.have += need.id.size
            } else if let transfer = report.transfers.first(where: { $0.id == need.id }) {
                progress.have += min(transfer.have, need.id.size)
                rate += transfer.bytesPerSecond ?? 0
                progress.source = progress.source ?? transfer.source
                progress.problem = progress.problem ?? transfer.problem
            }
        }
        progress.bytesPerSecond = rate > 0 ? rate : nil
        return progress
    }

    /// The files each node needs for `files` (paths on this machine; a path with `{id}` is each
    /// node's own tile), by node id, and where each ID's file is here. Reads every file once.
    public static func needs(files: [String], nodes: [String], digest: (String) throws -> ContentID) throws
        -> (needs: [String: [ContentNeed]], paths: [ContentID: String])
    {
        var needs: [String: [ContentNeed]] = [:]
        var paths: [ContentID: String] = [:]
        var known: [String: ContentID] = [:]
        for file in files {
            for node in nodes {
                let path = file.replacingOccurrences(of: "{id}", with: node)
                let id = try known[path] ?? digest(path)
                known[path] = id
                paths[id] = path
                needs[node, default: []].append(ContentNeed(id: id, name: file))
            }
        }
        return (needs, paths)
    }
}
