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

    /// `wallctl start` waits for the nodes (no polling here), and the wall it starts is a timeline
    /// like any: a node killed with -9 and started again with the same command rejoins by itself,
    /// in step by ground truth.
    func testWall_startsInLockstep_rejoinsAfterKill9_andItsReportAgreesWithGroundTruth() throws {
        let wallctl = ChildProcess.product("wallctl")
        let wallnode = ChildProcess.product("wallnode")
        let media = try TestMedia.frameCode(seconds: 12, size: "320x180")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-wall-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let tiles = [(0, 0), (640, 0), (0, 360), (640, 360)]
        let wall = TestWall(
            name: "ground-truth-test", clockPort: masterPort, media: media.path, canvas: (1280, 720),
            stateDirectory: folder.appendingPathComponent("state").path,
            extra: ["clock-lock-timeout: 30s", "start-margin: 250ms", "loop: true"],
            nodes: nodes.enumerated().map { index, node in
                .groundTruth(
                    id: node.id, controlPort: firstControlPort + index,
                    tile: (tiles[index].0, tiles[index].1, 640, 360), port: UInt16(firstTruthPort + index),
                    audio: index == 0)
            })
        let config = try wall.write(to: folder.appendingPathComponent("wall.yaml"))

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
                    "--delay", "1", "--jitter", "0.5", "--seed", "\(index + 1)",
                ])
        }
        func startNode(_ index: Int) throws -> ChildProcess {
            let node = nodes[index]
            return try ChildProcess(
                wallnode,
                [
                    "run", "--config", config.path, "--id", node.id, "--clock", "127.0.0.1:\(firstProxyPort + index)",
                    "--simulate-clock-offset", "\(node.offset)", "--simulate-clock-drift-ppm", "\(node.drift)",
                    "--log-format", "text",
                ])
        }
        var nodeProcesses = try nodes.indices.map(startNode)
        defer {
            for process in nodeProcesses + proxies + [master] { process.signal(SIGTERM) }
        }

        // No waiting here: start waits for every node's control API and clock by itself, and says so.
        let start = try ChildProcess.run(wallctl, ["start", "--config", config.path, "--timeout", "40"])
        XCTAssertEqual(start.status, 0, "wallctl start: \(start.output)\n\(start.errors)")
        guard start.status == 0 else { return }
        try measure(config: config, folder: folder, name: "drift.json", frames: 250)

        // kill -9 and the same command again: the node finds its timeline in its state file.
        nodeProcesses[2].signal(SIGKILL)
        _ = nodeProcesses[2].finish()
        nodeProcesses[2] = try startNode(2)
        let settled = try ChildProcess.run(
            wallctl, ["status", "--config", config.path, "--timeout", "20", "--wait"])
        XCTAssertEqual(settled.status, 0, "every node in step after the restart:\n\(settled.output)\n\(settled.errors)")
        try measure(config: config, folder: folder, name: "drift-rejoined.json", frames: 120)
    }

    /// `wallctl drift` with ground truth for a few seconds: the worst pair within 2 ms at p99 by
    /// ground truth, and the nodes' own report within 0.5 ms of it.
    private func measure(config: URL, folder: URL, name: String, frames: Int) throws {
        let reports = try GroundTruthDrift.measure(
            config: config, seconds: frames / 25,
            truth: nodes.indices.map { (nodes[$0].id, firstTruthPort + $0) },
            report: folder.appendingPathComponent(name))
        let truth = try reports.truth()
        let summary = reports.summary

        XCTAssertGreaterThanOrEqual(
            truth.framesMatched, frames, "frames seen by every node and the collector\n\(summary)")
        let worstTruth = truth.pairs.map(\.truthSkew.p99).max() ?? .positiveInfinity
        XCTAssertLessThanOrEqual(worstTruth.seconds, 0.002, "ground-truth p99 inter-node skew\n\(summary)")
        XCTAssertLessThanOrEqual(truth.disagreement.p99.seconds, 0.0005, "report vs ground truth at p99\n\(summary)")
        XCTAssertEqual(reports.drift.framesAligned, truth.framesMatched + truth.framesUnmatched, summary)
    }
}
