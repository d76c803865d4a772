import Foundation
import LockstepTime
import TestSupport
import WallAnalysis
import XCTest

/// A path whose two directions differ: node b reaches the master through a proxy that holds its
/// requests 1.2 ms and the replies 0.2 ms. Two-way time transfer splits the round trip evenly, so
/// b's clock is 0.5 ms off and nothing b measures can tell (its estimated bound stays small). Ground
/// truth sees the screens 0.5 ms apart; the drift verdict must not PASS a 0.3 ms threshold on the
/// estimated bounds, and says that asymmetry is what stands in the way.
final class AsymmetricPathWallTests: XCTestCase {
    private let masterPort = 15681
    private let proxyPorts = [15682, 15683]
    private let controlPorts = [17961, 17962]
    private let truthPorts = [16161, 16162]

    func testAnAsymmetricPath_isNeverPassed_onBoundsThatAssumeItSymmetric() throws {
        let wallctl = ChildProcess.product("wallctl")
        let wallnode = ChildProcess.product("wallnode")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-asym-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let ids = ["a", "b"]
        let wall = TestWall(
            name: "asymmetric-test", clockPort: masterPort, media: try TestMedia.frameCode(seconds: 8).path,
            canvas: (320, 90), stateDirectory: folder.appendingPathComponent("state").path,
            extra: ["clock-lock-timeout: 30s", "loop: true"],
            nodes: ids.indices.map { index in
                .groundTruth(
                    id: ids[index], controlPort: controlPorts[index], tile: (index * 160, 0, 160, 90),
                    port: UInt16(truthPorts[index]))
            })
        let config = try wall.write(to: folder.appendingPathComponent("wall.yaml"))
        let master = try ChildProcess(wallctl, ["clock", "serve", "--listen", "127.0.0.1:\(masterPort)"])
        // (requests, replies) in ms: a's path is symmetric, b's 1 ms slower towards the master.
        let paths = [("0.2", "0.2"), ("1.2", "0.2")]
        let proxies = try ids.indices.map { index in
            try ChildProcess(
                wallctl,
                [
                    "impair", "--listen", "127.0.0.1:\(proxyPorts[index])", "--forward", "127.0.0.1:\(masterPort)",
                    "--delay", paths[index].0, "--reply-delay", paths[index].1,
                ])
        }
        let nodes = try ids.indices.map { index in
            try ChildProcess(
                wallnode,
                [
                    "run", "--config", config.path, "--id", ids[index], "--clock", "127.0.0.1:\(proxyPorts[index])",
                    "--log-format", "text",
                ])
        }
        defer { for process in nodes + proxies + [master] { process.signal(SIGTERM) } }
        let start = try ChildProcess.run(wallctl, ["start", "--config", config.path, "--timeout", "40"])
        XCTAssertEqual(start.status, 0, start.output + start.errors)
        guard start.status == 0 else { return }

        let report = folder.appendingPathComponent("drift.json")
        let drift = try ChildProcess.run(
            wallctl,
            [
                "drift", "--config", config.path, "--duration", "8", "--threshold", "0.3", "--json", report.path,
                "--ground-truth", "a=\(truthPorts[0])", "--ground-truth", "b=\(truthPorts[1])",
            ])
        struct Reports: Decodable {
            let drift: DriftReport
            let groundTruth: GroundTruthReport?
        }
        let reports = try JSONDecoder().decode(Reports.self, from: Data(contentsOf: report))
        let truth = try XCTUnwrap(reports.groundTruth, drift.output + drift.errors)
        let summary = drift.output + "\n" + drift.errors
        let truthP99 = try XCTUnwrap(truth.pairs.first?.truthSkew.p99)
        print("asymmetric path test: ground truth p99 \(truthP99.seconds * 1000) ms; \(reports.drift.verdict.sentence)")
        XCTAssertGreaterThan(truthP99.seconds, 0.0004, "the asymmetry moves b's screen by half of it\n\(summary)")
        let pair = try XCTUnwrap(reports.drift.pairs.first)
        // The estimated bounds alone would have passed the wall: b cannot see its own error.
        let estimated = try XCTUnwrap(pair.skewWithClockUncertainty?.upper.p99)
        XCTAssertLessThanOrEqual(estimated.seconds, 0.0003, "estimated bounds within the threshold\n\(summary)")
        XCTAssertNotEqual(reports.drift.verdict.outcome, .pass, "no PASS that ground truth contradicts\n\(summary)")
        XCTAssertTrue(reports.drift.verdict.sentence.contains("asymmetr"), reports.drift.verdict.sentence)
        let guaranteed = try XCTUnwrap(reports.drift.nodes.first { $0.node == "b" }?.guaranteedClockErrorBound?.maximum)
        XCTAssertGreaterThanOrEqual(guaranteed.seconds, 0.0005, "b's guaranteed bound covers half the asymmetry")
    }
}
