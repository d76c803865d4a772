import Foundation
import LockstepTime
import TestSupport
import XCTest

/// A node serving as the wall's master (`wallnode run --serve-clock`) that is killed and comes
/// back on another clock rejoins the timeline its relay held meanwhile, instead of starting one of
/// its own that would pull the wall onto it.
final class MasterNodeRejoinTests: XCTestCase {
    private let masterPort = 15695
    private let relayPort = 15696
    private let controlPorts = [17981, 17982]

    func testAMasterNodeThatRestarts_joinsTheTimelineItsRelayHeld() async throws {
        let wallnode = ChildProcess.product("wallnode")
        let media = try TestMedia.frameCode(seconds: 3)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-master-rejoin-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var wall = TestWall(
            name: "master-rejoin-test", clockPort: masterPort, media: media.path, canvas: (320, 90),
            extra: ["clock-lock-timeout: 30s"],
            nodes: [
                TestWall.Node(id: "m", controlPort: controlPorts[0], tile: (0, 0, 160, 90)),
                TestWall.Node(
                    id: "r", controlPort: controlPorts[1], tile: (160, 0, 160, 90),
                    extra: ["serve-clock: 127.0.0.1:\(relayPort)"]),
            ])
        wall.clock = "[127.0.0.1:\(masterPort), 127.0.0.1:\(relayPort)]"
        let config = try wall.write(to: folder.appendingPathComponent("wall.yaml"))

        func master(offset: Int, drift: Int) throws -> ChildProcess {
            try ChildProcess(
                wallnode,
                [
                    "run", "--config", config.path, "--id", "m", "--serve-clock", "--state-directory",
                    folder.appendingPathComponent("m").path,
                    "--simulate-clock-offset", "\(offset)", "--simulate-clock-drift-ppm", "\(drift)",
                    "--log-format", "text",
                ])
        }
        var masterNode = try master(offset: 3600, drift: 100)
        let relayNode = try ChildProcess(
            wallnode,
            [
                "run", "--config", config.path, "--id", "r", "--state-directory",
                folder.appendingPathComponent("r").path,
                "--simulate-clock-offset", "-1800", "--simulate-clock-drift-ppm", "-150", "--log-format", "text",
            ])
        defer {
            masterNode.signal(SIGTERM)
            relayNode.signal(SIGTERM)
        }
        let (m, r) = (TestNode(port: controlPorts[0]), TestNode(port: controlPorts[1]))
        try await waitUntilLocked(m, "the master node")
        try await waitUntilLocked(r, "the relay node")
        let timeline = try await epoch(of: r)
        XCTAssertNotNil(timeline, "the relay names the master's timeline")
        let masterTimeline = try await epoch(of: m)
        XCTAssertEqual(masterTimeline, timeline)

        masterNode.signal(SIGKILL)
        _ = masterNode.finish()
        try await r.waitForStatus(within: 10, "the relay holding the timeline") { status in
            (status["clock"] as? [String: Any])?["state"] as? String == "holdover"
        }

        // Back on a clock 100 s off, running the other way.
        masterNode = try master(offset: 3700, drift: -100)
        try await waitUntilLocked(m, "the restarted master node")
        let rejoined = try await epoch(of: m)
        XCTAssertEqual(rejoined, timeline, "the master serves the wall's timeline again")
        try await assertSameTime(m, r)
        // Nothing may change for 12 s: well past the 10 s after which a node gives up a timeline that no
        // source serves any more. An absence is watched for its span, not waited on.
        try await Task.sleep(for: .seconds(12))
        let (relayLater, masterLater) = (try await epoch(of: r), try await epoch(of: m))
        XCTAssertEqual(relayLater, timeline, "the relay kept the wall's timeline")
        XCTAssertEqual(masterLater, timeline)
        try await assertSameTime(m, r)
        masterNode.signal(SIGTERM)
        let log = masterNode.finish()
        XCTAssertTrue(
            (log.output + log.errors).contains("joined the wall's timeline"), "the master node's log:\n\(log.errors)")
    }

    /// The master timeline the node follows, as its status writes it (a 64-bit number).
    private func epoch(of node: TestNode) async throws -> String? {
        try clock(of: node)["epoch"].map { "\($0)" }
    }

    private func clock(of node: TestNode) throws -> [String: Any] {
        try node.status()["clock"] as? [String: Any] ?? [:]
    }

    private func waitUntilLocked(_ node: TestNode, _ what: String) async throws {
        try await node.waitUntilAnswering(within: 30)
        try await node.waitForStatus(within: 30, "\(what) locked") { status in
            (status["clock"] as? [String: Any])?["state"] as? String == "locked"
        }
    }

    /// The two nodes' master times, each read between two monotonic stamps, agree within 2 ms.
    private func assertSameTime(_ first: TestNode, _ second: TestNode) async throws {
        func read(_ node: TestNode) async throws -> (master: Double, at: Double, uncertainty: Double) {
            let before = Double(LocalClock.monotonic.nowNanoseconds())
            let master = try node.status()["masterTimeNs"] as? Double ?? .nan
            let after = Double(LocalClock.monotonic.nowNanoseconds())
            return (master, (before + after) / 2, (after - before) / 2)
        }
        let a = try await read(first)
        let b = try await read(second)
        // Master time runs at the master's rate (+/-100 ppm of the monotonic clock): negligible here.
        let difference = (b.master - a.master) - (b.at - a.at)
        XCTAssertLessThanOrEqual(
            abs(difference), 2e6 + a.uncertainty + b.uncertainty,
            String(format: "the nodes' master times differ by %.3f ms", difference / 1e6))
    }
}
