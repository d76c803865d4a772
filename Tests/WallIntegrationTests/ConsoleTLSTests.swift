import Foundation
import TestSupport
import XCTest

/// The operator console where the wall's control API is TLS (`control-tls`): the daemon serves the
/// page over HTTPS only, its session cookie is `Secure`, and its watch on the wall reaches the nodes
/// over HTTPS with the wall's certificate.
final class ConsoleTLSTests: XCTestCase {
    private let nodePort = 18461
    private let daemonPort = 18462
    private let token = "console-tls-test-token-5e1d"

    func testConsole_overTLS_setsASecureCookie_andWatchesTheNodesOverHTTPS() async throws {
        let scratch = try ScratchFolder("lockstep-console-tls")
        defer { scratch.remove() }
        let certificate = scratch.path("control.crt")
        let key = scratch.path("control.key")
        let made = try ChildProcess.run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "1",
                "-subj", "/CN=lockstep-test", "-addext", "subjectAltName=IP:127.0.0.1",
            ])
        XCTAssertEqual(made.status, 0, made.errors)
        try token.write(toFile: scratch.path("control.token"), atomically: true, encoding: .utf8)
        let clip = try scratch.frameCodeClip(seconds: 4)
        let config = try TestWall(
            name: "console-tls", clockPort: 18463, media: clip, canvas: (160, 90),
            stateDirectory: scratch.path("state"),
            extra: [
                "control-token-file: \(scratch.path("control.token"))",
                "control-tls: {certificate: \(certificate), key: \(key)}",
                "controller: {listen: \"127.0.0.1:\(daemonPort)\"}",
            ],
            nodes: [TestWall.Node(id: "only", controlPort: nodePort, tile: (0, 0, 160, 90), output: (160, 90))]
        ).write(to: scratch.url.appendingPathComponent("wall.yaml"))
        let node = try ChildProcess(
            ChildProcess.product("wallnode"), ["run", "--config", config.path, "--id", "only", "--use-local-clock"])
        let daemon = try ChildProcess(ChildProcess.product("wallctl"), ["serve", "--config", config.path])
        defer {
            node.signal(SIGTERM)
            daemon.signal(SIGTERM)
        }
        let base = "https://127.0.0.1:\(daemonPort)"
        var login = (status: Int32(-1), output: "", errors: "")
        try await eventually(within: 20, "the daemon's console over HTTPS") {
            login = try ChildProcess.run(
                "/usr/bin/curl",
                [
                    "-sS", "--cacert", certificate, "-D", "-", "-o", "/dev/null", "--data-urlencode",
                    "token=\(self.token)",
                    base + "/console/login",
                ])
            return login.status == 0
        }
        let cookie = try XCTUnwrap(
            login.output.split(separator: "\r\n").first { $0.lowercased().hasPrefix("set-cookie:") }, login.output)
        XCTAssertTrue(login.output.hasPrefix("HTTP/1.1 303"), login.output)
        for part in ["HttpOnly", "SameSite=Strict", "Secure", "Max-Age="] {
            XCTAssertTrue(cookie.contains(part), "\(part) in \(cookie)")
        }
        let session = String(cookie.dropFirst("set-cookie:".count).split(separator: ";")[0]).trimmingCharacters(
            in: .whitespaces)

        // The stream: the hello, then the node as the daemon's watch reached it over HTTPS.
        var stream = ""
        try await eventually(within: 20, "the node reached by the console's watch over HTTPS") {
            stream = try ChildProcess.run(
                "/usr/bin/curl",
                [
                    "-sS", "-N", "--max-time", "2", "--cacert", certificate, "-H", "Cookie: \(session)",
                    base + "/console/events",
                ]
            ).output
            return stream.contains("event: node") && stream.contains("\"reachable\":true")
        }
        XCTAssertTrue(stream.hasPrefix("event: hello"), String(stream.prefix(300)))
        XCTAssertFalse(stream.contains(token), "the token is not in the stream")
        XCTAssertNil(try? RawHTTP.request(port: daemonPort, "GET", "/console").status, "no plain HTTP")
    }
}
