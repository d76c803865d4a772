import ArgumentParser
import Foundation
import GroundTruth
import LockstepLocks
import LockstepNet
import LockstepTime
import WallAnalysis
import WallControl
import WallProtocol

/// `wallctl drift`: how far apart the screens really are.
struct DriftCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drift",
        abstract: "Measure how far apart the screens present each frame, per node and per pair.",
        discussion: """
            Every node records, for each frame, when its sink presented it on the master clock; \
            wallctl collects those records, aligns the frames across nodes and reports the skew \
            (mean, p50, p95, p99, max), clock error bounds, late and dropped frames, and a verdict \
            against --threshold. The nodes measure against their own estimates of the master clock, \
            so each frame's skew between two nodes is judged with the sum of their clocks' error \
            bounds at that time added (less error the two share when they follow one relay): PASS \
            when the p99 is within the threshold even then, FAIL when it is over even with them taken \
            away, UNCERTAIN otherwise. With --ground-truth ID=PORT for each node whose video sink sends its frames over \
            UDP as it renders (udpsink sync=true, frame-code media), wallctl also receives those frames \
            itself, stamps their arrival in the kernel and reports whether that ground truth confirms \
            the threshold, which settles an UNCERTAIN verdict. Exits 0 on PASS (or UNCERTAIN that the \
            ground truth confirms), 1 on FAIL or when the ground truth disagrees, 3 on UNCERTAIN.
            """)

    @OptionGroup var options: WallOptions

    @Option(help: "How long to measure, in seconds.")
    var duration: Double

    @Option(help: "Skew threshold for the verdict, in milliseconds.")
    var threshold: Double = 1

    @Option(help: "Write the reports as JSON to this file (-: standard output, the tables then on stderr).")
    var json: String?

    @Option(help: "Write a plot of skew over time per node to this SVG file (-: standard output).")
    var plot: String?

    @Option(
        name: .customLong("ground-truth"),
        help: ArgumentHelp(
            "A node whose sink sends rendered frames to this machine: ID=PORT. Repeat for each node.",
            valueName: "id=port"))
    var groundTruth: [String] = []

    @Option(
        name: .customLong("ground-truth-bind"),
        help: ArgumentHelp(
            "The address of this machine the --ground-truth ports listen on (default 127.0.0.1; 0.0.0.0 for any).",
            valueName: "address"))
    var groundTruthBind = "127.0.0.1"

    @Option(help: "Seconds between polls of the nodes' frame records.")
    var poll: Double = 0.25

    func validate() throws {
        guard !(json == "-" && plot == "-") else {
            throw ValidationError("--json - and --plot - cannot both write to standard output")
        }
        guard duration.isFinite, duration > 0 else {
            throw ValidationError("--duration must be a positive number of seconds")
        }
        guard threshold.isFinite, threshold > 0 else {
            throw ValidationError("--threshold must be a positive number of ms")
        }
        guard poll.isFinite, poll >= 0.01, poll <= 5 else { throw ValidationError("--poll must be 0.01 to 5 seconds") }
        _ = try groundTruthPorts()
        _ = try groundTruthAddress()
    }

    /// `--ground-truth-bind` as a socket address (its port unused).
    private func groundTruthAddress() throws -> SocketAddress {
        guard let address = SocketAddress(numericHost: groundTruthBind, port: 0) else {
            throw ValidationError(
                "--ground-truth-bind takes a numeric IPv4 or IPv6 address of this machine, got \"\(groundTruthBind)\"")
        }
        return address
    }

    /// `--ground-truth` as node id → UDP port.
    private func groundTruthPorts() throws -> [(node: String, port: UInt16)] {
        try groundTruth.map { entry in
            let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, let port = UInt16(parts[1]), port > 0 else {
                throw ValidationError("--ground-truth takes ID=PORT (like top-left=6101), got \"\(entry)\"")
            }
            return (parts[0], port)
        }
    }

    func run() async throws {
        try await options.withWall { wall in
            let ids = wall.clients.map(\.id)
            let truthPorts = try groundTruthPorts()
            let unknown = truthPorts.map(\.node).filter { !ids.contains($0) }
            guard unknown.isEmpty else { throw ControlError.unknownNodes(unknown) }
            if !truthPorts.isEmpty, Set(truthPorts.map(\.node)) != Set(ids) {
                throw ValidationError("--ground-truth must name every node measured (\(ids.joined(separator: ", ")))")
            }

            var analyzer = try DriftAnalyzer(
                nodes: ids,
                configuration: DriftAnalyzer.Configuration(
                    threshold: MediaTime(seconds: threshold / 1000, preferredTimescale: 1_000_000)))
            var comparison = truthPorts.isEmpty ? nil : try GroundTruthComparison(nodes: ids)
            let truthAddress = try groundTruthAddress()
            let collector =
                try truthPorts.isEmpty ? nil : TruthCollector(wall: wall, ports: truthPorts, address: truthAddress)

            /// Notes every node's status (clock error bound, late and dropped counters) in the report.
            func recordStatuses() async throws -> [String: NodeStatus] {
                let statuses = try await wall.everyNode { client throws(ControlError) in
                    try await client.status().status
                }
                for status in statuses.values { try analyzer.record(status) }
                return statuses
            }

            // Start from what the nodes present from now on; their counters count from here too.
            var after = try await recordStatuses().mapValues(\.player.framesPresented)
            let end = LocalClock.monotonic.now() + MediaTime(seconds: duration, preferredTimescale: 1000)
            var lastStatus = LocalClock.monotonic.now()
            while LocalClock.monotonic.now() < end {
                try await Task.sleep(for: .milliseconds(Int(poll * 1000)))
                let replies = try await wall.everyNode { [after] client throws(ControlError) in
                    try await client.frames(after: after[client.id] ?? 0)
                }
                for (id, reply) in replies {
                    if let last = reply.records.last { after[id] = last.sequence }
                    let aligned = try analyzer.ingest(reply)
                    try comparison?.ingest(aligned)
                }
                if let collector { try comparison?.ingest(collector.drain()) }
                if LocalClock.monotonic.now() - lastStatus > MediaTime(value: 2, timescale: 1) {
                    lastStatus = LocalClock.monotonic.now()
                    _ = try await recordStatuses()
                }
            }
            _ = try await recordStatuses()
            collector?.stop()
            analyzer.finish()
            if let collector { try comparison?.ingest(collector.drain()) }
            comparison?.finish()
            var report = analyzer.report()
            // A FAIL says why: each node measures what a frame costs its machine, against the frame period.
            if report.verdict.outcome == .fail {
                let costs = await wall.eachNode { client throws(ControlError) in try await client.check().frameCost }
                report = analyzer.report(
                    frameCosts: costs.compactMapValues { outcome in (try? outcome.get()) ?? nil })
            }
            let truth = comparison?.report()

            // With --json - (or --plot -) standard output carries the data, and the tables go to stderr.
            let dataOnStandardOutput = json == "-" || plot == "-"
            let say = { (text: String) in dataOnStandardOutput ? Output.note(text) : Output.line(text) }
            say(report.table())
            if let truth {
                say(truth.table())
                for node in truth.nodes where node.arrivals == 0 {
                    let port = truthPorts.first { $0.node == node.node }?.port ?? 0
                    say(
                        "ground truth: no datagram arrived from \(node.node) on \(truthAddress.withPort(port)): is its "
                            + "video sink a udpsink sending frame-code frames to this machine, port \(port)?")
                }
            }
            if let json {
                try write(try DriftReports(drift: report, groundTruth: truth).jsonData(), to: json)
            }
            if let plot {
                try write(Data(DriftPlot(report: report).svg().utf8), to: plot)
            }
            if let truth {
                guard truth.verdict.confirmed, report.verdict.outcome != .fail else { throw ExitCode(1) }
                return
            }
            switch report.verdict.outcome {
            case .pass: return
            case .fail: throw ExitCode(1)
            case .uncertain: throw ExitCode(3)
            }
        }
    }

    /// Writes `data` to the file at `path`, or to standard output when `path` is "-".
    private func write(_ data: Data, to path: String) throws {
        if path == "-" {
            FileHandle.standardOutput.write(data)
            if data.last != UInt8(ascii: "\n") { FileHandle.standardOutput.write(Data("\n".utf8)) }
            return
        }
        do {
            try data.write(to: URL(fileURLWithPath: path))
        } catch {
            throw ControlError.config("cannot write \(path): \(error.localizedDescription)")
        }
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

    init(wall: Wall, ports: [(node: String, port: UInt16)], address: SocketAddress) throws {
        do {
            receiver = try FrameReceiver(count: ports.count, ports: ports.map(\.port), address: address)
        } catch {
            throw ControlError.config(
                "cannot listen for ground truth on \(address.host) ports \(ports.map { String($0.port) }.joined(separator: ", ")): \(error)"
            )
        }
        var nodeOfPort: [UInt16: (id: String, width: Int, height: Int)] = [:]
        for (node, port) in ports {
            let output = wall.config.node(node)?.output
            nodeOfPort[port] = (node, output?.width ?? 8, output?.height ?? 8)
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
