import Foundation
import TestSupport
import XCTest

/// Bad input reaches the node and the controller the way users and networks send it; each gets an
/// error naming what was wrong, and nothing crashes or hangs.
final class BadInputTests: XCTestCase {
    private let control = 17811
    private var folder: URL!
    private var config: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-bad-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        config = try TestWall(
            name: "bad-input", clockPort: 15999, media: folder.appendingPathComponent("missing.mp4").path,
            canvas: (640, 360), nodes: [TestWall.Node(id: "only", controlPort: control, tile: (0, 0, 640, 360))]
        ).write(to: folder.appendingPathComponent("wall.yaml"))
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    func testNodeControlAPI_answersBadRequestsWithTheirReason() async throws {
        let node = try ChildProcess(
            ChildProcess.product("wallnode"), ["run", "--config", config.path, "--id", "only", "--use-local-clock"])
        defer { node.signal(SIGTERM) }
        let client = TestNode(port: control, wall: "bad-input")
        try await client.waitUntilAnswering()

        var reply = try client.request("PUT", "/timeline", body: #"{"wall": "bad-input"}"#)
        XCTAssertEqual(reply.status, 400, "\(reply)")
        XCTAssertTrue(reply.body.contains("malformed Timeline: missing version"), "\(reply)")

        reply = try client.request("PUT", "/timeline", body: "not json at all")
        XCTAssertEqual(reply.status, 400, "\(reply)")
        XCTAssertTrue(reply.body.contains("malformed Timeline"), "\(reply)")

        reply = try client.get("/frames?after=yesterday")
        XCTAssertEqual(reply.status, 400, "\(reply)")
        XCTAssertTrue(reply.body.contains("after must be a whole number"), "\(reply)")

        reply = try client.request("POST", "/media/durations", body: #"{"media": ["\#(folder.path)/missing.mp4"]}"#)
        XCTAssertEqual(reply.status, 422, "\(reply)")
        XCTAssertTrue(reply.body.contains("missing.mp4\\\": no such file"), "\(reply)")

        // Between shows the screen presents black, and a snapshot says so (no player frame needed).
        reply = try client.get("/snapshot?width=4&height=2")
        XCTAssertEqual(reply.status, 200, "\(reply)")
        XCTAssertEqual(Array(reply.body.utf8), [UInt8](repeating: 0, count: 4 * 2 * 3), "\(reply)")

        reply = try client.get("/timeline")
        XCTAssertEqual(reply.status, 404, "\(reply)")
        XCTAssertTrue(reply.body.contains("no timeline yet"), "\(reply)")

        // The one-shot commands of earlier versions say what replaced them.
        reply = try client.request("POST", "/start", body: #"{"rate": 1}"#)
        XCTAssertEqual(reply.status, 410, "\(reply)")
        XCTAssertTrue(reply.body.contains("every command is an edit of the wall's timeline"), "\(reply)")

        // Still answering after all that.
        XCTAssertEqual(try client.get("/status").status, 200)
        XCTAssertTrue(node.process.isRunning)
    }

    func testWallnode_whenIdNotInConfig_namesTheKnownNodes() throws {
        let result = try ChildProcess.run(
            ChildProcess.product("wallnode"), ["run", "--config", config.path, "--id", "nobody"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(
            result.errors.contains("node \"nobody\" is not in the config (its nodes are only)"), result.errors)
    }

    func testWallnode_whenItsControlAddressIsTaken_namesTheAddress() throws {
        // Another port than the other tests' nodes use: their connections' TIME_WAIT stays behind.
        let taken = control + 1
        let occupant = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(occupant) }
        var yes: Int32 = 1
        setsockopt(occupant, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(taken).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(occupant, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(occupant, 1) == 0 else {
            return XCTFail("cannot occupy port \(taken): errno \(errno)")
        }
        let text = try String(contentsOf: config, encoding: .utf8)
            .replacingOccurrences(of: "127.0.0.1:\(control)", with: "127.0.0.1:\(taken)")
        let takenConfig = folder.appendingPathComponent("taken.yaml")
        try text.write(to: takenConfig, atomically: true, encoding: .utf8)
        let node = try ChildProcess(
            ChildProcess.product("wallnode"),
            ["run", "--config", takenConfig.path, "--id", "only", "--use-local-clock"])
        let deadline = Date().addingTimeInterval(20)
        var finished = node.finishIfExited()
        while finished == nil, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.1)
            finished = node.finishIfExited()
        }
        guard let result = finished else {
            node.signal(SIGKILL)
            _ = node.finish()
            return XCTFail("wallnode kept running on a control address it cannot have")
        }
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(
            result.errors.contains("cannot listen for control requests on 127.0.0.1:\(taken): Address already in use"),
            result.errors)
    }

    func testWallctl_whenConfigMissing_saysSo() throws {
        let result = try ChildProcess.run(
            ChildProcess.product("wallctl"), ["status", "--config", "/nonexistent/wall.yaml"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(
            result.errors.contains("/nonexistent/wall.yaml: cannot read the config: no such file"), result.errors)
    }

    /// A command waits for a node that does not answer, says so while it waits, and names it when
    /// its time is up.
    func testWallctlStart_whenNodeNeverAnswers_waitsThenNamesIt() throws {
        let started = Date()
        let result = try ChildProcess.run(
            ChildProcess.product("wallctl"), ["start", "--config", config.path, "--timeout", "2"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(
            result.output.contains(
                "waiting for clocks: only (node only at http://127.0.0.1:\(control) does not answer"), result.output)
        XCTAssertTrue(
            result.errors.contains(
                "only (node only at http://127.0.0.1:\(control) does not answer: connection refused"),
            result.errors)
        XCTAssertTrue(result.errors.contains("after waiting 2."), result.errors)
        XCTAssertLessThan(Date().timeIntervalSince(started), 15, "gave up within its timeout")
    }

    func testWallctlDrift_whenGroundTruthMalformed_explains() throws {
        let result = try ChildProcess.run(
            ChildProcess.product("wallctl"),
            ["drift", "--config", config.path, "--duration", "1", "--ground-truth", "only:6101"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.errors.contains("--ground-truth takes ID=PORT"), result.errors)
    }
}
