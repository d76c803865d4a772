import Foundation
import GroundTruth
import LockstepLocks
import LockstepTime
import TestSupport
import XCTest

/// A four-node wall whose master is killed mid-play and restarted on a clock 100 s off, measured by
/// an outside collector: every node's sink sends each frame over UDP as it renders, and this test
/// stamps the arrivals in the kernel and reads the frame numbers from the pixels.
///
/// Nodes a and b relay the time they follow (`serve-clock`); the config lists the master, a, then
/// b. With the master gone, a holds the timeline and b, c and d follow it; the restarted master
/// rejoins that timeline (`wallctl clock serve --join`) before it serves.
final class ClockFailoverWallTests: XCTestCase {
    private let nodes: [(id: String, offset: Int, drift: Int)] = [
        ("a", -3600, 200), ("b", 1800, -200), ("c", 3600, 50), ("d", -1200, -150),
    ]
    private let masterPort = 15691
    private let relayPorts = [15692, 15693]
    private let firstControlPort = 17961
    private let firstTruthPort: UInt16 = 16161
    private static let framesPerLoop = 360
    private static let frameDuration = 1.0 / 30

    /// One frame seen leaving one node's sink.
    private struct Seen {
        let node: Int
        let frame: Int
        let at: Double
    }

    func testKillingTheMaster_andRestartingItOnAnotherClock_neitherJumpsNorSplitsTheWall() async throws {
        let wallctl = ChildProcess.product("wallctl")
        let wallnode = ChildProcess.product("wallnode")
        let media = try TestMedia.frameCode(seconds: 12, size: "320x180")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-failover-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let tiles = [(0, 0), (640, 0), (0, 360), (640, 360)]
        var wall = TestWall(
            name: "failover-test", clockPort: masterPort, media: media.path, canvas: (1280, 720),
            stateDirectory: folder.path, extra: ["clock-lock-timeout: 30s", "start-margin: 250ms", "loop: true"],
            nodes: nodes.enumerated().map { index, node in
                .groundTruth(
                    id: node.id, controlPort: firstControlPort + index,
                    tile: (tiles[index].0, tiles[index].1, 640, 360),
                    port: firstTruthPort + UInt16(index),
                    extra: index < relayPorts.count ? ["serve-clock: 127.0.0.1:\(relayPorts[index])"] : [])
            })
        wall.clock = "[127.0.0.1:\(masterPort), " + relayPorts.map { "127.0.0.1:\($0)" }.joined(separator: ", ") + "]"
        let config = try wall.write(to: folder.appendingPathComponent("wall.yaml"))

        let receiver = try FrameReceiver(count: nodes.count, ports: nodes.indices.map { firstTruthPort + UInt16($0) })
        let seen = Mutex<[Seen]>([])
        let collecting = Task { [ports = receiver.ports] in
            for await arrival in receiver.arrivals {
                guard let node = ports.firstIndex(of: arrival.port),
                    let code = FrameCode.decode(i420: arrival.payload, width: 8, height: 8)
                else { continue }
                seen.withLock { $0.append(Seen(node: node, frame: code, at: arrival.arrivedAt.seconds)) }
            }
        }
        defer {
            receiver.stop()
            collecting.cancel()
        }

        var master = try ChildProcess(
            wallctl,
            [
                "clock", "serve", "--listen", "127.0.0.1:\(masterPort)", "--simulate-clock-offset", "3600",
                "--simulate-clock-drift-ppm", "100",
            ])
        let nodeProcesses = try nodes.map { node in
            try ChildProcess(
                wallnode,
                [
                    "run", "--config", config.path, "--id", node.id, "--simulate-clock-offset", "\(node.offset)",
                    "--simulate-clock-drift-ppm", "\(node.drift)", "--log-format", "text",
                ])
        }
        defer {
            for process in nodeProcesses + [master] { process.signal(SIGTERM) }
        }
        // start waits for the nodes' control APIs and clocks by itself.
        let start = try ChildProcess.run(wallctl, ["start", "--config", config.path, "--timeout", "40"])
        XCTAssertEqual(start.status, 0, "wallctl start: \(start.output)\n\(start.errors)")
        guard start.status == 0 else { return }

        func now() -> Double { Double(LocalClock.monotonic.nowNanoseconds()) / 1e9 }
        let started = now()
        // Six seconds of frames from every node: the baseline the phases after are held to.
        try await eventually(within: 20, "six seconds of frames from every node") {
            let frames = seen.withLock { $0 }
            return (0..<self.nodes.count).allSatisfy { node in
                frames.contains { $0.node == node && $0.at > started + 6 }
            }
        }
        let killed = now()
        master.signal(SIGKILL)
        _ = master.finish()
        /// Each node's clock state and the source it follows, from its status.
        func clocks() throws -> [String: (state: String, server: String)] {
            var clocks: [String: (state: String, server: String)] = [:]
            for node in nodes {
                let clock = try XCTUnwrap(try wall.client(node.id).status()["clock"] as? [String: Any])
                clocks[node.id] = (clock["state"] as? String ?? "", clock["server"] as? String ?? "")
            }
            return clocks
        }
        // Holdover comes after 3 s of silence; then b, c and d follow a, and a holds the timeline.
        try await eventually(within: 25, "b, c and d following relay a, and a in holdover") {
            let clocks = try clocks()
            return ["b", "c", "d"].allSatisfy {
                clocks[$0]?.state == "locked" && clocks[$0]?.server == "127.0.0.1:\(self.relayPorts[0])"
            } && clocks["a"]?.state == "holdover"
        }

        let restarted = now()
        master = try ChildProcess(
            wallctl,
            [
                "clock", "serve", "--listen", "127.0.0.1:\(masterPort)", "--simulate-clock-offset", "3700",
                "--simulate-clock-drift-ppm", "-100", "--join",
                relayPorts.map { "127.0.0.1:\($0)" }.joined(separator: ","),
            ])
        // The nodes take the master back once it has served their timeline for 10 s.
        try await eventually(within: 40, "b, c and d following the rejoined master") {
            let clocks = try clocks()
            return ["b", "c", "d"].allSatisfy {
                clocks[$0]?.state == "locked" && clocks[$0]?.server == "127.0.0.1:\(self.masterPort)"
            }
        }
        let ended = now()
        // Then it serves the timeline as the master (stratum 0), not as a relay of the relays that
        // follow it: no loop forms, and a node restarted now locks (chaos hour, 2026-11-26: before,
        // the strata climbed and a node killed and restarted never locked again).
        try await eventually(within: 30, "the rejoined master serving as the master, at stratum 0") {
            try ["b", "c", "d"].allSatisfy { id in
                let clock = try XCTUnwrap(try wall.client(id).status()["clock"] as? [String: Any])
                return clock["stratum"] as? Int == 0 && clock["server"] as? String == "127.0.0.1:\(self.masterPort)"
            }
        }
        master.signal(SIGTERM)
        let masterOutput = master.finish()
        XCTAssertTrue(masterOutput.output.contains("rejoining it"), "the master rejoined:\n\(masterOutput.output)")
        XCTAssertTrue(masterOutput.output.contains("took the wall's timeline over"), masterOutput.output)

        receiver.stop()
        _ = await collecting.value
        let frames = seen.withLock { $0 }
        let phases = [
            ("before the kill", killed - 5, killed), ("after the kill", killed, restarted),
            ("after the restart", restarted, ended),
        ]
        var spreads: [String] = []
        var p99s: [Double] = []
        var p95s: [Double] = []
        for (name, from, to) in phases {
            let spread = Self.spreads(frames.filter { $0.at >= from && $0.at < to }, nodes: nodes.count)
            XCTAssertGreaterThan(spread.count, Int((to - from) * 20), "frames seen by every node \(name)")
            let p99 = Self.percentile(spread, 0.99)
            p99s.append(p99)
            p95s.append(Self.percentile(spread, 0.95))
            spreads.append(
                String(
                    format: "%@: p99 %.3f ms, p95 %.3f ms over %d frames", name, p99 * 1e3, p95s.last! * 1e3,
                    spread.count))
        }
        let jumps = (0..<nodes.count).map { Self.largestJump(frames, node: $0) }
        let summary =
            spreads.joined(separator: "; ")
            + "; largest presentation jump " + jumps.map { String(format: "%.3f ms", $0 * 1e3) }.joined(separator: ", ")
        print("clock failover wall: \(summary)")
        // The slower of the two phases may be at most 1.5 times the baseline, with 0.5 ms allowed for
        // this 2-core machine's scheduling. Over the failover's ~90 frames a p99 is the second-worst
        // frame, which one late wake-up of a render thread decides (0.1 to 0.98 ms seen from run to
        // run): the phases are compared at p95, which a wall split or drifting apart still moves, and
        // every phase's p99 stays within 2.5 ms: four pipelines on one perfect clock reach 2.4 ms at
        // p99 here when render threads compete with decoders (2.012 ms seen after the kill, with
        // 1.561 ms before it, on a run that held together), while a split is a frame, 33 ms.
        for (index, p95) in p95s.enumerated().dropFirst() {
            XCTAssertLessThanOrEqual(p95, max(1.5 * p95s[0], p95s[0] + 0.0005), "\(phases[index].0): \(summary)")
        }
        XCTAssertLessThanOrEqual(p99s.max() ?? 1, 0.0025, summary)
        for (node, jump) in zip(nodes, jumps) {
            XCTAssertLessThan(jump, Self.frameDuration, "node \(node.id) jumped: \(summary)")
        }
    }

