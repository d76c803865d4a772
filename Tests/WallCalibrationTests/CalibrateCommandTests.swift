import Foundation
import TestSupport
import WallCalibration
import WallProtocol
import XCTest

/// `wallctl calibrate --video` as an operator runs it: a film in, a report and the config's
/// display-latency out; bad input a clear error.
final class CalibrateCommandTests: XCTestCase {
    private let wallctl = ChildProcess.product("wallctl")
    var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("calibrate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    /// The 2x2 wall of `GlassTimingTests`, as a config: one node already has a display-latency
    /// with a comment after it, one does not start with its id.
    func config() throws -> String {
        let path = folder.appendingPathComponent("wall.yaml").path
        try """
        name: glass
        clock: 127.0.0.1:5637
        media: /srv/wall/clip.mp4
        canvas: {width: 3888, height: 2208}
        nodes:
          - id: top-left
            control: 127.0.0.1:7701
            tile: {x: 0, y: 0, width: 1920, height: 1080}
          - id: top-right
            control: 127.0.0.1:7702
            tile: {x: 1968, y: 0, width: 1920, height: 1080}
            display-latency: 10ms  # measured by hand
          - id: bottom-left
            control: 127.0.0.1:7703
            tile: {x: 0, y: 1128, width: 1920, height: 1080}
          - control: 127.0.0.1:7704
            id: bottom-right
            tile: {x: 1968, y: 1128, width: 1920, height: 1080}

        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func testVideo_reportsTheOffsets_andWritesTheLatencies() throws {
        let film = folder.appendingPathComponent("film.mp4").path
        try SimulatedCamera().film(GlassTimingTests.wall, to: film)
        let config = try config()
        let result = try ChildProcess.run(wallctl, ["calibrate", "--config", config, "--video", film, "--write"])
        print(result.output, result.errors)
        XCTAssertEqual(result.status, 0, result.errors)
        XCTAssertTrue(result.output.contains("4 of 4 screens read"), result.output)
        XCTAssertTrue(result.output.contains("Assumed: each screen shows all its rows at once"), result.output)
        XCTAssertTrue(result.output.contains("What stays"), result.output)
        let written = try WallConfig.load(path: config)
        let truth = GlassTimingTests.wall.offsets
        let earliest = truth.min()!
        let before = [0.0, 0.010, 0.0, 0.0]
        for (index, node) in written.nodes.enumerated() {
            XCTAssertEqual(
                node.displayLatency.seconds, before[index] + truth[index] - earliest, accuracy: 1e-3,
                "\(node.id)'s display-latency")
        }
        let text = try String(contentsOfFile: config, encoding: .utf8)
        XCTAssertTrue(text.contains("# measured by hand"), "the comment is kept:\n\(text)")
        XCTAssertEqual(text.components(separatedBy: "display-latency").count - 1, 4, text)
    }

    func testBadInput_isAClearErrorNamingIt() throws {
        let config = try config()
        func assertFails(_ arguments: [String], saying expected: String, line: UInt = #line) throws {
            let result = try ChildProcess.run(wallctl, ["calibrate", "--config", config] + arguments)
            XCTAssertNotEqual(result.status, 0, line: line)
            XCTAssertTrue(result.errors.contains(expected), "stderr: \(result.errors)", line: line)
            XCTAssertFalse(result.errors.contains("Fatal error"), result.errors, line: line)
        }
        try assertFails(["--rate", "1000"], saying: "--rate must be 10 to 240 frames a second, got 1000")
        try assertFails(["--write"], saying: "--write needs --video")
        try assertFails(["--video", "/nonexistent/film.mp4"], saying: "--video /nonexistent/film.mp4: no such file")
        // Not a video at all.
        try assertFails(["--video", config], saying: "\(config): cannot")
        // A video without the pattern in it.
        let black = folder.appendingPathComponent("black.mp4").path
        let encoder = try RawVideoEncoder(path: black, width: 64, height: 36, rate: (30, 1))
        for _ in 0..<30 { try encoder.write([UInt8](repeating: 16, count: 64 * 36)) }
        try encoder.finish()
        try assertFails(["--video", black], saying: "no screen shows the calibration pattern in its first second")
    }
}
