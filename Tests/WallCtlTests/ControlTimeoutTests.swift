import Foundation
import TestSupport
import XCTest

/// `wallctl`'s wall commands against nodes that do not behave: one that accepts connections and
/// never answers, one whose port is closed. Every command must give up within its `--timeout`
/// (plus process start-up), naming the node, and a refused connection must fail at once.
final class ControlTimeoutTests: XCTestCase {
    private let wallctl = ChildProcess.product("wallctl")

    func testEveryWallCommand_whenTheNodeNeverAnswers_givesUpWithinTheTimeoutNamingIt() throws {
        let listener = try LocalListener()
        let second = try LocalListener()
        let config = try wallConfig(ports: [listener.port, second.port])
        let commands: [[String]] = [
            ["status"], ["start"], ["stop"], ["pause"], ["resume"], ["seek", "1"], ["snapshot", "--out", "/dev/null"],
            ["drift", "--duration", "1"],
        ]
        for command in commands {
            let started = Date()
            let result = try ChildProcess.run(wallctl, command + ["--config", config, "--timeout", "2"])
            let elapsed = Date().timeIntervalSince(started)
            let name = command[0]
            XCTAssertNotEqual(result.status, 0, "\(name) exit status")
            XCTAssertLessThan(result.status, 128, "\(name) crashed: \(result.errors)")
            XCTAssertLessThan(elapsed, 4, "\(name) gave up after \(elapsed) s, --timeout 2")
            let said = result.output + result.errors
            XCTAssertTrue(said.contains("mute at http://127.0.0.1:\(listener.port)"), "\(name): \(said)")
            XCTAssertTrue(said.contains("no answer within 2 s"), "\(name): \(said)")
        }
    }

    /// A refused connection is a node not up yet: `status` says so at once; a command waits for it,
    /// says what it waits for, and names it with its address when its --timeout is up.
    func testEveryWallCommand_whenTheConnectionIsRefused_waitsItsTimeoutNamingTheNodeAndAddress() throws {
        let closed = try LocalListener.closedPort()
        let config = try wallConfig(ports: [closed.port])
        for command in [["status"], ["start"], ["stop"], ["pause"], ["seek", "1"]] {
            let started = Date()
            let result = try ChildProcess.run(wallctl, command + ["--config", config, "--timeout", "2"])
            let elapsed = Date().timeIntervalSince(started)
            let name = command[0]
            XCTAssertNotEqual(result.status, 0, "\(name) exit status")
            XCTAssertLessThan(result.status, 128, "\(name) crashed: \(result.errors)")
            XCTAssertLessThan(elapsed, name == "status" ? 2 : 4, "\(name) took \(elapsed) s over a refused connection")
            let said = result.output + result.errors
            XCTAssertTrue(said.contains("mute at http://127.0.0.1:\(closed.port)"), "\(name): \(said)")
            XCTAssertTrue(said.contains("connection refused"), "\(name): \(said)")
            if name != "status" {
                XCTAssertTrue(result.output.contains("waiting for clocks: mute ("), "\(name): \(said)")
                XCTAssertTrue(result.errors.contains("after waiting 2."), "\(name): \(said)")
            }
        }
    }

    /// A wall whose nodes `mute`, `mute-2`, ... listen on `ports` of the loopback.
    private func wallConfig(ports: [UInt16]) throws -> String {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("wallctl-timeout-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: folder) }
        return try TestWall(
            name: "mute", clockPort: 9, media: "clip.mp4", canvas: (160 * ports.count, 90),
            nodes: ports.enumerated().map { index, port in
                TestWall.Node(
                    id: "mute\(index == 0 ? "" : "-\(index + 1)")", controlPort: Int(port),
                    tile: (160 * index, 0, 160, 90))
            }
        ).write(to: folder.appendingPathComponent("wall.yaml")).path
    }
}
