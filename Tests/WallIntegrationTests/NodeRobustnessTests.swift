import Foundation
import TestSupport
import XCTest

/// Media a wall node must refuse, and files that would block whoever opens them: the node says
/// what is wrong at once, keeps answering, and SIGTERM always stops it within two seconds.
final class NodeRobustnessTests: XCTestCase {
    private let node = NodeHTTP(port: 17861)
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-robust-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    func testLoad_whenAudioOnly_refusesNamingTheMissingVideo() async throws {
        let audio = try TestMedia.audioOnly()
        let wallnode = try startNode(localClock: true)
        defer { wallnode.signal(SIGTERM) }
        try await node.waitUntilAnswering()

        let reply = try await node.post("/load", #"{"media": "\#(audio.path)"}"#)
        XCTAssertEqual(reply.code, 422, reply.text)
        XCTAssertEqual(
            NodeHTTP.errorSentence(reply),
            "the media has no video track: \(audio.path) holds only audio (aac), and every wall node shows video")
        let status = try await node.status()
        let player = try XCTUnwrap(status["player"] as? [String: Any])
        XCTAssertNil(player["media"], "nothing was loaded")
    }

    func testLoad_whenFIFO_failsAtOnce_andTheNodeKeepsAnswering() async throws {
        let fifo = try makeFIFO("stuck.mp4")
        let wallnode = try startNode(localClock: true, media: fifo)
        // A node wedged by the FIFO would ignore SIGTERM and hold the test in ChildProcess's deinit.
        defer { wallnode.signal(SIGKILL) }
        try await node.waitUntilAnswering()

        let started = Date()
        let node = self.node
        let reply = try await withTimeout(10, "the reply to loading a FIFO") { try await node.post("/load", "") }
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "refused before anything opens it")
        XCTAssertEqual(reply.code, 422, reply.text)
        XCTAssertTrue(NodeHTTP.errorSentence(reply).contains("\(fifo) is a FIFO, not a regular file"), reply.text)
        let status = try await withTimeout(2, "/status after the refused load") { try await node.get("/status") }
        XCTAssertEqual(status.code, 200)
    }

    func testSIGTERM_whileLoadingAFIFO_exitsWithinTwoSeconds() async throws {
        let fifo = try makeFIFO("stuck.mp4")
        let wallnode = try startNode(localClock: true, media: fifo)
        defer { wallnode.signal(SIGKILL) }
        try await node.waitUntilAnswering()

        let node = self.node
        let load = Task { try? await node.post("/load", "") }
        defer { load.cancel() }
        try await Task.sleep(for: .milliseconds(300))
        wallnode.signal(SIGTERM)
        let exited = await wallnode.secondsUntilExit(limit: 10)
        XCTAssertNotNil(exited, "wallnode still runs 10 s after SIGTERM")
        XCTAssertLessThan(exited ?? .infinity, 2)
    }

    func testSIGTERM_whilePrerollWaitsForTheClock_exitsWithinTwoSeconds() async throws {
        // No master clock answers: the preroll waits the config's 30 s for the clock to lock.
        let wallnode = try startNode(localClock: false)
        defer { wallnode.signal(SIGKILL) }
        try await node.waitUntilAnswering()

        let node = self.node
        let preroll = Task { try? await node.post("/preroll", #"{"itemTimeNs": 0}"#) }
        defer { preroll.cancel() }
        try await Task.sleep(for: .milliseconds(500))
        XCTAssertTrue(wallnode.process.isRunning)
        wallnode.signal(SIGTERM)
        let exited = await wallnode.secondsUntilExit(limit: 40)
        XCTAssertNotNil(exited, "wallnode still runs 40 s after SIGTERM")
        XCTAssertLessThan(exited ?? .infinity, 2)
    }

    // MARK: Helpers

    /// A node whose configured media is `media` (a 1 s frame-code clip by default): a request
    /// naming a file is held to the media roots before the node opens anything, the configured
    /// media is not, so a FIFO there reaches the node's own checks.
    private func startNode(localClock: Bool, media: String? = nil) throws -> ChildProcess {
        let config = folder.appendingPathComponent("wall.yaml")
        try """
        name: robustness
        clock: 127.0.0.1:15962
        clock-lock-timeout: 30s
        media: \(try media ?? TestMedia.frameCode(seconds: 1).path)
        canvas: {width: 160, height: 90}
        nodes:
          - id: only
            control: 127.0.0.1:\(node.port)
            tile: {x: 0, y: 0, width: 160, height: 90}
            video-sink: "fakesink sync=true"
        """.write(to: config, atomically: true, encoding: .utf8)
        return try ChildProcess(
            ChildProcess.product("wallnode"),
            ["run", "--config", config.path, "--id", "only"] + (localClock ? ["--use-local-clock"] : []))
    }

    /// A FIFO nobody writes to: opening it for reading blocks until a writer comes.
    private func makeFIFO(_ name: String) throws -> String {
        let path = folder.appendingPathComponent(name).path
        guard mkfifo(path, 0o644) == 0 else { throw TestSupportError("mkfifo \(path): errno \(errno)") }
        return path
    }
}
