import ArgumentParser
import Foundation
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
    private func groundTruthPorts() throws -> [DriftMeasurement.TruthPort] {
        try groundTruth.map { entry in
            let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, let port = UInt16(parts[1]), port > 0 else {
                throw ValidationError("--ground-truth takes ID=PORT (like top-left=6101), got \"\(entry)\"")
            }
            return DriftMeasurement.TruthPort(node: parts[0], port: port)
        }
    }

    func run() async throws {
        try await options.withWall { wall in
            let measurement = try DriftMeasurement(
                wall: wall, threshold: MediaTime(seconds: threshold / 1000, preferredTimescale: 1_000_000),
                poll: .milliseconds(Int(poll * 1000)),
                truthPorts: try groundTruthPorts(),
                truthAddress: try groundTruthAddress())
            let outcome = try await measurement.run(for: MediaTime(seconds: duration, preferredTimescale: 1000))

            // With --json - (or --plot -) standard output carries the data, and the tables go to stderr.
            let dataOnStandardOutput = json == "-" || plot == "-"
            let say = { (text: String) in dataOnStandardOutput ? Output.note(text) : Output.line(text) }
            say(outcome.report.table())
            if let truth = outcome.truth { say(truth.table()) }
            for (node, address) in outcome.silentTruth {
                say(
                    "ground truth: no datagram arrived from \(node) on \(address): is its video sink a udpsink "
                        + "sending frame-code frames to this machine, port \(address.port)?")
            }
            if let json {
                try Output.write(
                    try DriftReports(drift: outcome.report, groundTruth: outcome.truth).jsonData(), to: json)
            }
            if let plot {
                try Output.write(Data(DriftPlot(report: outcome.report).svg().utf8), to: plot)
            }
            if outcome.exitStatus != 0 { throw ExitCode(outcome.exitStatus) }
        }
    }
}
