import Foundation
import LockstepTime
import TestSupport
import WallAnalysis
import XCTest

/// A four-node wall on PTP: a grandmaster ptp4l and one ptp4l per node, each in a network namespace
/// of its own, exchange over veth pairs with software timestamps. Every namespace shares this
/// machine's one kernel clock, so every ptp4l runs `free_running 1` (it measures, never adjusts:
/// nothing here may touch the machine's clock) and the nodes follow `CLOCK_REALTIME` with the
/// bounds ptp4l measures. The UDP master serves real time too, so a node whose ptp4l goes falls back
/// on it without changing timelines.
final class PTPWallTests: XCTestCase {
    private let masterPort = 15691
    private let controlPorts = [17971, 17972, 17973, 17974]
    private let truthPorts = [16171, 16172, 16173, 16174]
    private let ids = ["n0", "n1", "n2", "n3"]
    private var tag: String { String(getpid() % 100_000) }
    private var namespaces: [String] { ["lsp\(tag)gm"] + ids.map { "lsp\(tag)\($0)" } }

    func testAWallOnPTP_playsInLockstep_andANodeThatLosesPTP_fallsBackOnTheUDPMasterWithoutAJump() async throws {
        try Self.requireNamespaces()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-ptp-\(getpid())")
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var processes: [ChildProcess] = []
        let ptp4l = try setUpPTP(in: folder)
        defer {
            for process in processes.reversed() + ptp4l.all { process.signal(SIGTERM) }
            for process in processes.reversed() + ptp4l.all { _ = process.finish() }
            for namespace in namespaces { _ = try? ChildProcess.run("/usr/sbin/ip", ["netns", "del", namespace]) }
            try? FileManager.default.removeItem(at: folder)
        }

        let wallctl = ChildProcess.product("wallctl")
        let wall = TestWall(
            name: "ptp-test", clockPort: masterPort, media: try TestMedia.frameCode(seconds: 8).path,
            canvas: (640, 90), stateDirectory: folder.appendingPathComponent("state").path,
            extra: ["clock-lock-timeout: 30s", "loop: true", "ptp: {uds: \"\(folder.path)/{id}.sock\"}"],
            nodes: ids.indices.map { index in
                .groundTruth(
                    id: ids[index], controlPort: controlPorts[index], tile: (index * 160, 0, 160, 90),
                    port: UInt16(truthPorts[index]))
            })
        let config = try wall.write(to: folder.appendingPathComponent("wall.yaml"))
        processes.append(
            try ChildProcess(wallctl, ["clock", "serve", "--realtime", "--listen", "127.0.0.1:\(masterPort)"]))
        for id in ids {
            processes.append(
                try ChildProcess(
                    ChildProcess.product("wallnode"), ["run", "--config", config.path, "--id", id, "--log-format", "text"]))
        }
        // Every node follows its ptp4l, not the UDP master.
        for port in controlPorts {
            try await eventually(within: 30, "node on \(port) following PTP") {
                (try? Self.clock(port))??["server"] as? String == "ptp4l at \(folder.path)/\(self.ids[self.controlPorts.firstIndex(of: port)!]).sock"
            }
        }
        let start = try ChildProcess.run(wallctl, ["start", "--config", config.path, "--timeout", "40"])
        XCTAssertEqual(start.status, 0, start.output + start.errors)
        guard start.status == 0 else { return }
        let onPTP = try drift(config: config, folder: folder, name: "ptp")
        onPTP.assertInLockstep()
        for port in controlPorts {
            XCTAssertTrue((try Self.clock(port)?["server"] as? String)?.hasPrefix("ptp4l at") == true, "\(port)")
        }
        let rejoins = try Self.rejoins(controlPorts[1])

        // n1's ptp4l dies: n1 falls back on the UDP master, slewing, and the wall stays together.
        ptp4l.nodes[1].signal(SIGKILL)
        _ = ptp4l.nodes[1].finish()
        try await eventually(within: 10, "n1 on the UDP master") {
            (try? Self.clock(self.controlPorts[1]))??["server"] as? String == "127.0.0.1:\(self.masterPort)"
        }
        let fallen = try drift(config: config, folder: folder, name: "fallback")
        fallen.assertInLockstep()
        XCTAssertEqual(try Self.rejoins(controlPorts[1]), rejoins, "n1 kept its timeline: no jump to rejoin after")
        XCTAssertTrue((try Self.clock(controlPorts[0])?["server"] as? String)?.hasPrefix("ptp4l at") == true)
    }

    /// Namespaces, veth pairs and ptp4l need root and linuxptp; CI has both (scripts/setup.sh).
    private static func requireNamespaces() throws {
        var missing: [String] = []
        if geteuid() != 0 { missing.append("root (for network namespaces)") }
        for tool in ["/usr/sbin/ptp4l", "/usr/sbin/pmc", "/usr/sbin/ip"] where !FileManager.default.isExecutableFile(atPath: tool) {
            missing.append(tool)
        }
        guard !missing.isEmpty else { return }
        let message = "needs \(missing.joined(separator: ", ")) (scripts/setup.sh installs linuxptp)"
        if ProcessInfo.processInfo.environment["CI"] != nil { throw TestSupportError(message) }
        throw XCTSkip(message)
    }

