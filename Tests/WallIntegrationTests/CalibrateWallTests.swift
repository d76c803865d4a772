import Foundation
import TestSupport
import WallProtocol
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

/// `wallctl calibrate` on a real wall: four nodes drawing into one X screen (Xvfb), the screen
/// filmed by ffmpeg's screen grabber as a camera at 50 pictures a second, a rate that is not the
/// screens' 60. The nodes show what calibrate plays; calibrate reads the film; a node given a
/// display-latency shows up that much earlier on the glass, and --write evens the wall out.
///
/// Needs Xvfb, xrandr and ffmpeg (setup installs them); without them the test fails in CI and is skipped
/// elsewhere.
final class CalibrateWallTests: XCTestCase {
    private static let display = ":72"
    private static let screen = (width: 640, height: 360)
    private var folder: URL!
    private var processes: [ChildProcess] = []
    private var nodes: [String: ChildProcess] = [:]

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-calibrate-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        for node in nodes.values { node.signal(SIGTERM) }
        for (id, node) in nodes {
            let result = node.finish()
            if testRun?.hasSucceeded == false { print("node \(id):\n\(result.output)\(result.errors)") }
        }
        nodes = [:]
        for process in processes.reversed() { process.signal(SIGKILL) }
        processes = []
        try? FileManager.default.removeItem(at: folder)
    }

    func testCalibrate_showsThePattern_readsTheFilm_andEvensOutALatency() async throws {
        let ffmpeg = try installedTool("ffmpeg")
        processes.append(
            try await startXvfb(display: Self.display, width: Self.screen.width, height: Self.screen.height))
        let (w, h) = (Self.screen.width / 2, Self.screen.height / 2)
        let ids = ["tl", "tr", "bl", "br"]
        let origins = [(0, 0), (w, 0), (0, h), (w, h)]
        let media = try TestMedia.barCode(seconds: 4, size: "\(Self.screen.width)x\(Self.screen.height)").path
        let config = folder.appendingPathComponent("calibrate.yaml").path
        try TestWall(
            name: "calibrate", clockPort: 15731, media: media, canvas: (Self.screen.width, Self.screen.height),
            extra: ["start-margin: 300ms"],
            nodes: ids.enumerated().map { index, id in
                TestWall.Node(
                    id: id, controlPort: 17991 + index, tile: (origins[index].0, origins[index].1, w, h),
                    videoSink: "ximagesink",
                    extra: [
                        "screen: {display: \"\(Self.display)\", window: {x: \(origins[index].0), y: \(origins[index].1), "
                            + "width: \(w), height: \(h)}}"
                    ])
            }
        ).write(to: URL(fileURLWithPath: config))
        let wallctl = ChildProcess.product("wallctl")
        processes.append(try ChildProcess(wallctl, ["clock", "serve", "--listen", "127.0.0.1:15731"]))
        func startNode(_ id: String) throws {
            nodes[id] = try ChildProcess(
                ChildProcess.product("wallnode"),
                [
                    "run", "--config", config, "--id", id, "--state-directory", folder.appendingPathComponent(id).path,
                    "--log-format", "text",
                ])
        }
        for id in ids { try startNode(id) }
        func calibrate(_ arguments: String...) throws -> String {
            let result = try ChildProcess.run(
                wallctl, ["calibrate", "--config", config, "--timeout", "30", "--clip-folder", folder.path] + arguments)
            XCTAssertEqual(result.status, 0, "wallctl calibrate \(arguments.joined(separator: " ")): \(result.errors)")
            print(result.output)
            return result.output
        }
        /// Films the screen for 6 s at 50 pictures a second, as a camera would: each picture stamped
        /// when it was grabbed.
        func film(_ name: String) throws -> String {
            let path = folder.appendingPathComponent(name).path
            try TestMedia.run(
                ffmpeg,
                [
                    "-nostdin", "-loglevel", "error", "-y", "-use_wallclock_as_timestamps", "1", "-f", "x11grab",
                    "-framerate", "50", "-video_size", "\(Self.screen.width)x\(Self.screen.height)", "-i", Self.display,
                    "-t", "6", "-fps_mode", "passthrough", "-c:v", "libx264", "-preset", "ultrafast", "-crf", "16", path,
                ])
            return path
        }
        /// Each node's offset on the glass, in ms, from a report's table.
        func offsets(_ report: String) -> [String: Double] {
            var found: [String: Double] = [:]
            for line in report.split(separator: "\n") {
                let words = line.split(separator: " ")
                guard words.count > 3, ids.contains(String(words[0])), words[2] == "ms" else { continue }
                found[String(words[0])] = Double(words[1])
            }
            return found
        }

        _ = try calibrate()
        let first = offsets(try calibrate("--video", try film("first.mp4")))
        XCTAssertEqual(Set(first.keys), Set(ids), "every screen read")
        for (id, offset) in first { XCTAssertLessThan(abs(offset), 5, "\(id) in step on the glass: \(first)") }

        // The top right node presents 25 ms early from now on: it leads the glass by that much.
        nodes["tr"]?.signal(SIGTERM)
        _ = nodes["tr"]?.finish()
        let text = try String(contentsOfFile: config, encoding: .utf8)
        try ConfigFileEdit.settingNodeKey("display-latency", to: ["tr": "25ms"], in: text, file: config)
            .write(toFile: config, atomically: true, encoding: .utf8)
        try startNode("tr")
        try await Task.sleep(for: .seconds(4))
        let second = offsets(try calibrate("--video", try film("second.mp4"), "--write"))
        XCTAssertEqual(second["tr"] ?? 0, -18.75, accuracy: 5, "tr leads by its 25 ms: \(second)")
        for id in ["tl", "bl", "br"] { XCTAssertEqual(second[id] ?? 0, 6.25, accuracy: 5, "\(id): \(second)") }
        // Written: every node 25 ms, give or take the film's error: the wall in step again.
        let written = try WallConfig.load(path: config)
        for node in written.nodes {
            XCTAssertEqual(node.displayLatency.seconds, 0.025, accuracy: 0.005, "\(node.id)'s display-latency")
        }
    }
}
