import Foundation
import TestSupport
import XCTest

/// The client side of the control API's token and TLS: what `wallctl` sends and what it makes of
/// a node that refuses it, against stand-in nodes (the node's own checks are tested with wallnode).
final class ControlSecurityTests: XCTestCase {
    private let wallctl = ChildProcess.product("wallctl")
    private let token = "lockstep-test-token-5f2c9a71e0"
    private static let unauthorized =
        "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: 58\r\n"
        + "WWW-Authenticate: Bearer realm=\"lockstep\"\r\nConnection: close\r\n\r\n"
        + #"{"ok":false,"error":"the control token is not this wall's"}"#

    func testEveryRequest_carriesTheConfigsToken_andA401NamesTheNodeWithoutPrintingIt() throws {
        let node = try LocalListener(reply: Self.unauthorized)
        let folder = try scratchFolder()
        let tokenFile = folder.appendingPathComponent("control.token")
        try "\(token)\n".write(to: tokenFile, atomically: true, encoding: .utf8)
        let config = try wallConfig(in: folder, port: node.port, extra: "control-token-file: \(tokenFile.path)")
        for command in [["status"], ["stop"]] {
            let result = try ChildProcess.run(wallctl, command + ["--config", config, "--timeout", "5"])
            XCTAssertNotEqual(result.status, 0, command[0])
            XCTAssertLessThan(result.status, 128, "\(command[0]) crashed: \(result.errors)")
            let said = result.output + result.errors
            XCTAssertTrue(said.contains("node solo refused the control token: check control-token-file"), said)
            XCTAssertFalse(said.contains(token), "the token was printed: \(said)")
        }
        XCTAssertEqual(node.requests.count, 2)
        for request in node.requests {
            XCTAssertTrue(request.contains("\r\nAuthorization: Bearer \(token)\r\n"), request)
        }
    }

    func testPush_whenTheDaemonIsNotThere_namesTheDaemon_notANode() throws {
        let folder = try scratchFolder()
        let file = folder.appendingPathComponent("slate.bin")
        try TestMedia.payload(count: 4096).write(to: file)
        // Port 9 (discard): nothing listens there on a test machine.
        let config = try wallConfig(in: folder, port: 9, extra: "controller: {listen: \"127.0.0.1:9\"}")
        let result = try ChildProcess.run(ChildProcess.product("wallctl"), ["push", "--config", config, file.path])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(
            result.errors.contains(
                "the daemon at http://127.0.0.1:9 did not take \(file.path): connection refused "
                    + "(is wallctl serve running there?)"), result.errors)
        XCTAssertFalse(result.errors.contains("wallnode"), result.errors)
    }

    func testA401_whenTheConfigHasNoToken_saysTheNodeWantsOne() throws {
        let node = try LocalListener(reply: Self.unauthorized)
        let config = try wallConfig(in: try scratchFolder(), port: node.port)
        let result = try ChildProcess.run(wallctl, ["status", "--config", config, "--timeout", "5"])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(
            (result.output + result.errors).contains("node solo requires a control token: set control-token-file"),
            result.output + result.errors)
        XCTAssertFalse(node.requests.first?.contains("Authorization") ?? true, "\(node.requests)")
    }