    /// The grandmaster's namespace joined to each node's by a veth pair, and a ptp4l at each end.
    private func setUpPTP(in folder: URL) throws -> (grandmaster: ChildProcess, nodes: [ChildProcess], all: [ChildProcess]) {
        let ip = "/usr/sbin/ip"
        for namespace in namespaces {
            _ = try? ChildProcess.run(ip, ["netns", "del", namespace])
            try Self.run(ip, ["netns", "add", namespace])
            try Self.run(ip, ["-n", namespace, "link", "set", "lo", "up"])
        }
        let grandmaster = namespaces[0]
        var ports: [String] = []
        for (index, namespace) in namespaces.dropFirst().enumerated() {
            let (near, far) = ("lg\(index)x\(tag)", "ln\(index)x\(tag)")
            try Self.run(ip, ["link", "add", near, "netns", grandmaster, "type", "veth", "peer", "name", far, "netns", namespace])
            try Self.run(ip, ["-n", grandmaster, "link", "set", near, "up"])
            try Self.run(ip, ["-n", namespace, "link", "set", far, "up"])
            ports.append(near)
        }
        // Fast syncs and announces, so the test locks in seconds; free_running: measure only.
        let common = "[global]\nfree_running 1\nlogSyncInterval -3\nlogAnnounceInterval -2\nannounceReceiptTimeout 3\n"
        func start(_ namespace: String, _ name: String, _ settings: String, _ interfaces: [String]) throws -> ChildProcess {
            let file = folder.appendingPathComponent("\(name).cfg")
            try (common + "uds_address \(folder.path)/\(name).sock\n" + settings).write(
                to: file, atomically: true, encoding: .utf8)
            // With no signal blocked: the runner's worker thread that starts it blocks SIGTERM, and
            // a child inherits that, so ptp4l would never stop.
            let unblocked = "import os, signal, sys; signal.pthread_sigmask(signal.SIG_SETMASK, []); os.execv(sys.argv[1], sys.argv[1:])"
            return try ChildProcess(
                ip, ["netns", "exec", namespace, "/usr/bin/python3", "-c", unblocked, "/usr/sbin/ptp4l", "-2", "-S", "-f", file.path]
                    + interfaces.flatMap { ["-i", $0] })
        }
        let master = try start(grandmaster, "grandmaster", "priority1 1\n", ports)
        let nodes = try ids.indices.map { index in
            try start(namespaces[index + 1], ids[index], "slaveOnly 1\n", ["ln\(index)x\(tag)"])
        }
        return (master, nodes, [master] + nodes)
    }

    /// The drift threshold and ground truth's limit: four nodes decoding on two cores leave a
    /// render floor of a few tenths of a millisecond at p99, which is the machine's, not the clock's.
    private static let threshold = 0.001
    /// How far the nodes' own report may be from ground truth at p99: what their clocks are apart
    /// (PTP: under 0.1 ms each) and the collector's own reading.
    private static let agreement = 0.00025

    private struct Run {
        let drift: DriftReport
        let truthP99: Double
        let disagreementP99: Double
        let summary: String

        /// In lockstep by the nodes' report, by ground truth, and the two agree: the clocks are right.
        func assertInLockstep(file: StaticString = #filePath, line: UInt = #line) {
            XCTAssertEqual(drift.verdict.outcome, .pass, summary, file: file, line: line)
            XCTAssertLessThanOrEqual(truthP99, PTPWallTests.threshold, summary, file: file, line: line)
            XCTAssertLessThanOrEqual(disagreementP99, PTPWallTests.agreement, summary, file: file, line: line)
        }
    }

    private func drift(config: URL, folder: URL, name: String) throws -> Run {
        let reports = try GroundTruthDrift.measure(
            config: config, seconds: 8, truth: ids.indices.map { (ids[$0], truthPorts[$0]) },
            report: folder.appendingPathComponent("drift-\(name).json"),
            extra: ["--threshold", "\(Self.threshold * 1000)"])
        let truthP99 = try reports.worstTruthP99()
        let disagreement = try reports.truth().disagreement.p99.seconds
        print(
            "PTP wall test (\(name)): ground truth p99 \(truthP99 * 1000) ms, report vs truth p99 "
                + "\(disagreement * 1000) ms; \(reports.drift.verdict.sentence)")
        return Run(drift: reports.drift, truthP99: truthP99, disagreementP99: disagreement, summary: reports.summary)
    }

    private static func clock(_ port: Int) throws -> [String: Any]? {
        try TestNode(port: port).status()["clock"] as? [String: Any]
    }

    private static func rejoins(_ port: Int) throws -> Int {
        ((try TestNode(port: port).status()["timeline"] as? [String: Any])?["rejoins"] as? Int) ?? -1
    }

    private static func run(_ tool: String, _ arguments: [String]) throws {
        let result = try ChildProcess.run(tool, arguments)
        guard result.status == 0 else {
            throw TestSupportError("\(tool) \(arguments.joined(separator: " ")): \(result.output)\(result.errors)")
        }
    }
}
