import Foundation
import GroundTruth
import LockstepLocks
import LockstepNet
import LockstepTime
import WallAnalysis
import WallProtocol

/// How far apart the screens really are, measured for a while: what `wallctl drift` runs. Every
/// node's frame records are polled and aligned (`DriftAnalyzer`); with ground truth, the frames the
/// nodes' sinks send as they render are received here too and compared (`GroundTruthComparison`).
/// The clock it measures its duration on and the way it sleeps between polls are given, so a test
/// runs it in simulated time.
public struct DriftMeasurement: Sendable {
    /// Where a node's sink sends its rendered frames: a UDP port of this machine.
    public struct TruthPort: Sendable, Hashable {
        public var node: String
        public var port: UInt16

        public init(node: String, port: UInt16) {
            self.node = node
            self.port = port
        }
    }

    /// What a measurement found, and what it means.
    public struct Outcome: Sendable {
        public var report: DriftReport
        public var truth: GroundTruthReport?
        /// Nodes with ground truth whose sink sent nothing here, and where it was awaited.
        public var silentTruth: [(node: String, address: SocketAddress)]

        /// The verdict as the command's exit status: 0 on PASS (or an UNCERTAIN the ground truth
        /// confirms), 1 on FAIL or when the ground truth disagrees, 3 on UNCERTAIN.
        public var exitStatus: Int32 {
            if let truth { return truth.verdict.confirmed && report.verdict.outcome != .fail ? 0 : 1 }
            switch report.verdict.outcome {
            case .pass: return 0
            case .fail: return 1
            case .uncertain: return 3
            }
        }
    }

    public let wall: Wall
    public let threshold: MediaTime
    public let poll: Duration
    public let truthPorts: [TruthPort]
    public let truthAddress: SocketAddress
    /// The clock the duration and the status interval are measured on.
    let now: @Sendable () -> MediaTime
    /// How it waits between polls.
    let sleep: @Sendable (Duration) async throws -> Void

    /// How often the nodes' statuses (clock error bounds, late and dropped counters) are noted.
    static let statusInterval = MediaTime(value: 2, timescale: 1)

    /// - Throws: `ControlError.unknownNodes` for ground truth of a node not in the wall; a
    ///   `ControlError.config` when ground truth does not name every node measured.
    public init(
        wall: Wall, threshold: MediaTime, poll: Duration = .milliseconds(250), truthPorts: [TruthPort] = [],
        truthAddress: SocketAddress = .ipv4Loopback(port: 0),
        now: @escaping @Sendable () -> MediaTime = { LocalClock.monotonic.now() },
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) throws(ControlError) {
        let ids = wall.clients.map(\.id)
        let unknown = truthPorts.map(\.node).filter { !ids.contains($0) }
        guard unknown.isEmpty else { throw .unknownNodes(unknown) }
        if !truthPorts.isEmpty, Set(truthPorts.map(\.node)) != Set(ids) {
            throw .config("ground truth must name every node measured (\(ids.joined(separator: ", ")))")
        }
        self.wall = wall
        self.threshold = threshold
        self.poll = poll
        self.truthPorts = truthPorts
        self.truthAddress = truthAddress
        self.now = now
        self.sleep = sleep
    }

    /// Measures for `duration` on its clock: from the frames the nodes present from now on, their
    /// counters counted from here too. A FAIL says why: each node's frame cost against the period.
    public func run(for duration: MediaTime) async throws -> Outcome {
        let ids = wall.clients.map(\.id)
        var analyzer = try DriftAnalyzer(nodes: ids, configuration: DriftAnalyzer.Configuration(threshold: threshold))
        var comparison = truthPorts.isEmpty ? nil : try GroundTruthComparison(nodes: ids)
        let collector =
            try truthPorts.isEmpty ? nil : TruthCollector(wall: wall, ports: truthPorts, address: truthAddress)
        defer { collector?.stop() }

        /// Notes every node's status (clock error bound, late and dropped counters) in the report.
        func recordStatuses() async throws -> [String: NodeStatus] {
            let statuses = try await wall.everyNode { client throws(ControlError) in try await client.status().status }
            for status in statuses.values { try analyzer.record(status) }
            return statuses
        }

        var after = try await recordStatuses().mapValues(\.player.framesPresented)
        let end = now() + duration
        var lastStatus = now()
        while now() < end {
            try await sleep(poll)
            let replies = try await wall.everyNode { [after] client throws(ControlError) in
                try await client.frames(after: after[client.id] ?? 0)
            }
            for (id, reply) in replies {
                if let last = reply.records.last { after[id] = last.sequence }
                let aligned = try analyzer.ingest(reply)
                try comparison?.ingest(aligned)
            }
            if let collector { try comparison?.ingest(collector.drain()) }
            if now() - lastStatus > Self.statusInterval {
                lastStatus = now()
                _ = try await recordStatuses()
            }
        }
        _ = try await recordStatuses()
        collector?.stop()
        analyzer.finish()
        if let collector { try comparison?.ingest(collector.drain()) }
        comparison?.finish()
        var report = analyzer.report()
        if report.verdict.outcome == .fail {
            let costs = await wall.eachNode { client throws(ControlError) in try await client.check().frameCost }
            report = analyzer.report(frameCosts: costs.compactMapValues { outcome in (try? outcome.get()) ?? nil })
        }
        let truth = comparison?.report()
        let silent = (truth?.nodes ?? []).filter { $0.arrivals == 0 }.map { node in
            (node.node, truthAddress.withPort(truthPorts.first { $0.node == node.node }?.port ?? 0))
        }
        return Outcome(report: report, truth: truth, silentTruth: silent)
    }
}

/// Receives the frames the nodes' sinks send as they render, and hands them over decoded.
final class TruthCollector: Sendable {
    private final class Buffer: Sendable {
        let arrivals = Mutex<[GroundTruthArrival]>([])
    }

    private let receiver: FrameReceiver
    private let received = Buffer()
    private let reader: Task<Void, Never>

    init(wall: Wall, ports: [DriftMeasurement.TruthPort], address: SocketAddress) throws(ControlError) {
        do {
            receiver = try FrameReceiver(count: ports.count, ports: ports.map(\.port), address: address)
        } catch {
            throw .config(
                "cannot listen for ground truth on \(address.host) ports "
                    + "\(ports.map { String($0.port) }.joined(separator: ", ")): \(error)")
        }
        var nodeOfPort: [UInt16: (id: String, width: Int, height: Int)] = [:]
        for truth in ports {
            let output = wall.config.node(truth.node)?.output
            nodeOfPort[truth.port] = (truth.node, output?.width ?? 8, output?.height ?? 8)
        }
        let lookup = nodeOfPort
        let stream = receiver.arrivals
        let buffer = received
        reader = Task {
            for await arrival in stream {
                guard let node = lookup[arrival.port],
                    let decoded = GroundTruthArrival(
                        decoding: arrival, node: node.id, width: node.width, height: node.height)
                else { continue }
                buffer.arrivals.withLock { $0.append(decoded) }
            }
        }
    }

    /// The frames received since the last call, in arrival order.
    func drain() -> [GroundTruthArrival] {
        received.arrivals.withLock { all in
            defer { all.removeAll(keepingCapacity: true) }
            return all
        }
    }

    func stop() {
        receiver.stop()
        reader.cancel()
    }
}