    /// For each frame every node showed (frame numbers unwrapped across loops), the last arrival
    /// minus the first.
    private static func spreads(_ frames: [Seen], nodes: Int) -> [Double] {
        var byFrame: [Int: [Int: Double]] = [:]
        for node in 0..<nodes {
            for (frame, at) in unwrapped(frames.filter { $0.node == node }) { byFrame[frame, default: [:]][node] = at }
        }
        return byFrame.values.filter { $0.count == nodes }.map { ($0.values.max() ?? 0) - ($0.values.min() ?? 0) }
    }

    /// One node's arrivals with frame numbers counted across loops: a frame number falling back by
    /// more than half a loop starts the next loop. The loop count is taken from the arrival time so
    /// that every node counts alike.
    private static func unwrapped(_ frames: [Seen]) -> [(frame: Int, at: Double)] {
        let loop = Double(framesPerLoop) * frameDuration
        guard let first = frames.first else { return [] }
        return frames.map { seen in
            // Which loop the frame belongs to: the one whose start is nearest before its arrival.
            let elapsed = seen.at - first.at + Double(first.frame) * frameDuration
            let loops = Int(((elapsed - Double(seen.frame) * frameDuration) / loop).rounded())
            return (seen.frame + loops * framesPerLoop, seen.at)
        }
    }

    /// The largest change of a node's presentation offset: arrival time minus frame time, fitted to
    /// a line over the whole run, then the largest step between the median of 2 s before and 2 s
    /// after any instant.
    private static func largestJump(_ all: [Seen], node: Int) -> Double {
        let frames = unwrapped(all.filter { $0.node == node })
        guard frames.count > 120 else { return .infinity }
        let residuals = frames.map { ($0.at, $0.at - Double($0.frame) * frameDuration) }
        var largest = 0.0
        var index = 60
        while index + 60 < residuals.count {
            let before = percentile(residuals[(index - 60)..<index].map(\.1), 0.5)
            let after = percentile(residuals[index..<(index + 60)].map(\.1), 0.5)
            largest = max(largest, abs(after - before))
            index += 15
        }
        return largest
    }

    private static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .infinity }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded(.up)))]
    }
}
