import Foundation
import TestSupport
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

/// `wallctl check` against live nodes: what stands in the way of a show is named per node, and a
/// wall with nothing in the way passes.
final class WallCheckTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-check-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    private func writeConfig(
        _ name: String, playlist: [String], sinkB: String, extra: String = "", clock: String = "127.0.0.1:15671"
    ) throws -> String {
        var wall = TestWall(
            name: "checked", clockPort: 15671, media: playlist[0], canvas: (320, 180),
            playlist: playlist.map { "{media: \"\($0)\"}" },
            stateDirectory: folder.appendingPathComponent("state").path,
            extra: extra.isEmpty ? [] : [extra],
            nodes: [
                // Tile a reaches 10 pixels into b's: the check names the overlap.
                TestWall.Node(id: "a", controlPort: 17891, tile: (0, 0, 170, 180)),
                TestWall.Node(id: "b", controlPort: 17892, tile: (160, 0, 160, 180), videoSink: sinkB),
            ])
        wall.clock = clock
        return try wall.write(to: folder.appendingPathComponent(name)).path
    }

    private func startNodes(_ config: String) throws -> [ChildProcess] {
        let wallnode = ChildProcess.product("wallnode")
        return try [
            ChildProcess(
                wallnode,
                [
                    "run", "--config", config, "--id", "a", "--serve-clock", "--state-directory",
                    folder.appendingPathComponent("a").path,
                ]),
            ChildProcess(
                wallnode,
                ["run", "--config", config, "--id", "b", "--state-directory", folder.appendingPathComponent("b").path]),
        ]
    }

    private func check(_ config: String) throws -> (status: Int32, output: String, errors: String) {
        try ChildProcess.run(ChildProcess.product("wallctl"), ["check", "--config", config, "--timeout", "10"])
    }

    /// Waits until both nodes answer with their clocks locked (a check names a clock that is not).
    private func waitUntilAnswering(_ config: String) async throws {
        for port in [17891, 17892] {
            try await TestNode(port: port).waitForStatus(within: 20, "the node on port \(port) locked") { status in
                (status["clock"] as? [String: Any])?["state"] as? String == "locked"
            }
        }
    }

    func testCheck_namesEveryProblemPerNode() async throws {
        let clip = try TestMedia.frameCode(seconds: 1).path
        // Beside the clip, inside the media roots (the media's folder by default): only its absence is wrong.
        let missing = URL(fileURLWithPath: clip).deletingLastPathComponent().appendingPathComponent(
            "missing-\(getpid()).mp4"
        ).path
        // A still for node a; node b's is missing.
        try TestMedia.run(
            "/usr/bin/ffmpeg",
            [
                "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "color=c=red:s=170x180", "-frames:v", "1",
                folder.appendingPathComponent("still-a.png").path,
            ])
        let config = try writeConfig(
            "wall.yaml", playlist: [clip, missing], sinkB: "nosuchsink",
            extra: "still: {per-node: \"\(folder.path)/still-{id}.png\"}")
        let nodes = try startNodes(config)
        defer { for node in nodes { node.signal(SIGTERM) } }
        try await waitUntilAnswering(config)

        let result = try check(config)
        XCTAssertEqual(result.status, 1, result.output + result.errors)
        let output = result.output + result.errors
        XCTAssertTrue(output.contains("warning: tiles a and b overlap in 10x180 at (160, 0)"), output)
        XCTAssertTrue(output.contains("video sink \"fakesink sync=true\": ok"), output)
        XCTAssertTrue(output.contains("its video sink \"nosuchsink\" cannot be built"), output)
        XCTAssertTrue(output.contains("media \(clip): 1.000 s"), output)
        XCTAssertEqual(output.components(separatedBy: "problem: media \(missing)").count - 1, 2, output)
        XCTAssertTrue(output.contains("still \(folder.path)/still-a.png: ok"), output)
        XCTAssertTrue(
            output.contains("its still \(folder.path)/still-b.png cannot be shown: media file not found"), output)
        XCTAssertTrue(output.contains("4 problems stand in the way of a show"), output)

        // A copy of the config that differs (one more comment): both nodes are named.
        let edited = try writeConfig("edited.yaml", playlist: [clip], sinkB: "fakesink", extra: "# edited")
        let differs = try check(edited)
        XCTAssertEqual(differs.status, 1)
        XCTAssertEqual(
            differs.output.components(separatedBy: "its config differs from \(edited)").count - 1, 2, differs.output)
    }

    func testCheck_whenNothingStandsInTheWay_isReady() async throws {
        let clip = try TestMedia.frameCode(seconds: 1).path
        let config = try writeConfig("ready.yaml", playlist: [clip], sinkB: "fakesink sync=true")
        let nodes = try startNodes(config)
        defer { for node in nodes { node.signal(SIGTERM) } }
        try await waitUntilAnswering(config)
        let result = try check(config)
        XCTAssertEqual(result.status, 0, result.output + result.errors)
        XCTAssertTrue(result.output.hasSuffix("check: ready"), result.output)
        // Each node measures what a frame of its media costs its machine, against the frame period.
        XCTAssertEqual(
            result.output.components(separatedBy: "frame cost (").count - 1, 2, result.output)
        XCTAssertTrue(result.output.contains("of the 33.3 ms frame period ("), result.output)
    }

    func testCheck_namesAClockSourceANodeCouldNotFallBackOn() async throws {
        let clip = try TestMedia.frameCode(seconds: 1).path
        // A relay nobody serves: the master's failover would find nothing there.
        let config = try writeConfig(
            "relay.yaml", playlist: [clip], sinkB: "fakesink sync=true", clock: "[127.0.0.1:15671, 127.0.0.1:15679]")
        let nodes = try startNodes(config)
        defer { for node in nodes { node.signal(SIGTERM) } }
        try await waitUntilAnswering(config)
        let result = try check(config)
        XCTAssertEqual(result.status, 1, result.output + result.errors)
        XCTAssertEqual(
            result.output.components(
                separatedBy:
                    "problem: clock source 127.0.0.1:15679: not locked (unsynced): the node could not fall back on it"
            ).count - 1, 2, result.output)
        XCTAssertEqual(result.output.components(separatedBy: "clock: locked to 127.0.0.1:15671").count - 1, 2)
    }

    func testASchedule_onAMasterServingNoRealTime_failsTheCheck_andPlayRefusesBeforeItPushes() async throws {
        let clip = try TestMedia.frameCode(seconds: 1).path
        // Node a serves its process clock: no UTC, so no schedule can play. Its second day part lies in
        // the hour Paris skips each spring (on the last Sunday of March, within the coming year).
        let schedule = [
            "schedule:", "  time-zone: Europe/Paris", "  playlists: {p: [{media: \"\(clip)\"}]}", "  day-parts:",
            "    - {playlist: p, days: daily, from: \"09:00\", to: \"17:00\"}",
            "    - {playlist: p, days: [sun], from: \"02:15\", to: \"02:45\"}",
        ].joined(separator: "\n")
        let config = try writeConfig("schedule.yaml", playlist: [clip], sinkB: "fakesink sync=true", extra: schedule)
        let nodes = try startNodes(config)
        defer { for node in nodes { node.signal(SIGTERM) } }
        try await waitUntilAnswering(config)

        let result = try check(config)
        XCTAssertEqual(result.status, 1, result.output + result.errors)
        XCTAssertTrue(
            result.output.contains("warning: schedule: day part 2 (p, 02:15-02:45) lasts no time on "), result.output)
        XCTAssertEqual(
            result.output.components(separatedBy: "problem: its schedule: a schedule needs a master serving").count - 1,
            2, result.output)

        let play = try ChildProcess.run(
            ChildProcess.product("wallctl"), ["play", "--config", config, "--timeout", "10"])
        XCTAssertNotEqual(play.status, 0, play.output + play.errors)
        XCTAssertTrue((play.output + play.errors).contains("a schedule needs a master serving"), play.errors)
        XCTAssertFalse(play.output.contains("push:"), "refused before a file is sent: \(play.output)")
    }

    /// `wallctl snapshot` asks every node for the frame on its screen at one master time: a wall in
    /// lockstep shows one frame time on every node, and the PNG says which.
    func testSnapshot_showsOneMomentOfTheWall() async throws {
        let clip = try TestMedia.frameCode(seconds: 4).path
        let config = try writeConfig("snapshot.yaml", playlist: [clip], sinkB: "fakesink sync=true")
        let nodes = try startNodes(config)
        defer { for node in nodes { node.signal(SIGTERM) } }
        try await waitUntilAnswering(config)
        let wallctl = ChildProcess.product("wallctl")
        let played = try ChildProcess.run(wallctl, ["play", "--config", config, "--timeout", "20"])
        XCTAssertEqual(played.status, 0, played.output + played.errors)
        let png = folder.appendingPathComponent("wall.png").path
        let result = try ChildProcess.run(
            wallctl, ["snapshot", "--config", config, "--out", png, "--scale", "1", "--timeout", "10"])
        XCTAssertEqual(result.status, 0, result.output + result.errors)
        XCTAssertTrue(result.output.contains("one frame time on all 2 nodes"), result.output)
        let copied = result.output.split(separator: "\n").filter { $0.contains("copied") }
        XCTAssertEqual(copied.count, 2, result.output)
        let data = try Data(contentsOf: URL(fileURLWithPath: png))
        XCTAssertTrue(data.starts(with: [0x89, 0x50, 0x4E, 0x47]), "a PNG")
        XCTAssertNotNil(data.range(of: Data("Lockstep master time ns".utf8)), "the PNG names its master time")
        XCTAssertNotNil(data.range(of: Data("Lockstep frame b ns".utf8)), "and each node's frame")
        // Every frame of the clip is one flat colour: the corner pixel of each tile is the tile's colour.
        let raw = folder.appendingPathComponent("wall.rgb").path
        let decoded = try ChildProcess.run(
            "/usr/bin/ffmpeg", ["-v", "error", "-y", "-i", png, "-f", "rawvideo", "-pix_fmt", "rgb24", raw])
        XCTAssertEqual(decoded.status, 0, decoded.errors)
        let rgb = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        XCTAssertEqual(rgb.count, 320 * 180 * 3)
        func pixel(_ x: Int, _ y: Int) -> [UInt8] { Array(rgb[((y * 320 + x) * 3)..<((y * 320 + x) * 3 + 3)]) }
        XCTAssertEqual(pixel(0, 0), pixel(5, 5), "tile a starts at the canvas's corner, not one pixel in")
        XCTAssertEqual(pixel(170, 0), pixel(175, 5), "tile b's top row is its own")
    }
}
