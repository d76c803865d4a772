import Foundation
import GroundTruth
import LockstepLocks
import LockstepNet
import LockstepTime
import TestSupport
import XCTest

/// The operator console in a real browser: Debian's chromium, headless, driven through chromedriver
/// by selenium (scripts/console-test.py) against `wallctl serve` and a live four-node wall. The
/// script logs in (a wrong token first), sees the screens in step, pauses, seeks with the scrub bar,
/// cues, pushes a file,
/// and sees a node killed with SIGKILL marked and then back in step; this side answers its requests
/// (killing and restarting the node) and checks the pause against ground truth at the sinks and the
/// nodes' own status. With LOCKSTEP_CONSOLE_SCREENSHOTS=1 the screenshots go to docs/images.
final class ConsoleWallTests: XCTestCase {
    private let ids = ["a", "b", "c", "d"]
    private let masterPort = 18401
    private let firstControlPort = 18411
    private let daemonPort = 18420
    private let driverPort = 18430

    func testConsole_inChromium_showsAndDrivesALiveWall() async throws {
        let python = ChildProcess.checkout.appendingPathComponent(".build/test-python/bin/python3").path
        guard FileManager.default.isExecutableFile(atPath: python),
            FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium"),
            FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver")
        else {
            XCTFail("no chromium, chromedriver or selenium: make setup (scripts/setup.sh) installs them")
            return
        }
        let scratch = try ScratchFolder("lockstep-console")
        defer { scratch.remove() }
        let clip = try scratch.frameCodeClip(seconds: 20)
        let token = scratch.path("control.token")
        let tokenText = "console-test-token-\(UInt64.random(in: 1...UInt64.max))"
        try tokenText.write(toFile: token, atomically: true, encoding: .utf8)
        let viewerToken = scratch.path("viewer.token")
        try "console-test-viewer-\(UInt64.random(in: 1...UInt64.max))".write(
            toFile: viewerToken, atomically: true, encoding: .utf8)
        // A file to push, big enough that its progress shows part way at the paced rate.
        let upload = scratch.path("slate.bin")
        try TestMedia.payload(count: 6 << 20).write(to: URL(fileURLWithPath: upload))
        let receiver = try FrameCodeCollector(count: ids.count)
        defer { receiver.stop() }
        let wall = TestWall(
            name: "console-test", clockPort: masterPort, media: clip, canvas: (320, 180),
            // An in point: the scrub bar must start there (a seek before it is refused).
            playlist: ["{media: \(clip), in: 2s, out: 8s}"], stateDirectory: scratch.path("state"),
            extra: [
                "clock-lock-timeout: 20s", "loop: true", "control-token-file: \(token)",
                "viewer-token-file: \(viewerToken)",
                "content-bandwidth: 3000000B/s",
                "controller: {listen: \"127.0.0.1:\(daemonPort)\"}",
                "cues:",
                "  intro: {media: \(clip), in: 10s, out: 12s, then: return}",
            ],
            nodes: ids.enumerated().map { index, id in
                .groundTruth(
                    // Two by two: a 16:9 wall, which the page must keep from filling a laptop's window.
                    id: id, controlPort: firstControlPort + index, tile: (index % 2 * 160, index / 2 * 90, 160, 90),
                    port: receiver.ports[index])
            })
        let config = try wall.write(to: scratch.url.appendingPathComponent("wall.yaml"))
        let wallctl = ChildProcess.product("wallctl")
        let wallnode = ChildProcess.product("wallnode")
        let master = try ChildProcess(wallctl, ["clock", "serve", "--listen", "127.0.0.1:\(masterPort)"])
        let nodeArguments = { (index: Int) in
            [
                "run", "--config", config.path, "--id", self.ids[index], "--log-format", "text",
                "--simulate-clock-offset", "\(index * 500)", "--simulate-clock-drift-ppm", "\(index * 50 - 75)",
            ]
        }
        var nodes = try ids.indices.map { try ChildProcess(wallnode, nodeArguments($0)) }
        let daemon = try ChildProcess(wallctl, ["serve", "--config", config.path])
        defer {
            for process in nodes + [master, daemon] { process.signal(SIGTERM) }
            if (testRun?.failureCount ?? 0) > 0 {
                print("daemon:\n" + daemon.finish().output.split(separator: "\n").suffix(60).joined(separator: "\n"))
            }
        }
        let play = try ChildProcess.run(wallctl, ["play", "--config", config.path])
        XCTAssertEqual(play.status, 0, "wallctl play: \(play.output)\n\(play.errors)")
        guard play.status == 0 else { return }

        let screenshots: String
        if ProcessInfo.processInfo.environment["LOCKSTEP_CONSOLE_SCREENSHOTS"] == "1" {
            screenshots = ChildProcess.checkout.appendingPathComponent("docs/images").path
        } else {
            screenshots = scratch.path("screenshots")
            try FileManager.default.createDirectory(atPath: screenshots, withIntermediateDirectories: true)
        }
        let browser = try ChildProcess(
            python,
            [
                ChildProcess.checkout.appendingPathComponent("scripts/console-test.py").path,
                "--url", "http://127.0.0.1:\(daemonPort)", "--token-file", token, "--viewer-token-file", viewerToken,
                "--nodes", ids.joined(separator: ","), "--cue", "intro", "--upload", upload,
                "--screenshots", screenshots, "--profile", scratch.path("chromium"),
                "--driver-port", "\(driverPort)",
            ])
        var steps: [String] = []
        var pause: (checkedAt: MediaTime, position: Double)?
        while let line = browser.readLine() {
            steps.append(line)
            print("console test: \(line)")
            let words = line.split(separator: " ").map(String.init)
            switch words.first {
            case "paused":
                pause = try await checkPaused(receiver: receiver, wall: wall, token: tokenText)
                browser.write(line: "checked")
            case "kill":
                guard let index = ids.firstIndex(of: words[1]) else { break }
                nodes[index].signal(SIGKILL)
                _ = nodes[index].finish()
                browser.write(line: "killed")
            case "restart":
                guard let index = ids.firstIndex(of: words[1]) else { break }
                nodes[index] = try ChildProcess(wallnode, nodeArguments(index))
                browser.write(line: "restarted")
            default:
                break
            }
        }
        let finished = browser.finish()
        XCTAssertEqual(
            finished.status, 0, "console-test.py:\n\(steps.joined(separator: "\n"))\n\(finished.errors.suffix(3000))")
        XCTAssertEqual(steps.last, "done", steps.joined(separator: "\n"))
        XCTAssertFalse(steps.contains { $0.hasPrefix("FAIL") }, steps.joined(separator: "\n"))

        // A udpsink sends the frames it renders, not the one it holds paused: the frame each node
        // held shows as the first it renders on resuming. The same on every node, and the one the
        // nodes' status said they held (the clip is 30 frames a second, a frame's code its number).
        if let pause {
            let firsts = receiver.seen.map { frames in frames.first { $0.at > pause.checkedAt }?.code }
            XCTAssertEqual(Set(firsts).count, 1, "the first frame each node rendered on resuming: \(firsts)")
            XCTAssertEqual(firsts.first ?? nil, Int((pause.position * 30).rounded(.down)), "the frame held")
            print(
                "console test: paused on frame \(firsts.first.map { "\($0 ?? -1)" } ?? "-") everywhere by ground truth")
        } else {
            XCTFail("the script never said the wall was paused")
        }
    }

