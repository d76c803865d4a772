import Foundation
import TestSupport
import XCTest

/// Media a wall node must refuse, and files that would block whoever opens them: the node says
/// what is wrong at once, keeps answering, and SIGTERM always stops it within two seconds.
final class NodeRobustnessTests: XCTestCase {
    private let node = TestNode(port: 17861, wall: "robustness")
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-robust-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    func testMediaWithoutVideo_isRefusedNamingTheMissingVideo() async throws {
        let audio = try TestMedia.audioOnly()
        let wallnode = try startNode(localClock: true, roots: [audio.deletingLastPathComponent().path])
        defer { wallnode.signal(SIGTERM) }
        try await node.waitUntilAnswering()

        let reply = try node.request("POST", "/media/durations", body: #"{"media": ["\#(audio.path)"]}"#)
        XCTAssertEqual(reply.status, 422, "\(reply)")
        XCTAssertEqual(
            TestNode.errorSentence(reply),
            "the media has no video track: \(audio.path) holds only audio (aac), and every wall node shows video")
    }

    func testAFIFO_isRefusedAtOnce_andTheNodeKeepsAnswering() async throws {
        let fifo = try makeFIFO("stuck.mp4")
        let wallnode = try startNode(localClock: true)
        // A node wedged by the FIFO would ignore SIGTERM and hold the test in ChildProcess's deinit.
        defer { wallnode.signal(SIGKILL) }
        try await node.waitUntilAnswering()

        let started = Date()
        let node = self.node
        let reply = try await withTimeout(10, "the reply to a FIFO") {
            try node.request("POST", "/media/durations", body: #"{"media": ["\#(fifo)"]}"#)
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "refused before anything opens it")
        XCTAssertEqual(reply.status, 422, "\(reply)")
        XCTAssertTrue(TestNode.errorSentence(reply).contains("is not a regular file"), "\(reply)")
        // A timeline naming it is refused whole, before it is kept.
        let timeline = try TestTimelines.json(wall: "robustness", media: fifo, start: 10_000_000_000)
        let refused = try node.request("PUT", "/timeline", body: timeline)
        XCTAssertEqual(refused.status, 422, "\(refused)")
        XCTAssertTrue(TestNode.errorSentence(refused).contains("segments[0].playlist.entries[0].media"), "\(refused)")
        XCTAssertEqual(try node.get("/status").status, 200)
    }

    func testSIGTERM_whileATimelineWaitsForTheClock_exitsWithinTwoSeconds() async throws {
        // No master clock answers: the timeline the node kept waits for the clock to lock. With no
        // clock the node takes only a timeline on the epoch of the one it holds.
        let clip = try TestMedia.frameCode(seconds: 1)
        let state = folder.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        try Data(try TestTimelines.json(wall: "robustness", media: clip.path, start: 10_000_000_000).utf8).write(
            to: state.appendingPathComponent("robustness-only.timeline.json"))
        let wallnode = try startNode(localClock: false)
        defer { wallnode.signal(SIGKILL) }
        try await node.waitUntilAnswering()
        func put(version: UInt64, epoch: UInt64) throws -> RawHTTP.Reply {
            try node.request(
                "PUT", "/timeline",
                body: try TestTimelines.json(
                    wall: "robustness", media: clip.path, start: 10_000_000_000, version: version, epoch: epoch))
        }
        let refused = try put(version: 2, epoch: 7)
        XCTAssertEqual(refused.status, 409)
        XCTAssertTrue(TestNode.errorSentence(refused).contains("no usable master clock yet"), "\(refused)")
        XCTAssertEqual(try put(version: 2, epoch: 0).status, 200, "on the epoch of the timeline it holds")
        try await node.waitForStatus(within: 5, "the node waiting for its clock") { status in
            ((status["timeline"] as? [String: Any])?["problem"] as? String)?.contains("waiting for the master clock")
                == true
        }
        wallnode.signal(SIGTERM)
        let exited = await wallnode.secondsUntilExit(limit: 10)
        XCTAssertNotNil(exited, "wallnode still runs 10 s after SIGTERM")
        XCTAssertLessThan(exited ?? .infinity, 2)
    }

    /// Whatever sits where the node keeps its timeline is checked as a request would be before it
    /// is used: a file a crash, a disk or a person damaged is set aside and reported, the node
    /// answers at once, and the next timeline the wall sends is played and kept.
    func testAPoisonedStateFile_isSetAsideAtStart_andTheNextTimelineIsPlayedAndKept() async throws {
        let clip = try TestMedia.frameCode(seconds: 1)
        let state = folder.appendingPathComponent("state")
        let file = state.appendingPathComponent("robustness-only.timeline.json")
        let valid = try TestTimelines.json(wall: "robustness", media: clip.path, start: 0)
        let poisons: [(name: String, make: () throws -> Void, says: String)] = [
            (
                "outside the media roots",
                {
                    try Data(try TestTimelines.json(wall: "robustness", media: "/etc/passwd", start: 0).utf8).write(
                        to: file)
                }, "is not inside the media roots"
            ),
            (
                "another wall's",
                {
                    try Data(try TestTimelines.json(wall: "lobby", media: clip.path, start: 0).utf8).write(to: file)
                }, "lobby"
            ),
            ("cut short by a power cut", { try Data(valid.utf8.prefix(57)).write(to: file) }, "not a timeline"),
            ("a FIFO", { XCTAssertEqual(mkfifo(file.path, 0o600), 0) }, "not a regular file"),
            (
                "a link to /dev/zero",
                {
                    try FileManager.default.createSymbolicLink(atPath: file.path, withDestinationPath: "/dev/zero")
                }, "symbolic links"
            ),
            ("huge", { try Data(repeating: 0x20, count: 17 << 20).write(to: file) }, "bytes; a timeline is at most"),
            (
                "a rate of zero",
                {
                    try Data(try TestTimelines.json(wall: "robustness", media: clip.path, start: 0, rate: (0, 1)).utf8)
                        .write(to: file)
                }, "rate"
            ),
        ]
        var version: UInt64 = 1
        for poison in poisons {
            try? FileManager.default.removeItem(at: state)
            try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
            try poison.make()
            let wallnode = try startNode(localClock: true)
            defer { wallnode.signal(SIGKILL) }
            try await node.waitUntilAnswering(within: 10)
            let problem = try node.timeline()?["problem"] as? String ?? ""
            XCTAssertTrue(problem.contains("set aside"), "\(poison.name): \(problem)")
            XCTAssertTrue(problem.contains(poison.says), "\(poison.name): \(problem)")
            let kept = try FileManager.default.contentsOfDirectory(atPath: state.path).filter {
                $0.contains(".unusable-")
            }
            XCTAssertEqual(kept.count, 1, "\(poison.name): kept aside for the operator")

            version += 1
            let next = try TestTimelines.json(wall: "robustness", media: clip.path, start: 0, version: version)
            XCTAssertEqual(try node.request("PUT", "/timeline", body: next).status, 200, poison.name)
            try await node.waitForStatus(within: 10, "\(poison.name): the next timeline played") { status in
                (status["timeline"] as? [String: Any])?["state"] as? String == "playing"
            }
            wallnode.signal(SIGKILL)
            _ = wallnode.finish()
            let restarted = try startNode(localClock: true)
            defer { restarted.signal(SIGKILL) }
            try await node.waitForStatus(within: 10, "\(poison.name): the kept timeline back after a restart") {
                status in
                let timeline = status["timeline"] as? [String: Any]
                return timeline?["version"] as? Int == Int(version)
                    && (timeline?["problem"] as? String)?.contains("set aside") != true
            }
            restarted.signal(SIGKILL)
            _ = restarted.finish()
        }
    }

    /// A timeline may name content not copied yet: the node says which files it lacks, in its
    /// status and its metrics, until they arrive.
    func testContentNotYetCopied_isListedUntilItArrives() async throws {
        let wallnode = try startNode(localClock: true)
        defer { wallnode.signal(SIGTERM) }
        try await node.waitUntilAnswering()
        let later = folder.appendingPathComponent("later.mp4")
        let timeline = try TestTimelines.json(wall: "robustness", media: later.path, start: 10_000_000_000)
        XCTAssertEqual(try node.request("PUT", "/timeline", body: timeline).status, 200)
        XCTAssertEqual(try node.timeline()?["missingMedia"] as? [String], [later.path])
        XCTAssertTrue(
            try node.get("/metrics").body.contains(#"lockstep_content_missing{wall="robustness",node="only"} 1"#))
        try FileManager.default.copyItem(at: try TestMedia.frameCode(seconds: 1), to: later)
        XCTAssertEqual(try node.timeline()?["missingMedia"] as? [String], [])
        XCTAssertTrue(
            try node.get("/metrics").body.contains(#"lockstep_content_missing{wall="robustness",node="only"} 0"#))
    }

    /// Under journald (`JOURNAL_STREAM` naming its standard error) every line starts with its syslog
    /// priority, so `journalctl -p` filters; the SIGHUP notice is `<5>`.
    func testSIGHUP_isLoggedAndIgnored() async throws {
        let wallnode = try startNode(localClock: true, underJournald: true)
        defer { wallnode.signal(SIGTERM) }
        try await node.waitUntilAnswering()
        wallnode.signal(SIGHUP)
        wallnode.signal(SIGHUP)
        let exited = await wallnode.secondsUntilExit(limit: 1)
        XCTAssertNil(exited, "a hangup does not end the node")
        XCTAssertEqual(try node.get("/status").status, 200)
        wallnode.signal(SIGTERM)
        let finished = wallnode.finish()
        XCTAssertTrue(finished.errors.contains("SIGHUP ignored"), finished.errors)
        let lines = finished.errors.split(separator: "\n")
        XCTAssertTrue(lines.contains { $0.hasPrefix("<5>{") && $0.contains("SIGHUP ignored") }, finished.errors)
        XCTAssertTrue(
            lines.allSatisfy { $0.range(of: #"^<[0-7]>\{"#, options: .regularExpression) != nil }, finished.errors)
    }

    // MARK: Helpers

    /// A node of a one-node wall whose media roots are this test's folder (and `roots`).
    private func startNode(localClock: Bool, roots: [String] = [], underJournald: Bool = false) throws -> ChildProcess {
        let media = try TestMedia.frameCode(seconds: 1)
        let allRoots = [folder.path, media.deletingLastPathComponent().path] + roots
        let config = try TestWall(
            name: "robustness", clockPort: 15962, media: media.path, canvas: (160, 90),
            stateDirectory: folder.appendingPathComponent("state").path,
            extra: ["clock-lock-timeout: 30s", "media-roots: [\(allRoots.joined(separator: ", "))]"],
            nodes: [TestWall.Node(id: "only", controlPort: node.port, tile: (0, 0, 160, 90))]
        ).write(to: folder.appendingPathComponent("wall.yaml"))
        return try ChildProcess(
            ChildProcess.product("wallnode"),
            ["run", "--config", config.path, "--id", "only"] + (localClock ? ["--use-local-clock"] : []),
            underJournald: underJournald)
    }

    /// A FIFO nobody writes to: opening it for reading blocks until a writer comes.
    private func makeFIFO(_ name: String) throws -> String {
        let path = folder.appendingPathComponent(name).path
        guard mkfifo(path, 0o644) == 0 else { throw TestSupportError("mkfifo \(path): errno \(errno)") }
        return path
    }
}
