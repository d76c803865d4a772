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
        let url = folder.appendingPathComponent("wall.yaml")
        try """
        name: hardening
        clock: 127.0.0.1:15998
        media: media/clip.mp4
        canvas: {width: 160, height: 90}
        control-token-file: control.token
        start-horizon: 60s
        \(extra)
        nodes:
          - id: only
            control: 127.0.0.1:\(control)
            tile: {x: 0, y: 0, width: 160, height: 90}
            output: {width: 160, height: 90}
            video-sink: "fakesink sync=true"
        """.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    // MARK: Authentication

    func testControl_refusesRequestsWithoutTheTokenOrFromWebPages() async throws {
        let node = try startNode()
        defer { node.signal(SIGTERM) }
        try await waitForNode()

        var reply = try RawHTTP.request(port: control, "POST", "/stop", body: "")
        XCTAssertEqual(reply.status, 401, "\(reply)")
        XCTAssertTrue(reply.body.contains("needs the wall's control token"), "\(reply)")
        XCTAssertTrue(reply.headers.lowercased().contains("www-authenticate: bearer"), reply.headers)

        reply = try RawHTTP.request(
            port: control, "GET", "/status", headers: ["Authorization": "Bearer lockstep-test-token-4f1c2a9b7e"])
        XCTAssertEqual(reply.status, 401, "\(reply)")
        XCTAssertTrue(reply.body.contains("not this wall's"), "\(reply)")

        // A web page an operator visits: text/plain, foreign Origin, even with the token.
        reply = try RawHTTP.request(
            port: control, "POST", "/stop",
            headers: [
                "Origin": "http://evil.example", "Content-Type": "text/plain", "Authorization": "Bearer \(token)",
            ],
            body: "x")
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
        config = try writeConfig("control-tls: {certificate: control.crt, key: control.key}")
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
    }

    // MARK: Requests

    /// Every request the hardening issue found accepted, crashing or wedging the node, replayed.
    func testIssueReplays_eachGetsA4xxNamingTheField_andTheNodeKeepsPlaying() async throws {
        let node = try startNode()
        defer { node.signal(SIGTERM) }
        try await waitForNode()
        try await play()
        let before = try framesPresented()

        let time = #"0"#
        let now = try masterTimeSeconds()
        func start(rate: String = "1", itemTime: String = #"0"#, hostTime: String) -> String {
            #"{"rate": \#(rate), "itemTimeNs": \#(itemTime), "hostTimeNs": \#(hostTime)}"#
        }
        let soon = "\(Int64((now + 2) * 1e9))"
        let replays: [(method: String, path: String, body: String?, status: Int, says: String)] = [
            ("GET", "/frames?limit=0", nil, 422, "limit: must be 1 to 4096"),
            ("GET", "/frames?limit=18446744073709551615", nil, 422, "limit: must be 1 to 4096"),
            ("GET", "/frames?after=18446744073709551616", nil, 400, "after must be a whole number"),
            ("GET", "/snapshot?width=18446744073709551615&height=2", nil, 422, "width: must be 1 to 3840"),
            ("GET", "/snapshot?width=20000&height=20000", nil, 422, "width: must be 1 to 3840"),
            ("GET", "/snapshot?width=64", nil, 422, "height: is required with width"),
            ("POST", "/load", #"{"media": "/dev/kmsg"}"#, 422, "is not inside the media roots"),
            ("POST", "/load", #"{"media": "/etc/passwd"}"#, 422, "is not inside the media roots"),
            ("POST", "/load", #"{"media": "/etc/no-such-file"}"#, 422, "is not inside the media roots"),
            ("POST", "/load", #"{"media": "\#(folder.path)/media/fifo.mp4"}"#, 422, "is not a regular file"),
            (
                "POST", "/load", #"{"media": "\#(folder.path)/media/../control.token"}"#, 422,
                "not inside the media roots"
            ),
            ("POST", "/load", #"{"media": "media/clip.mp4"}"#, 422, "must be an absolute path"),
            ("POST", "/start", start(rate: "1000", hostTime: soon), 422, "rate: must lie between"),
            ("POST", "/start", start(rate: "3.4e38", hostTime: soon), 422, "rate: must lie between"),
            ("POST", "/start", start(rate: "-3.4e38", hostTime: soon), 422, "rate: must lie between"),
            ("POST", "/start", start(rate: "1e-30", hostTime: soon), 422, "rate: must lie between"),
            ("POST", "/start", start(rate: "0", hostTime: soon), 422, "rate: must not be 0"),
            (
                "POST", "/start", start(hostTime: "\((Int64(now) + 315_360_000) * 1_000_000_000)"), 422,
                "the wall's start-horizon allows 60.0 s"
            ),
            ("POST", "/start", start(hostTime: #"9223372036854775807"#), 422, "hostTimeNs:"),
            ("POST", "/start", start(hostTime: "null"), 422, "hostTimeNs: must be a whole number"),
            ("POST", "/start", start(hostTime: "1e400"), 400, "hostTimeNs"),
            ("POST", "/start", start(hostTime: time), 422, "has passed"),
            (
                "POST", "/start", start(itemTime: #"1000000000000"#, hostTime: soon), 422,
                "itemTimeNs: 1000.0 s is not within the item"
            ),
            ("POST", "/seek", #"{"itemTimeNs": 1000000000000}"#, 422, "is not within the item"),
            ("POST", "/preroll", #"{"itemTimeNs": -1000000000}"#, 422, "must not be negative"),
            ("POST", "/pause", #"{"hostTimeNs": 9223372036854775807}"#, 422, "hostTimeNs:"),
            ("POST", "/pause", #"{"hostTimeNs": 1.5}"#, 400, "hostTimeNs"),
            ("POST", "/identify", #"{"durationNs": 100}"#, 422, "durationNs: must be 1 s to 600 s, got 1e-07 s"),
            ("POST", "/identify", #"{"durationNs": 1e400}"#, 400, "durationNs"),
            ("POST", "/identify", #"{"durationNs": 5000000000}"#, 409, "the screen is busy: it is showing"),
        ]
        for replay in replays {
            let reply = try send(replay.method, replay.path, body: replay.body)
            XCTAssertEqual(
                reply.status, replay.status, "\(replay.method) \(replay.path) \(replay.body ?? ""): \(reply)")
            XCTAssertTrue(reply.body.contains(replay.says), "\(replay.path) \(replay.body ?? ""): \(reply)")
        }
        try await assertStillPlaying(since: before, node)
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
                port: control, request.bytes(port: control, token: token), halfClose: !request.isWellFormedHTTP,
                timeout: 15)
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

    func testIdleAndSlowConnections_areClosed_andTheConnectionCapRefusesClearly() async throws {
        let node = try startNode(fileLimit: 1024)  // 64 served, 256 accepted
        defer { node.signal(SIGTERM) }
        try await waitForNode()

        let opened = Date()
        var held: [RawHTTP.Connection] = []
        for _ in 0..<64 { held.append(try RawHTTP.Connection(port: control, timeout: 20)) }
        try held[0].send(Array("GET /status HTTP/1.1\r\nHost: x\r\n".utf8))  // a slowloris: never finishes
        try await Task.sleep(for: .milliseconds(300))

        let refused = try RawHTTP.request(
            port: control, "GET", "/status", headers: ["Authorization": "Bearer \(token)"])
        XCTAssertEqual(refused.status, 503, "\(refused)")
        XCTAssertTrue(refused.body.contains("too many control connections"), "\(refused)")

        for connection in held {
            let rest = try connection.readToEnd(timeout: 20)
            XCTAssertTrue(rest.isEmpty, "an idle connection gets no reply, only closed")
        }
        let closedAfter = Date().timeIntervalSince(opened)
        XCTAssertGreaterThan(closedAfter, 9, "held until the request deadline")
        XCTAssertLessThan(closedAfter, 14, "closed at the request deadline, not held forever")
        XCTAssertEqual(try get("/status").status, 200, "answers again once the idle connections are gone")
    }

    /// At a low open-file limit the node takes no more connections than it can afford: past them it
    /// stops accepting instead of spinning on EMFILE, and it answers again once they are gone.
    func testAtItsFileLimit_theNodeNeitherSpinsNorStopsAnswering() async throws {
        let node = try startNode(fileLimit: 200)  // 13 served, 52 accepted
        defer { node.signal(SIGTERM) }
        try await waitForNode()
        var held: [RawHTTP.Connection] = []
        for _ in 0..<250 { held.append(try RawHTTP.Connection(port: control, timeout: 20)) }
        try await Task.sleep(for: .milliseconds(500))
        let before = try cpuTicks(of: node)
        try await Task.sleep(for: .seconds(3))
        let used = Double(try cpuTicks(of: node) - before) / 100 / 3
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

    /// User and system CPU time of the child so far, in clock ticks (1/100 s).
    private func cpuTicks(of child: ChildProcess) throws -> Int {
        let stat = try String(contentsOfFile: "/proc/\(child.process.processIdentifier)/stat", encoding: .utf8)
        let fields = stat[stat.range(of: ")")!.upperBound...].split(separator: " ")
        return Int(fields[11])! + Int(fields[12])!
    }

    private func waitForNode() async throws {
        let port = control
        let token = token
        try await withTimeout(20, "the node's control API") {
            while true {
                let reply = try? RawHTTP.request(
                    port: port, "GET", "/status", headers: ["Authorization": "Bearer \(token)"], timeout: 2)
                if reply?.status == 200 { return }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    /// Polls `condition` until it holds, failing after `seconds`.
    private func poll(within seconds: Double, _ what: String, _ condition: () throws -> Bool) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while try !condition() {
            guard Date() < deadline else { throw TestSupportError("timed out after \(seconds) s waiting for \(what)") }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    private func send(_ method: String, _ path: String, body: String? = nil) throws -> RawHTTP.Reply {
        try RawHTTP.request(port: control, method, path, headers: ["Authorization": "Bearer \(token)"], body: body)
    }

    private func get(_ path: String) throws -> RawHTTP.Reply { try send("GET", path) }

    private func status() throws -> [String: Any] {
        let reply = try get("/status")
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any], "\(reply)")
    }

    private func masterTimeSeconds() throws -> Double {
        try XCTUnwrap(try status()["masterTimeNs"] as? Double) / 1e9
    }

    private func framesPresented() throws -> Int {
        let player = try XCTUnwrap(try status()["player"] as? [String: Any])
        return try XCTUnwrap(player["framesPresented"] as? Int)
    }

    /// Loads, prerolls and starts the node half a second ahead, and waits for frames.
    private func play() async throws {
        XCTAssertEqual(try send("POST", "/load", body: "{}").status, 200)
        XCTAssertEqual(try send("POST", "/preroll", body: #"{"itemTimeNs": 0}"#).status, 200)
        let at = Int64((try masterTimeSeconds() + 0.5) * 1e9)
        let reply = try send(
            "POST", "/start",
            body: #"{"rate": 1, "itemTimeNs": 0, "hostTimeNs": \#(at)}"#)
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
        let player = try XCTUnwrap(try status()["player"] as? [String: Any])
        XCTAssertEqual(player["timeControlStatus"] as? String, "playing", "\(player)", file: file, line: line)
        XCTAssertEqual(player["rate"] as? Double, 1, "\(player)", file: file, line: line)
        XCTAssertNil(player["error"] as? String, "\(player)", file: file, line: line)
        let now = try framesPresented()
        XCTAssertGreaterThan(now, before, "frames kept coming", file: file, line: line)
        try await poll(within: 5, "more frames") { try self.framesPresented() >= now + 5 }
    }
}
