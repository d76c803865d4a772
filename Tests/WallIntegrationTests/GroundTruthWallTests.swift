import Foundation
import LockstepTime
import TestSupport
import WallAnalysis
import XCTest

/// A four-node wall on this machine, each node on its own simulated clock and reaching the master
/// through its own impairment proxy, measured against ground truth: every node's video sink sends
/// each frame over UDP as it renders, and `wallctl drift` stamps the arrivals in the kernel and
/// reads the frame numbers from the pixels, without asking the nodes.
final class GroundTruthWallTests: XCTestCase {
    /// (id, simulated clock offset in s, drift in ppm): offsets up to ±1 h, drifts up to ±200 ppm.
    private let nodes: [(id: String, offset: Int, drift: Int)] = [
        ("a", -3600, 200), ("b", 1800, -200), ("c", 3600, 50), ("d", -1200, -150),
    ]
    private let masterPort = 15637
    private let firstProxyPort = 15641
    private let firstControlPort = 17701
    private let firstTruthPort = 16101

    func testWall_startsInLockstep_andItsReportAgreesWithGroundTruth() throws {
        let wallctl = ChildProcess.product("wallctl")
        let wallnode = ChildProcess.product("wallnode")
        let media = try TestMedia.frameCode(seconds: 12, size: "320x180")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-wall-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let config = folder.appendingPathComponent("wall.yaml")
        try configText(media: media.path).write(to: config, atomically: true, encoding: .utf8)

        let master = try ChildProcess(
            wallctl,
            [
                "clock", "serve", "--listen", "127.0.0.1:\(masterPort)", "--simulate-clock-offset", "3600",
                "--simulate-clock-drift-ppm", "100",
            ])
        let proxies = try nodes.indices.map { index in
            try ChildProcess(
                wallctl,
                [
                    "impair", "--listen", "127.0.0.1:\(firstProxyPort + index)", "--forward", "127.0.0.1:\(masterPort)",
                    "--jitter", "0.5", "--seed", "\(index + 1)",
                ])
        }
        let nodeProcesses = try nodes.enumerated().map { index, node in
            try ChildProcess(
                wallnode,
                [
                    "run", "--config", config.path, "--id", node.id, "--clock", "127.0.0.1:\(firstProxyPort + index)",
                    "--simulate-clock-offset", "\(node.offset)", "--simulate-clock-drift-ppm", "\(node.drift)",
                    "--log-format", "text",
                ])
        }
        defer {
            for process in nodeProcesses + proxies + [master] { process.signal(SIGTERM) }
        }

        // wallctl fails at once on a refused connection: wait until every node's control API is up.
        let deadline = Date().addingTimeInterval(30)
        while try ChildProcess.run(wallctl, ["status", "--config", config.path, "--timeout", "2"]).status != 0 {
            guard Date() < deadline else { return XCTFail("the nodes' control APIs did not come up within 30 s") }
            Thread.sleep(forTimeInterval: 0.3)
        }
        let start = try ChildProcess.run(wallctl, ["start", "--config", config.path, "--timeout", "40"])
        XCTAssertEqual(start.status, 0, "wallctl start: \(start.output)\n\(start.errors)")
        guard start.status == 0 else { return }

        let report = folder.appendingPathComponent("drift.json")
        var arguments = ["drift", "--config", config.path, "--duration", "10", "--json", report.path]
        for (index, node) in nodes.enumerated() {
            arguments += ["--ground-truth", "\(node.id)=\(firstTruthPort + index)"]
        }
        let drift = try ChildProcess.run(wallctl, arguments)
        let reports = try JSONDecoder().decode(Reports.self, from: Data(contentsOf: report))
        let truth = try XCTUnwrap(reports.groundTruth, "no ground-truth report:\n\(drift.output)\n\(drift.errors)")
        let summary = "\(drift.output)\n\(drift.errors)"

        XCTAssertGreaterThanOrEqual(truth.framesMatched, 250, "frames seen by every node and the collector\n\(summary)")
        let worstTruth = truth.pairs.map(\.truthSkew.p99).max() ?? .positiveInfinity
        XCTAssertLessThanOrEqual(worstTruth.seconds, 0.002, "ground-truth p99 inter-node skew\n\(summary)")
        XCTAssertLessThanOrEqual(truth.disagreement.p99.seconds, 0.0005, "report vs ground truth at p99\n\(summary)")
        XCTAssertEqual(reports.drift.framesAligned, truth.framesMatched + truth.framesUnmatched, summary)
    }

    private struct Reports: Decodable {
        let drift: DriftReport
        let groundTruth: GroundTruthReport?
    }

    private func configText(media: String) -> String {
        var text = """
            name: ground-truth-test
            clock: 127.0.0.1:\(masterPort)
            clock-lock-timeout: 30s
            media: \(media)
            canvas: {width: 1280, height: 720}
            start-margin: 250ms
            loop: true
            nodes:

            """
        let tiles = [(0, 0), (640, 0), (0, 360), (640, 360)]
        for (index, node) in nodes.enumerated() {
            text += """
                  - id: \(node.id)
                    control: 127.0.0.1:\(firstControlPort + index)
                    tile: {x: \(tiles[index].0), y: \(tiles[index].1), width: 640, height: 360}
                    output: {width: 8, height: 8}
                    gravity: resize
                    video-sink: "udpsink host=127.0.0.1 port=\(firstTruthPort + index) sync=true"
                    audio: \(index == 0)
                    audio-sink: "fakesink sync=true"

                """
        }
        return text
    }
}
