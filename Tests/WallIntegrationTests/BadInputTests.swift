import Foundation
import TestSupport
import XCTest

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Bad input reaches the node and the controller the way users and networks send it; each gets an
/// error naming what was wrong, and nothing crashes or hangs.
final class BadInputTests: XCTestCase {
    private let control = 17811
    private var folder: URL!
    private var config: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-bad-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        config = folder.appendingPathComponent("wall.yaml")
        try """
        name: bad-input
        clock: 127.0.0.1:15999
        media: \(folder.appendingPathComponent("missing.mp4").path)
        canvas: {width: 640, height: 360}
        nodes:
          - id: only
            control: 127.0.0.1:\(control)
            tile: {x: 0, y: 0, width: 640, height: 360}
            video-sink: "fakesink sync=true"
        """.write(to: config, atomically: true, encoding: .utf8)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    func testNodeControlAPI_answersBadRequestsWithTheirReason() async throws {
        let node = try ChildProcess(
            ChildProcess.product("wallnode"), ["run", "--config", config.path, "--id", "only", "--use-local-clock"])
        defer { node.signal(SIGTERM) }
        try await waitForNode()

        var reply = try await post("/start", "{\"rate\": 1}")
        XCTAssertEqual(reply.code, 400)
        XCTAssertTrue(reply.text.contains("missing itemTimeNs"), reply.text)

        reply = try await post("/preroll", "not json at all")
        XCTAssertEqual(reply.code, 400)
        XCTAssertTrue(reply.text.contains("malformed PositionRequest"), reply.text)

        reply = try await post("/seek", #"{"itemTimeNs": 1.5}"#)
        XCTAssertEqual(reply.code, 400)
        XCTAssertTrue(reply.text.contains("itemTimeNs: must be a whole number of nanoseconds"), reply.text)

        reply = try await get("/frames?after=yesterday")
        XCTAssertEqual(reply.code, 400)
        XCTAssertTrue(reply.text.contains("after must be a whole number"), reply.text)

        reply = try await post(
            "/start",
            #"{"rate": 1, "itemTimeNs": 0, "hostTimeNs": 1000000000}"#)
        XCTAssertEqual(reply.code, 409)
        XCTAssertTrue(reply.text.contains("no media is loaded"), reply.text)

        reply = try await post("/load", "")
        XCTAssertEqual(reply.code, 422)
        XCTAssertTrue(reply.text.contains("media file not found"), reply.text)

        reply = try await get("/snapshot")
        XCTAssertEqual(reply.code, 409)

        // Still answering after all that.
        reply = try await get("/status")
        XCTAssertEqual(reply.code, 200)
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
        guard bound == 0, listen(occupant, 1) == 0 else { return XCTFail("cannot occupy port \(taken): errno \(errno)") }
        let text = try String(contentsOf: config, encoding: .utf8)
            .replacingOccurrences(of: "127.0.0.1:\(control)", with: "127.0.0.1:\(taken)")
        let takenConfig = folder.appendingPathComponent("taken.yaml")
        try text.write(to: takenConfig, atomically: true, encoding: .utf8)
        let node = try ChildProcess(
            ChildProcess.product("wallnode"), ["run", "--config", takenConfig.path, "--id", "only", "--use-local-clock"])
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

    func testWallctlStart_whenNodeNeverAnswers_namesItAfterTheTimeout() throws {
        let started = Date()
        let result = try ChildProcess.run(
            ChildProcess.product("wallctl"), ["start", "--config", config.path, "--timeout", "2"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(
            result.errors.contains("only: node only at http://127.0.0.1:\(control) does not answer"), result.errors)
        XCTAssertLessThan(Date().timeIntervalSince(started), 15, "gave up within its timeout")
    }

    func testWallctlDrift_whenGroundTruthMalformed_explains() throws {
        let result = try ChildProcess.run(
            ChildProcess.product("wallctl"),
            ["drift", "--config", config.path, "--duration", "1", "--ground-truth", "only:6101"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.errors.contains("--ground-truth takes ID=PORT"), result.errors)
    }

    // MARK: HTTP

    private func waitForNode() async throws {
        let port = control
        try await withTimeout(20, "the node's control API") {
            while true {
                if let reply = try? await Self.get(port, "/status"), reply.code == 200 { return }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    private func get(_ path: String) async throws -> (code: Int, text: String) {
        try await Self.get(control, path)
    }

    private static func get(_ port: Int, _ path: String) async throws -> (code: Int, text: String) {
        try await send(URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!))
    }

    private func post(_ path: String, _ body: String) async throws -> (code: Int, text: String) {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(control)\(path)")!)
        request.httpMethod = "POST"
        request.httpBody = Data(body.utf8)
        return try await Self.send(request)
    }

    private static func send(_ request: URLRequest) async throws -> (code: Int, text: String) {
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
    }
}
