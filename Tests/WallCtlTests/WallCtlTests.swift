import Foundation
import TestSupport
import WallProtocol
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

/// The wallctl executable, as a user runs it.
final class WallCtlTests: XCTestCase {
    private let wallctl = ChildProcess.product("wallctl")

    private func run(_ arguments: String...) throws -> (status: Int32, output: String, errors: String) {
        try ChildProcess.run(wallctl, arguments)
    }

    private func assertFails(
        _ arguments: [String], saying expected: String, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let result = try ChildProcess.run(wallctl, arguments)
        XCTAssertNotEqual(result.status, 0, "exit status", file: file, line: line)
        XCTAssertTrue(result.errors.contains(expected), "stderr: \(result.errors)", file: file, line: line)
        XCTAssertFalse(result.errors.contains("Fatal error"), "crashed: \(result.errors)", file: file, line: line)
    }

    func testBadInput_isAClearErrorNamingIt() throws {
        try assertFails(["clock", "serve", "--listen", "127.0.0.1"], saying: "\"127.0.0.1\" has no port")
        try assertFails(["clock", "serve", "--listen", "::1:5637"], saying: "put it in brackets")
        try assertFails(
            ["clock", "probe", "localhost:99999"], saying: "port \"99999\" is not a number from 0 to 65535")
        try assertFails(
            ["clock", "probe", "no-such-host.invalid:5637"], saying: "cannot resolve host \"no-such-host.invalid\"")
        try assertFails(
            ["clock", "probe", "127.0.0.1:5637", "--duration", "-1"], saying: "--duration must be a positive number")
        try assertFails(["clock", "probe", "127.0.0.1:0"], saying: "port 0 names no service")
        try assertFails(["clock", "serve", "--simulate-clock-drift-ppm", "50000"], saying: "50000.0 ppm is beyond")
        try assertFails(
            ["impair", "--listen", "127.0.0.1:0", "--forward", "127.0.0.1:9", "--loss", "150"],
            saying: "loss must be a percentage from 0 to 100")
        try assertFails(["impair", "--listen", "127.0.0.1:0"], saying: "Missing expected argument '--forward")
        let impair = ["impair", "--listen", "127.0.0.1:0", "--forward", "127.0.0.1:9"]
        try assertFails(
            impair + ["--distribution", "cauchy"], saying: "unknown distribution 'cauchy'; expected uniform")
        try assertFails(impair + ["--loss", "5", "--loss-burst", "0.5"], saying: "the mean loss burst must be 1")
        try assertFails(impair + ["--stall", "-3"], saying: "stall must be zero or more")
        try assertFails(
            ["identify", "--config", "/dev/null", "--seconds", "0.5"], saying: "--seconds must be 1 to 600, got 0.5")
        try assertFails(impair + ["--reply-delay", "nan"], saying: "reply delay must be zero or more")
        try assertFails(impair + ["--reply-jitter", "-2"], saying: "reply jitter must be zero or more")
        try assertFails(
            ["drift", "--config", "/dev/null", "--duration", "1", "--json", "-", "--plot", "-"],
            saying: "--json - and --plot - cannot both write to standard output")
        try assertFails(
            ["drift", "--config", "/dev/null", "--duration", "1", "--ground-truth-bind", "my-laptop"],
            saying: "--ground-truth-bind takes a numeric IPv4 or IPv6 address of this machine, got \"my-laptop\"")
    }

    /// A node answers a retired one-shot path 410, naming the wallctl command that replaced it:
    /// each command it names is one wallctl has.
    func testTheCommandsNamedForRetiredPaths_exist() throws {
        for (path, replacement) in ControlPath.retired {
            let words = replacement.split(separator: " ").map { $0.trimmingCharacters(in: .punctuationCharacters) }
            XCTAssertEqual(words.first, "wallctl", path)
            guard words.count > 1 else { continue }
            let help = try run(words[1], "--help")
            XCTAssertEqual(help.status, 0, "\(path) names \"wallctl \(words[1])\": \(help.errors)")
            XCTAssertTrue(help.output.contains("USAGE: wallctl \(words[1])"), help.output)
        }
    }

