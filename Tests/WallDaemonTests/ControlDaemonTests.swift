import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import LockstepGuard
import NIOCore
import TestSupport
import WallContent
import WallDaemon
import WallProtocol
import XCTest

/// The control daemon's HTTP routes in process, as an attacker on the venue network would try
/// them: no token, the token with more after it, ranges past a file's end, uploads cut short,
/// show-control requests past the rate. Each is refused with the status a client expects and a
/// sentence, and the daemon serves the token holder after.
final class ControlDaemonTests: XCTestCase {
    private let token = "daemon-in-process-token-42"
    private var folder: ScratchFolder!

    override func setUpWithError() throws {
        folder = try ScratchFolder("lockstep-daemon")
        try Data((token + "\n").utf8).write(to: URL(fileURLWithPath: folder.path("control.token")))
    }

    override func tearDown() {
        folder.remove()
    }

    private func daemon(rate: Int = 10) throws -> ControlDaemon {
        let config = try TestWall(
            name: "daemon-test", clockPort: 9, media: "clip.mp4", canvas: (160, 90),
            stateDirectory: folder.path("state"),
            extra: [
                "control-token-file: control.token", "controller: {listen: \"127.0.0.1:0\"}",
                "show-control: {tcp: \"127.0.0.1:0\", rate: \(rate)}",
            ],
            nodes: [TestWall.Node(id: "a", controlPort: 9, tile: (0, 0, 160, 90))]
        ).write(to: URL(fileURLWithPath: folder.path("wall.yaml")))
        return try ControlDaemon(config: try WallConfig.load(path: config.path), say: { _ in })
    }

    private var bearer: HTTPFields { [.authorization: "Bearer \(token)"] }

    func testEveryRoute_refusesARequestWithoutTheToken_orWithMoreAfterIt() async throws {
        let daemon = try daemon()
        defer { Task { await daemon.shutdown() } }
        let longer = "Bearer " + token + String(repeating: "x", count: 256)
        let (bearer, token) = (self.bearer, self.token)
        try await Application(router: daemon.router()).test(.router) { client in
            let routes: [(String, HTTPRequest.Method)] = [
                ("/content", .get), ("/content/" + String(repeating: "a", count: 64), .get),
                ("/content/" + String(repeating: "a", count: 64) + "?size=1", .put), ("/cue/intro", .post),
                ("/show/pause", .post),
            ]
            for (path, method) in routes {
                for headers in [HTTPFields(), [.authorization: longer], [.authorization: "Bearer " + token + "0"]] {
                    let response = try await client.execute(uri: path, method: method, headers: headers)
                    XCTAssertEqual(response.status, .unauthorized, "\(method) \(path) \(headers)")
                    XCTAssertTrue(String(buffer: response.body).contains("control token"), String(buffer: response.body))
                }
            }
            let held = try await client.execute(uri: "/content", method: .get, headers: bearer)
            XCTAssertEqual(held.status, .ok)
            let login = try await client.execute(
                uri: "/console/login", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: "token=" + token + String(repeating: "x", count: 256)))
            XCTAssertEqual(login.status, .unauthorized, "no console session with more after the token")
        }
    }

    func testRanges_pastAFilesEnd_are416_andUploadsCutShort_are400() async throws {
        let daemon = try daemon()
        defer { Task { await daemon.shutdown() } }
        let bytes = Data((0..<5000).map { UInt8($0 % 251) })
        let source = folder.path("file.bin")
        try bytes.write(to: URL(fileURLWithPath: source))
        let id = try ContentDigest.id(ofFileAt: source)
        let bearer = self.bearer
        try await Application(router: daemon.router()).test(.router) { client in
            let path = "/content/\(id.sha256)?size=\(id.size)"
            var response = try await client.execute(
                uri: path, method: .put, headers: bearer, body: ByteBuffer(bytes: bytes.prefix(3000)))
            XCTAssertEqual(response.status, .badRequest)
            XCTAssertTrue(String(buffer: response.body).contains("ended after 3000 of 5000 bytes"), String(buffer: response.body))
            response = try await client.execute(
                uri: path, method: .put, headers: bearer, body: ByteBuffer(bytes: bytes + Data([1])))
            XCTAssertEqual(response.status, .unprocessableContent, "longer than its size")
            response = try await client.execute(uri: path, method: .put, headers: bearer, body: ByteBuffer(bytes: bytes))
            XCTAssertEqual(response.status, .ok, String(buffer: response.body))

            let file = "/content/\(id.sha256)"
            for (range, status) in [("bytes=5000-", HTTPResponse.Status.rangeNotSatisfiable), ("bytes=9999-", .rangeNotSatisfiable)] {
                response = try await client.execute(uri: file, method: .get, headers: bearer + [.range: range])
                XCTAssertEqual(response.status, status, range)
                XCTAssertEqual(response.headers[.contentRange], "bytes */5000")
            }
            response = try await client.execute(uri: file, method: .get, headers: bearer + [.range: "bytes=4999-"])
            XCTAssertEqual(response.status, .partialContent)
            XCTAssertEqual(response.headers[.contentRange], "bytes 4999-4999/5000")
            XCTAssertEqual(Array(response.body.readableBytesView), [bytes.last!])
        }
    }

    func testShowControlOverHTTP_countsAgainstTheRate_andNamesWhatItDoesNotKnow() async throws {
        let daemon = try daemon(rate: 5)
        defer { Task { await daemon.shutdown() } }
        let bearer = self.bearer
        try await Application(router: daemon.router()).test(.router) { client in
            var statuses: [HTTPResponse.Status] = []
            for _ in 0..<8 {
                statuses.append(try await client.execute(uri: "/show/pause", method: .post, headers: bearer).status)
            }
            XCTAssertEqual(statuses.filter { $0 == .accepted }.count, 5, "\(statuses)")
            XCTAssertEqual(statuses.filter { $0 == .tooManyRequests }.count, 3)
            try await Task.sleep(for: .milliseconds(450))
            let unknown = try await client.execute(uri: "/show/launch", method: .post, headers: bearer)
            XCTAssertEqual(unknown.status, .notFound)
            XCTAssertTrue(String(buffer: unknown.body).contains("unknown command"), String(buffer: unknown.body))
        }
    }
}

extension HTTPFields {
    fileprivate static func + (lhs: HTTPFields, rhs: HTTPFields) -> HTTPFields {
        var fields = lhs
        fields.append(contentsOf: rhs)
        return fields
    }
}