    /// Every node paused: by ground truth (no frame rendered for a second after the page saw the
    /// pause) and by each node's status (its player paused at one position, which it returns). The
    /// frame held is checked on resuming, when the sinks render it.
    private func checkPaused(receiver: FrameCodeCollector, wall: TestWall, token: String) async throws
        -> (checkedAt: MediaTime, position: Double)
    {
        let seenPaused = LocalClock.monotonic.now()
        try await Task.sleep(for: .seconds(1))
        for (index, node) in receiver.seen.enumerated() {
            let during = node.filter { $0.at > seenPaused }
            XCTAssertTrue(during.isEmpty, "node \(ids[index]) rendered \(during.count) frames while paused")
        }
        var positions: [Double] = []
        for id in ids {
            let status = try wall.client(id, token: token).status()
            let timeline = status["timeline"] as? [String: Any]
            XCTAssertEqual(timeline?["state"] as? String, "paused", "node \(id)'s status")
            if let player = status["player"] as? [String: Any], let position = player["positionNs"] as? Int {
                positions.append(Double(position) / 1e9)
            }
        }
        XCTAssertEqual(positions.count, ids.count, "every node's player position")
        if let first = positions.first {
            for position in positions {
                XCTAssertEqual(position, first, accuracy: 0.001, "paused positions \(positions)")
            }
        }
        print("console test: paused at positions \(positions)")
        return (LocalClock.monotonic.now(), positions.first ?? -1)
    }
}
