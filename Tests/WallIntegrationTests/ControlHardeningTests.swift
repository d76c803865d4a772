import Foundation
import LockstepNet
import TestSupport
import XCTest

/// The control API as a hostile network would use it: every request the hardening issue listed,
/// generated nonsense at every endpoint, missing or foreign credentials, idle and slow connections.
/// Each gets a 2xx or a 4xx naming what was wrong, and the node keeps playing.
final class ControlHardeningTests: XCTestCase {
    private let control = 17831
    private let token = "lockstep-test-token-4f1c2a9b7d"
    private var folder: URL!
    private var media: URL!
    private var config: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-hardening-\(getpid())")
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("media"), withIntermediateDirectories: true)
        media = folder.appendingPathComponent("media/clip.mp4")
        try? FileManager.default.removeItem(at: media)
        try FileManager.default.copyItem(at: try TestMedia.frameCode(seconds: 4), to: media)
        XCTAssertEqual(mkfifo(folder.appendingPathComponent("media/fifo.mp4").path, 0o600), 0)
        try Data((token + "\n").utf8).write(to: folder.appendingPathComponent("control.token"))
        config = try writeConfig()
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    private func writeConfig(_ extra: String = "") throws -> URL {
        try TestWall(
            name: "hardening", clockPort: 15998, media: "media/clip.mp4", canvas: (160, 90),
            stateDirectory: folder.appendingPathComponent("state").path,
            extra: ["control-token-file: control.token", "start-horizon: 60s"] + (extra.isEmpty ? [] : [extra]),
            nodes: [TestWall.Node(id: "only", controlPort: control, tile: (0, 0, 160, 90), output: (160, 90))]
        ).write(to: folder.appendingPathComponent("wall.yaml"))
    }

    /// The node, as a client with the token and the wall's name.
    private var client: TestNode { TestNode(port: control, wall: "hardening", token: token) }

    // MARK: Authentication

    func testControl_refusesRequestsWithoutTheTokenOrFromWebPages() async throws {
        let node = try startNode()
        defer { node.signal(SIGTERM) }
        try await waitForNode()

        let timeline = try TestTimelines.json(
            wall: "hardening", media: media.path, start: 10_000_000_000, version: 9)
        var reply = try RawHTTP.request(
            port: control, "PUT", "/timeline", headers: ["Lockstep-Wall": "hardening"], body: timeline)
        XCTAssertEqual(reply.status, 401, "\(reply)")
        XCTAssertTrue(reply.body.contains("needs the wall's control token"), "\(reply)")
        XCTAssertTrue(reply.headers.lowercased().contains("www-authenticate: bearer"), reply.headers)

        reply = try RawHTTP.request(
            port: control, "GET", "/status", headers: ["Authorization": "Bearer lockstep-test-token-4f1c2a9b7e"])
        XCTAssertEqual(reply.status, 401, "\(reply)")
        XCTAssertTrue(reply.body.contains("not this wall's"), "\(reply)")

        // A web page an operator visits: text/plain, foreign Origin, even with the token.
        reply = try RawHTTP.request(
            port: control, "PUT", "/timeline",
            headers: [
                "Origin": "http://evil.example", "Content-Type": "text/plain", "Authorization": "Bearer \(token)",
                "Lockstep-Wall": "hardening",
            ],
            body: timeline)
        XCTAssertEqual(reply.status, 403, "\(reply)")
        XCTAssertTrue(reply.body.contains("web pages"), "\(reply)")

        reply = try RawHTTP.request(port: control, "GET", "/metrics")
        XCTAssertEqual(reply.status, 401, "metrics are closed unless the config opens them")

        reply = try get("/status")
        XCTAssertEqual(reply.status, 200, "\(reply)")
        XCTAssertFalse(node.finishIfExited()?.errors.contains(token) ?? false, "the token is never logged")
    }

    func testMetrics_whenConfigOpensThem_answerWithoutTheToken() async throws {
        config = try writeConfig("metrics-open: true")
        let node = try startNode()
        defer { node.signal(SIGTERM) }
        try await waitForNode()
        XCTAssertEqual(try RawHTTP.request(port: control, "GET", "/metrics").status, 200)
        XCTAssertEqual(try RawHTTP.request(port: control, "GET", "/status").status, 401)
    }

    /// Issue 11's metrics: presentation lateness as a histogram of every frame, the clock's round
    /// trip, real-time priority, the process's figures, in base units, families in a stable order.
    func testMetrics_haveLatenessClockProcessFigures_inAStableOrder() async throws {
        let node = try startNode()
        defer { node.signal(SIGTERM) }
        try await waitForNode()
        try await play()
        let first = try get("/metrics").body
        let second = try get("/metrics").body
        func families(_ text: String) -> [String] {
            text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map { String($0.split(separator: " ")[2]) }
        }
        XCTAssertEqual(families(first), families(first).sorted(), "families sorted by name")
        XCTAssertEqual(families(first), families(second), "the same order at every scrape")
        for family in [
            "lockstep_presentation_lateness_seconds", "lockstep_clock_round_trip_seconds",
            "lockstep_clock_rate_ratio", "lockstep_realtime_priority_granted", "lockstep_frames_late_total",
            "lockstep_frames_dropped_total", "lockstep_clock_error_bound_seconds", "lockstep_build_info",
            "lockstep_player_pipelines_abandoned",
            "process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds", "process_max_fds",
            "process_start_time_seconds",
        ] {
            XCTAssertTrue(families(second).contains(family), "\(family) missing from\n\(second)")
        }
        let observed = second.split(separator: "\n")
            .first { $0.hasPrefix("lockstep_presentation_lateness_seconds_count{") }
            .flatMap { Double($0.split(separator: " ").last ?? "") }
        let presented = try framesPresented()
        XCTAssertGreaterThanOrEqual(observed ?? 0, 10, "every presented frame's lateness is observed:\n\(second)")
        XCTAssertLessThanOrEqual(observed ?? .infinity, Double(presented), "no frame counted twice")
        let resident = second.split(separator: "\n").first { $0.hasPrefix("process_resident_memory_bytes{") }
            .flatMap { Double($0.split(separator: " ").last ?? "") }
        XCTAssertGreaterThan(resident ?? 0, 1_000_000, "a node's resident memory is megabytes")
    }

    func testControl_overTLS_servesTheConfiguredCertificate() async throws {
        let certificate = folder.appendingPathComponent("control.crt").path
        let key = folder.appendingPathComponent("control.key").path
        let made = try ChildProcess.run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "1",
                "-subj", "/CN=lockstep-test", "-addext", "subjectAltName=IP:127.0.0.1",
            ])
        XCTAssertEqual(made.status, 0, made.errors)
        config = try writeConfig(
            "control-tls: {certificate: control.crt, key: control.key}\ncontroller: {listen: \"127.0.0.1:17839\", library: library}"
        )
        let node = try startNode()
        defer { node.signal(SIGTERM) }
        let url = "https://127.0.0.1:\(control)/status"
        var curl = (status: Int32(-1), output: "", errors: "")
        try await poll(within: 20, "the node's TLS control API") {
            curl = try ChildProcess.run(
                "/usr/bin/curl",
                ["-sS", "--cacert", certificate, "-H", "Authorization: Bearer \(token)", "-w", "\n%{http_code}", url])
            return curl.status == 0
        }
        XCTAssertTrue(curl.output.hasSuffix("200"), curl.output)
        XCTAssertTrue(curl.output.contains("\"id\":\"only\""), curl.output)
        let untrusted = try ChildProcess.run("/usr/bin/curl", ["-sS", "-o", "/dev/null", url])
        XCTAssertNotEqual(untrusted.status, 0, "a client that does not trust the certificate cannot talk to the node")
        XCTAssertEqual(try? RawHTTP.request(port: control, "GET", "/status").status ?? nil, nil, "no plain HTTP")

        // The control daemon serves over TLS too, and a push goes through it: uploaded over HTTPS,
        // fetched by the node over HTTPS, with the token.
        let daemon = try ChildProcess(ChildProcess.product("wallctl"), ["serve", "--config", config.path])
        defer { daemon.signal(SIGTERM) }
        try await poll(within: 20, "the daemon's TLS library") {
            curl = try ChildProcess.run(
                "/usr/bin/curl",
                [
                    "-sS", "--cacert", certificate, "-H", "Authorization: Bearer \(token)",
                    "https://127.0.0.1:17839/content",
                ])
            return curl.status == 0
        }
        XCTAssertTrue(curl.output.contains("\"held\":[]"), curl.output)
        XCTAssertEqual(try? RawHTTP.request(port: 17839, "GET", "/content").status ?? nil, nil, "no plain HTTP")
        let file = folder.appendingPathComponent("pushed.bin")
        try TestMedia.payload(count: 300_000).write(to: file)
        let push = try ChildProcess.run(
            ChildProcess.product("wallctl"), ["push", "--config", config.path, "--timeout", "30", file.path])
        XCTAssertEqual(push.status, 0, "push over TLS: \(push.output)\n\(push.errors)")
        XCTAssertTrue(push.output.contains("uploaded to the daemon's library"), push.output)
    }

    // MARK: Requests

    /// Every request the hardening issues found accepted, crashing or wedging the node, replayed as
    /// timelines (the one command a node takes): each gets a 4xx naming what was wrong, nothing is
    /// kept, and the node plays on. A restart afterwards is clean: what it stored is what it played.
    func testIssueReplays_eachGetsA4xxNamingTheField_andTheNodeKeepsPlaying() async throws {
        var node = try startNode()
        defer { node.signal(SIGTERM) }
        try await waitForNode()
        try await play()
        let before = try framesPresented()
        let root = folder.appendingPathComponent("media").path
        func timeline(
            media: String? = nil, start: Int64 = 10_000_000_000, version: UInt64 = 2, rate: (Int32, Int32) = (1, 1),
            wall: String = "hardening"
        ) throws -> String {
            try TestTimelines.json(
                wall: wall, media: media ?? self.media.path, start: start, version: version, rate: rate)
        }
        let replays: [(method: String, path: String, body: String?, status: Int, says: String)] = [
            ("GET", "/frames?limit=0", nil, 422, "limit: must be 1 to 4096"),
            ("GET", "/frames?limit=18446744073709551615", nil, 422, "limit: must be 1 to 4096"),
            ("GET", "/frames?after=18446744073709551616", nil, 400, "after must be a whole number"),
            ("GET", "/plays?limit=0", nil, 422, "limit: must be 1 to 10000, got 0"),
            ("GET", "/plays?fromUnixMs=5&toUnixMs=5", nil, 422, "fromUnixMs: must come before toUnixMs (5), got 5"),
            ("GET", "/plays?toUnixMs=9223372036854775808", nil, 400, "toUnixMs must be a whole number"),
            ("GET", "/snapshot?width=18446744073709551615&height=2", nil, 422, "width: must be 1 to 3840"),
            ("GET", "/snapshot?width=20000&height=20000", nil, 422, "width: must be 1 to 3840"),
            ("GET", "/snapshot?width=64", nil, 422, "height: is required with width"),
            ("PUT", "/timeline", try timeline(media: "/dev/kmsg"), 422, "is not inside the media roots"),
            ("PUT", "/timeline", try timeline(media: "/etc/passwd"), 422, "is not inside the media roots"),
            ("PUT", "/timeline", try timeline(media: "\(root)/fifo.mp4"), 422, "is not a regular file"),
            ("PUT", "/timeline", try timeline(media: "\(root)/../control.token"), 422, "not inside the media roots"),
            ("PUT", "/timeline", try timeline(media: "media/clip.mp4"), 422, "must be an absolute path"),
            ("PUT", "/timeline", try timeline(rate: (1000, 1)), 422, "rate 1000 is not one a wall plays at"),
            ("PUT", "/timeline", try timeline(rate: (0, 1)), 422, "rate 0 is not one a wall plays at"),
            ("PUT", "/timeline", try timeline(rate: (-1, 1)), 422, "rate -1 plays backwards"),
            ("PUT", "/timeline", try timeline(rate: (-1, 2)), 422, "rate -1\\/2 plays backwards"),
            ("PUT", "/timeline", try timeline(rate: (1, 0)), 400, "a rate's denominator must be positive"),
            ("PUT", "/timeline", try timeline(start: .max), 422, "segments.from"),
            ("PUT", "/timeline", try timeline(version: .max), 422, "is outside 1 to 9007199254740991"),
            ("PUT", "/timeline", try timeline(version: 1 << 40), 409, "jumps 1099511627775 ahead of the version 1"),
            ("PUT", "/timeline", try timeline(version: 1), 409, "is not newer than the version 1 in force"),
            ("PUT", "/timeline", try timeline(wall: "lobby"), 409, "the timeline is for wall \\\"lobby\\\""),
            (
                "PUT", "/timeline", try timeline().replacingOccurrences(of: "\"version\":2", with: "\"version\":null"),
                400, "version"
            ),
            ("POST", "/pause", "{}", 410, "every command is an edit of the wall's timeline"),
            ("POST", "/start", #"{"rate": 1}"#, 410, "every command is an edit of the wall's timeline"),
        ]
        for replay in replays {
            let reply = try client.request(replay.method, replay.path, body: replay.body)
            XCTAssertEqual(
                reply.status, replay.status, "\(replay.method) \(replay.path) \(replay.body ?? ""): \(reply)")
            XCTAssertTrue(reply.body.contains(replay.says), "\(replay.path) \(replay.body ?? ""): \(reply)")
        }
        // Another wall's name in the header is refused on every endpoint, reads included.
        for (method, path) in [("GET", "/status"), ("GET", "/timeline"), ("PUT", "/timeline"), ("GET", "/metrics")] {
            let reply = try client.request(
                method, path, body: method == "PUT" ? try timeline() : nil, headers: ["Lockstep-Wall": "lobby"])
            XCTAssertEqual(reply.status, 409, "\(method) \(path): \(reply)")
            XCTAssertEqual(
                TestNode.errorSentence(reply),
                "this is node only of wall \"hardening\"; the request is for wall \"lobby\": refused")
        }
        try await assertStillPlaying(since: before, node)
        // What the node kept is what it plays: a restart comes back to it, cleanly.
        let version = try XCTUnwrap((try client.timeline())?["version"] as? Int)
        node.signal(SIGKILL)
        _ = node.finish()
        node = try startNode()
        try await waitForNode()
        try await client.waitForStatus(within: 20, "the node back on its timeline after a restart") { status in
            let timeline = status["timeline"] as? [String: Any]
            return timeline?["version"] as? Int == version && timeline?["inStep"] as? Bool == true
        }
        XCTAssertFalse(
            try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("state").path)
                .contains { $0.contains("unusable") }, "nothing set aside: the state file was never poisoned")
    }

    /// Generated requests at every endpoint: nonsense values in every field, unknown paths and
    /// methods, broken JSON and bytes that are not HTTP. Each gets a 2xx or 4xx (or, for bytes
    /// that are not HTTP, a closed connection), and the node plays on.
    func testFuzz_everyEndpointAnswers2xxOr4x_andTheNodePlaysOn() async throws {
        let node = try startNode()
        defer { node.signal(SIGTERM) }
        try await waitForNode()
        try await play()
        let before = try framesPresented()
        var generator = RequestFuzzer(seed: 0x10C5_7E9, mediaFolder: folder.appendingPathComponent("media").path)
        var statuses: [Int: Int] = [:]
        for index in 0..<1500 {
            let request = generator.next()
            let reply = try RawHTTP.exchange(
                port: control, request.bytes(port: control, token: token, wallName: "hardening"),
                halfClose: !request.isWellFormedHTTP, timeout: 15)
            if let status = reply.status {
                statuses[status, default: 0] += 1
                XCTAssertTrue((200..<500).contains(status), "request \(index): \(request): \(reply)")
            } else {
                XCTAssertFalse(request.isWellFormedHTTP, "request \(index) got no reply: \(request)")
            }
            XCTAssertNil(node.finishIfExited(), "the node died at request \(index): \(request)")
        }
        XCTAssertGreaterThan(statuses.filter { (400..<500).contains($0.key) }.values.reduce(0, +), 1100, "\(statuses)")
        try await assertStillPlaying(since: before, node)
    }

    // MARK: Connections

    func testIdleAndSlowConnections_areClosed_andNeverLockOutAClientWithARequest() async throws {
        let node = try startNode(fileLimit: 1024)  // 64 served, 256 accepted
        defer { node.signal(SIGTERM) }
        try await waitForNode()

        let opened = Date()
        var held: [RawHTTP.Connection] = []
        for _ in 0..<64 { held.append(try RawHTTP.Connection(port: control, timeout: 20)) }
        try held[0].send(Array("GET /status HTTP/1.1\r\nHost: x\r\n".utf8))  // a slowloris: never finishes

        // All 64 places are held by connections that ask nothing: a client with a request still gets
        // in, in place of the oldest of them.
        let answered = try RawHTTP.request(
            port: control, "GET", "/status", headers: ["Authorization": "Bearer \(token)"])
        XCTAssertEqual(answered.status, 200, "\(answered)")
        XCTAssertTrue(try held[0].readToEnd(timeout: 5).isEmpty, "the oldest waiting connection made room")
        XCTAssertLessThan(Date().timeIntervalSince(opened), 9, "made room at once, not at the deadline")

        for connection in held.dropFirst() {
            let rest = try connection.readToEnd(timeout: 20)
            XCTAssertTrue(rest.isEmpty, "an idle connection gets no reply, only closed")
        }
        let closedAfter = Date().timeIntervalSince(opened)
        XCTAssertGreaterThan(closedAfter, 9, "held until the request deadline")
        XCTAssertLessThan(closedAfter, 14, "closed at the request deadline, not held forever")
        XCTAssertEqual(try get("/status").status, 200)
    }

    /// At a low open-file limit the node takes no more connections than it can afford: past them it
    /// stops accepting instead of spinning on EMFILE, and it answers again once they are gone.
    func testAtItsFileLimit_theNodeNeitherSpinsNorStopsAnswering() async throws {
        let node = try startNode(fileLimit: 200)  // 13 served, 52 accepted
        defer { node.signal(SIGTERM) }
        try await waitForNode()
        var held: [RawHTTP.Connection] = []
        for _ in 0..<250 { held.append(try RawHTTP.Connection(port: control, timeout: 20)) }
        // Once the node has taken what it accepts, its descriptors stop changing; then its CPU is
        // measured over 3 s (a span to measure over, not a wait for something to happen).
        var descriptorCount = -1
        try await eventually(within: 5, "the node's accepting settled") {
            let count = try FileManager.default.contentsOfDirectory(
                atPath: "/proc/\(node.process.processIdentifier)/fd"
            ).count
            defer { descriptorCount = count }
            return count == descriptorCount
        }
        let before = try node.cpuTicks()
        try await Task.sleep(for: .seconds(3))
        let used = Double(try node.cpuTicks() - before) / 100 / 3
        XCTAssertLessThan(used, 0.25, "CPU share of the node while 250 connections wait: no accept loop spinning")
        let descriptors = try FileManager.default.contentsOfDirectory(
            atPath: "/proc/\(node.process.processIdentifier)/fd")
        XCTAssertLessThan(descriptors.count, 200 - 40, "connections left room for the player")
        held.removeAll()
        try await poll(within: 5, "the node answering once the connections are gone") {
            (try? self.get("/status").status) == 200
        }
    }

    // MARK: Helpers

    /// Starts the node, under `fileLimit` open files (soft and hard) when given.
    private func startNode(fileLimit: Int? = nil) throws -> ChildProcess {
        let node = ["run", "--config", config.path, "--id", "only", "--use-local-clock"]
        guard let fileLimit else { return try ChildProcess(ChildProcess.product("wallnode"), node) }
        return try ChildProcess(
            "/usr/bin/prlimit", ["--nofile=\(fileLimit):\(fileLimit)", ChildProcess.product("wallnode")] + node)
    }

    private func waitForNode() async throws {
        try await client.waitUntilAnswering()
    }

    /// Polls `condition` until it holds, failing after `seconds`.
    private func poll(within seconds: Double, _ what: String, _ condition: () throws -> Bool) async throws {
        try await eventually(within: seconds, what, condition)
    }

    private func send(_ method: String, _ path: String, body: String? = nil) throws -> RawHTTP.Reply {
        try client.request(method, path, body: body)
    }

    private func get(_ path: String) throws -> RawHTTP.Reply { try send("GET", path) }

    private func framesPresented() throws -> Int {
        try XCTUnwrap(try client.player()["framesPresented"] as? Int)
    }

    /// Plays the clip as a timeline, half a second ahead, and waits for frames.
    private func play() async throws {
        let now = try XCTUnwrap(try client.status()["masterTimeNs"] as? Int)
        let timeline = try TestTimelines.json(
            wall: "hardening", media: media.path, start: Int64(now) + 500_000_000, outPointNs: 4_000_000_000)
        let reply = try send("PUT", "/timeline", body: timeline)
        XCTAssertEqual(reply.status, 200, "\(reply)")
        let first = try framesPresented()
        try await poll(within: 10, "frames presented") { try self.framesPresented() >= first + 10 }
    }

    private func assertStillPlaying(
        since before: Int, _ node: ChildProcess, file: StaticString = #filePath, line: UInt = #line
    )
        async throws
    {
        XCTAssertNil(node.finishIfExited(), "the node is running", file: file, line: line)
        let player = try client.player()
        XCTAssertEqual(player["timeControlStatus"] as? String, "playing", "\(player)", file: file, line: line)
        XCTAssertEqual(player["rate"] as? Double, 1, "\(player)", file: file, line: line)
        XCTAssertNil(player["error"] as? String, "\(player)", file: file, line: line)
        let now = try framesPresented()
        XCTAssertGreaterThan(now, before, "frames kept coming", file: file, line: line)
        try await poll(within: 5, "more frames") { try self.framesPresented() >= now + 5 }
    }
}
