import Foundation
import LockstepGuard
import TestSupport
import WallContent
import XCTest

/// Content answers leave as bulk traffic (DSCP CS1), everything else unmarked: read from the kernel's
/// own view of the server's sockets (`ss --tos`), as an operator would check it.
final class TrafficMarkTests: XCTestCase {
    func testContentAnswers_leaveMarkedCS1_andTheNextAnswerOnTheConnectionUnmarked() async throws {
        guard
            FileManager.default.isExecutableFile(atPath: "/usr/bin/ss")
                || FileManager.default.isExecutableFile(atPath: "/bin/ss")
        else { throw XCTSkip("no ss (iproute2) to read the sockets' marks with") }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-mark-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("clip.mp4").path
        try Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: URL(fileURLWithPath: path))
        let list = try ContentDigest.chunkList(ofFileAt: path)
        let origin = ContentOrigin(files: [list.id: path], token: try ControlToken("secret-secret-secret"), limit: 1)
        let (port, serving) = try await origin.serveOnLoopback()
        defer { serving.cancel() }

        let connection = try RawHTTP.Connection(port: port)
        let token = ["Authorization": "Bearer secret-secret-secret"]
        let content = try connection.get("/content/\(list.id.sha256)", headers: token)
        XCTAssertEqual(content.status, 200)
        XCTAssertEqual(content.body.count, 200_000)
        XCTAssertEqual(try Self.serverMark(port: port), 0x20, "a content answer: CS1 (8 << 2)")

        // The same connection, kept alive: a request that is not for content leaves unmarked.
        let other = try connection.get("/status", headers: token)
        XCTAssertEqual(other.status, 404)
        XCTAssertEqual(try Self.serverMark(port: port), 0, "not content: unmarked again")
        let again = try connection.get("/content/\(list.id.sha256)/chunks", headers: token)
        XCTAssertTrue([200, 503].contains(again.status ?? 0), "\(String(describing: again.status))")
        XCTAssertEqual(try Self.serverMark(port: port), 0x20, "a chunk list is content too")
    }

    /// The TOS byte of the server's end of the one established connection on `port`.
    private static func serverMark(port: Int) throws -> Int {
        let ss = Process()
        ss.executableURL = URL(
            fileURLWithPath: FileManager.default.isExecutableFile(atPath: "/usr/bin/ss") ? "/usr/bin/ss" : "/bin/ss")
        ss.arguments = ["-tnH", "--tos", "state", "established", "( sport = :\(port) )"]
        let pipe = Pipe()
        ss.standardOutput = pipe
        try ss.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        ss.waitUntilExit()
        let lines = output.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, "one connection to the server: \(output)")
        // ss prints the byte as C's %#x does: "0", or "0x20".
        guard let line = lines.first, let range = line.range(of: #"tos:(0x[0-9a-f]+|0)\b"#, options: .regularExpression)
        else {
            throw XCTSkip("ss shows no tos field here: \(output)")
        }
        let value = line[range].dropFirst(4)
        return value == "0" ? 0 : Int(value.dropFirst(2), radix: 16) ?? -1
    }
}

extension ContentOrigin {
    /// The origin serving on a free loopback port: the port, once it listens, and the task serving
    /// (cancel it to stop).
    func serveOnLoopback() async throws -> (port: Int, serving: Task<Void, any Error>) {
        let (ports, bound) = AsyncStream.makeStream(of: Int.self)
        let serving = Task { try await run(host: "127.0.0.1", port: 0) { bound.yield($0) } }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            serving.cancel()
            throw TestSupportError("the origin stopped before it listened")
        }
        return (port, serving)
    }
}