    func testAnUnreadableTokenFile_isAConfigErrorBeforeAnyRequest() throws {
        let node = try LocalListener(reply: Self.unauthorized)
        let folder = try scratchFolder()
        let config = try wallConfig(in: folder, port: node.port, extra: "control-token-file: \(folder.path)/absent")
        let result = try ChildProcess.run(wallctl, ["status", "--config", config, "--timeout", "5"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.errors.contains("cannot read the control token"), result.errors)
        XCTAssertTrue(node.requests.isEmpty)
    }

    func testControlTLS_speaksHTTPS_andTrustsOnlyItsRootsForTheAddressConnectedTo() throws {
        let folder = try scratchFolder()
        let (goodCertificate, goodKey) = try certificate(in: folder, named: "node", subjectAltName: "IP:127.0.0.1")
        let (otherCertificate, otherKey) = try certificate(
            in: folder, named: "elsewhere", subjectAltName: "DNS:elsewhere.invalid")

        // The node's certificate, trusted and naming 127.0.0.1: TLS holds, and the 401 inside it shows.
        let node = try TLSStandIn(certificate: goodCertificate, key: goodKey)
        var result = try runStatus(
            in: folder, port: node.port, certificate: goodCertificate, key: goodKey, trustRoots: goodCertificate)
        XCTAssertTrue(result.contains("node solo requires a control token"), result)

        // A certificate wallctl does not trust.
        result = try runStatus(
            in: folder, port: node.port, certificate: goodCertificate, key: goodKey, trustRoots: otherCertificate)
        XCTAssertTrue(
            result.contains(
                "node solo at https://127.0.0.1:\(node.port) does not answer: TLS: the node's certificate does not "
                    + "verify against control-tls.trust-roots"), result)

        // A trusted certificate for another name than the address connected to.
        let impostor = try TLSStandIn(certificate: otherCertificate, key: otherKey)
        result = try runStatus(
            in: folder, port: impostor.port, certificate: otherCertificate, key: otherKey,
            trustRoots: otherCertificate)
        XCTAssertTrue(
            result.contains(
                "node solo at https://127.0.0.1:\(impostor.port) does not answer: TLS: the node's certificate does not "
                    + "name the address connected to"), result)
    }

    // MARK: Helpers

    /// `wallctl status` on a one-node wall with `control-tls`; what it printed, after checking it failed
    /// without crashing.
    private func runStatus(in folder: URL, port: UInt16, certificate: URL, key: URL, trustRoots: URL) throws -> String {
        let tls = "control-tls: {certificate: \(certificate.path), key: \(key.path), trust-roots: \(trustRoots.path)}"
        let config = try wallConfig(in: folder, port: port, extra: tls)
        let result = try ChildProcess.run(wallctl, ["status", "--config", config, "--timeout", "5"])
        XCTAssertEqual(result.status, 1, result.errors)
        return result.output + result.errors
    }

    private func scratchFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("wallctl-security-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: folder) }
        return folder
    }

    /// A one-node wall whose node `solo` listens on `port` of the loopback, plus `extra` top-level keys.
    private func wallConfig(in folder: URL, port: UInt16, extra: String = "") throws -> String {
        try TestWall(
            name: "solo", clockPort: 9, media: "clip.mp4", canvas: (160, 90), extra: extra.isEmpty ? [] : [extra],
            nodes: [TestWall.Node(id: "solo", controlPort: Int(port), tile: (0, 0, 160, 90))]
        ).write(to: folder.appendingPathComponent("wall-\(UUID().uuidString).yaml")).path
    }

    /// A self-signed P-256 certificate and its key, made with the openssl command.
    private func certificate(in folder: URL, named name: String, subjectAltName: String) throws -> (URL, URL) {
        let certificate = folder.appendingPathComponent("\(name).pem")
        let key = folder.appendingPathComponent("\(name).key")
        let made = try ChildProcess.run(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
                "-subj", "/CN=\(name)", "-addext", "subjectAltName=\(subjectAltName)", "-keyout", key.path, "-out",
                certificate.path,
            ])
        guard made.status == 0 else { throw XCTSkip("openssl could not make a certificate: \(made.errors)") }
        return (certificate, key)
    }
}

/// A stand-in node serving TLS with a given certificate (Python's ssl module) that answers every
/// request with 401, so a test sees whether wallctl got through the handshake.
private final class TLSStandIn {
    let port: UInt16
    private let server: ChildProcess

    private static let script = """
        import socket, ssl, sys
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[1], sys.argv[2])
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        print(listener.getsockname()[1], flush=True)
        while True:
            connection, _ = listener.accept()
            try:
                stream = context.wrap_socket(connection, server_side=True)
                head = b""
                while b"\\r\\n\\r\\n" not in head:
                    chunk = stream.recv(4096)
                    if not chunk:
                        break
                    head += chunk
                stream.sendall(b"HTTP/1.1 401 Unauthorized\\r\\nContent-Length: 0\\r\\nConnection: close\\r\\n\\r\\n")
                stream.close()
            except (ssl.SSLError, OSError):
                connection.close()
        """

    init(certificate: URL, key: URL) throws {
        server = try ChildProcess("/usr/bin/python3", ["-c", Self.script, certificate.path, key.path])
        guard let line = server.readLine(), let port = UInt16(line) else {
            throw XCTSkip("python3 could not serve TLS: \(server.finish().errors)")
        }
        self.port = port
    }
}