    func testVersion_isPrintedByBothExecutables() throws {
        for product in ["wallctl", "wallnode"] {
            let result = try ChildProcess.run(ChildProcess.product(product), ["--version"])
            XCTAssertEqual(result.status, 0, product)
            XCTAssertTrue(
                result.output.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ".").count == 3,
                "\(product) --version: \(result.output)")
        }
    }

    func testServe_whenThePortIsInUse_saysSo() throws {
        let occupant = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(occupant) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                _ = bind(occupant, $0, length)
                _ = getsockname(occupant, $0, &length)
            }
        }
        let port = UInt16(bigEndian: address.sin_port)
        try assertFails(["clock", "serve", "--listen", "127.0.0.1:\(port)"], saying: "already in use")
    }

    /// A process stopped for a while (SIGSTOP) says so when it runs again, and for how long: the
    /// time it stood still is what its watchdogs and a node's preparations leave out.
    func testAStoppedServer_logsHowLongItStoodStill() throws {
        let server = try ChildProcess(wallctl, ["clock", "serve", "--listen", "127.0.0.1:0", "--log-format", "json"])
        _ = try XCTUnwrap(server.readLine(), "the banner")
        server.signal(SIGSTOP)
        Thread.sleep(forTimeInterval: 1.5)
        server.signal(SIGCONT)
        Thread.sleep(forTimeInterval: 0.3)
        server.signal(SIGINT)
        let served = server.finish()
        let record = try XCTUnwrap(
            served.errors.split(separator: "\n").first { $0.contains("the process stood still") }
                .flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] },
            "logged: \(served.errors)")
        let stood = try XCTUnwrap(record["time.stood_still_ns"] as? Int, "\(record)")
        XCTAssertEqual(Double(stood) / 1e9, 1.5, accuracy: 0.3, "\(record)")
    }

    func testServeAndProbe_lockAndPrintOneJSONObjectPerEstimate() throws {
        let server = try ChildProcess(
            wallctl,
            [
                "clock", "serve", "--listen", "127.0.0.1:0", "--simulate-clock-offset", "3600",
                "--simulate-clock-drift-ppm", "100",
            ])
        let banner = try XCTUnwrap(server.readLine())
        let port = try XCTUnwrap(banner.split(separator: ":").last.flatMap { Int($0.prefix { $0.isNumber }) }, banner)
        XCTAssertTrue(banner.contains("simulated"), banner)

        let probe = try ChildProcess(wallctl, ["clock", "probe", "127.0.0.1:\(port)", "--duration", "1.5", "--json"])
        var records: [[String: Any]] = []
        while let record = probe.readJSON() { records.append(record) }
        XCTAssertEqual(probe.finish().status, 0)
        XCTAssertGreaterThan(records.count, 8)
        for key in ["localNs", "masterNs", "errorBoundNs", "roundTripNs", "ratePPM", "state"] {
            XCTAssertNotNil(records.last?[key], "\(key) in \(records.last ?? [:])")
        }
        XCTAssertEqual(records.last?["state"] as? String, "locked")
        let rate = try XCTUnwrap(records.last?["ratePPM"] as? Double)
        XCTAssertEqual(rate, 100, accuracy: 50)

        server.signal(SIGINT)
        let served = server.finish()
        XCTAssertEqual(served.status, 0)
        XCTAssertTrue(served.output.contains("Lockstep replies"), served.output)
    }

    private func keyFile(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("wallctl-\(UUID().uuidString).key")
            .path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    func testServeAndProbe_withAKeyFile_lock_andWithoutTheKey_doNot() throws {
        let key = try keyFile("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n")
        let server = try ChildProcess(wallctl, ["clock", "serve", "--listen", "127.0.0.1:0", "--key-file", key])
        let banner = try XCTUnwrap(server.readLine())
        let port = try XCTUnwrap(banner.split(separator: ":").last.flatMap { Int($0.prefix { $0.isNumber }) }, banner)
        let settings = try XCTUnwrap(server.readLine())
        XCTAssertTrue(settings.contains("authenticated with a clock key (32 bytes)"), settings)
        XCTAssertFalse(settings.contains("000102"), "the key is never printed")

        let keyed = try ChildProcess(
            wallctl, ["clock", "probe", "127.0.0.1:\(port)", "--duration", "1.5", "--json", "--key-file", key])
        var records: [[String: Any]] = []
        while let record = keyed.readJSON() { records.append(record) }
        XCTAssertEqual(keyed.finish().status, 0)
        XCTAssertEqual(records.last?["state"] as? String, "locked")

        let unkeyed = try ChildProcess.run(wallctl, ["clock", "probe", "127.0.0.1:\(port)", "--duration", "0.5"])
        XCTAssertNotEqual(unkeyed.status, 0)
        XCTAssertTrue(unkeyed.errors.contains("never locked"), unkeyed.errors)

        server.signal(SIGINT)
        let served = server.finish()
        XCTAssertEqual(served.status, 0)
        XCTAssertTrue(served.output.contains("unauthenticated"), served.output)
    }

    func testKeyOptions_badInput_isAClearError() throws {
        try assertFails(
            ["clock", "serve", "--key-file", try keyFile("0011223344556677")],
            saying: "is too short: 8 bytes, at least 16")
        try assertFails(
            ["clock", "probe", "127.0.0.1:5637", "--key-file", "/nonexistent/clock.key"],
            saying: "cannot read the key file /nonexistent/clock.key")
        try assertFails(
            ["clock", "probe", "127.0.0.1:5637", "--gst", "--key-file", "/nonexistent/clock.key"],
            saying: "GStreamer's (--gst) has no room for a key")
        try assertFails(["clock", "serve", "--rate-limit=-5"], saying: "--rate-limit must be")
    }

    func testHelp_describesEveryCommandAndOption() throws {
        let top = try run("--help").output
        XCTAssertTrue(top.contains("clock") && top.contains("impair"), top)
        let probe = try run("clock", "probe", "--help").output
        for option in [
            "<host:port>", "--duration <seconds>", "--gst", "--json", "--key-file <file>",
            "--simulate-clock-offset <seconds>",
        ] {
            XCTAssertTrue(probe.contains(option), "\(option) in\n\(probe)")
        }
        let impair = try run("impair", "--help").output
        for option in ["--listen", "--forward", "--delay", "--jitter", "--loss", "--reorder", "--duplicate", "--seed"] {
            XCTAssertTrue(impair.contains(option), "\(option) in\n\(impair)")
        }
        let serve = try run("clock", "serve", "--help").output
        for option in [
            "--key-file <file>", "--no-gstreamer", "--rate-limit <replies>", "--rate-burst", "TEST OPTIONS:",
        ] {
            XCTAssertTrue(serve.contains(option), "\(option) in\n\(serve)")
        }
    }
}
