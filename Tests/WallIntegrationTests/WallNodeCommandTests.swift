import Foundation
import TestSupport
import XCTest

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

final class WallNodeCommandTests: XCTestCase {
    func testProbeJSON_givesDurationAndTracks() throws {
        let clip = try TestMedia.audioVideo(seconds: 3)
        let result = try ChildProcess.run(ChildProcess.product("wallnode"), ["probe", clip.path, "--json"])
        XCTAssertEqual(result.status, 0, result.errors)
        let probe = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        XCTAssertEqual((probe["durationNs"] as? Double ?? 0) / 1e9, 3, accuracy: 1.0 / 30)
        let tracks = try XCTUnwrap(probe["tracks"] as? [[String: Any]])
        XCTAssertEqual(tracks.map { $0["mediaType"] as? String }, ["video", "audio"])
        XCTAssertEqual(tracks.map { $0["codec"] as? String }, ["h264", "aac"])
    }

    func testProbe_whenNotMedia_failsWithTheReason() throws {
        let text = try TestMedia.scratchFile(named: "probe-me.mp4", contents: Data("plain text\n".utf8))
        let result = try ChildProcess.run(ChildProcess.product("wallnode"), ["probe", text.path])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.errors.contains("is not a media file"), result.errors)
    }

    func testPlay_headless_keepsRealTimeAndEndsAtTheEnd() throws {
        let clip = try TestMedia.audioVideo(seconds: 3)
        let started = Date()
        let result = try ChildProcess.run(
            ChildProcess.product("wallnode"),
            ["play", clip.path, "--video-sink", "fakesink sync=true", "--audio-sink", "fakesink sync=true"])
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(result.status, 0, result.errors)
        XCTAssertTrue(result.output.contains("end of item"), result.output)
        XCTAssertGreaterThanOrEqual(elapsed, 3, "a 3 s clip cannot end sooner")
        XCTAssertLessThan(elapsed, 4.5, "a 3 s clip takes 3 s (plus start-up)")
        // The last line tells how the frames went: 90 frames of 3 s at 30 fps, each counted once.
        let summary = try XCTUnwrap(
            result.output.split(separator: "\n").last { $0.hasPrefix("frames: ") }, result.output)
        let presented = try XCTUnwrap(Int(summary.dropFirst("frames: ".count).prefix { $0.isNumber }), String(summary))
        XCTAssertEqual(presented, 90, String(summary))
        XCTAssertTrue(summary.contains(" late (more than 1.0 ms after due), "), String(summary))
        XCTAssertTrue(summary.contains(" dropped by the sink; at worst "), String(summary))
    }

    func testPlay_withLanguages_playsThoseTracksAndSaysSo() throws {
        let media = try TestMedia.languages(seconds: 2)
        let result = try ChildProcess.run(
            "/usr/bin/timeout",
            [
                "30", ChildProcess.product("wallnode"), "play", media.path, "--video-sink", "fakesink sync=true",
                "--audio-sink", "fakesink sync=true", "--audio-language", "fr", "--subtitles", "en-GB",
            ])
        XCTAssertEqual(result.status, 0, result.errors)
        XCTAssertTrue(result.output.contains("audio: Français (fra) of 2"), result.output)
        XCTAssertTrue(result.output.contains("subtitles: English (eng) of 2"), result.output)
        XCTAssertTrue(result.output.contains("end of item"), result.output)
    }

    func testPlay_anHLSPlaylistAndAnHTTPFileServedOnLoopback() throws {
        let server = try HTTPFileServer(root: TestMedia.servedOverHTTP())
        defer { server.stop() }
        for name in ["vod.m3u8", "clip.mp4"] {
            // Under timeout(1): a play that never ends fails the test instead of holding the suite.
            let result = try ChildProcess.run(
                "/usr/bin/timeout",
                [
                    "60", ChildProcess.product("wallnode"),
                    "play", server.url(name).absoluteString, "--video-sink", "fakesink sync=true", "--audio-sink",
                    "fakesink sync=true",
                ])
            XCTAssertEqual(result.status, 0, "\(name): \(result.errors)")
            XCTAssertTrue(result.output.contains("end of item"), result.output)
            XCTAssertTrue(result.output.contains("frames: 120 presented"), "\(name): 4 s at 30 fps\n\(result.output)")
        }
        let missing = try ChildProcess.run(
            ChildProcess.product("wallnode"),
            ["play", server.url("none.mp4").absoluteString, "--video-sink", "fakesink"])
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertTrue(
            missing.errors.contains(
                "cannot read \(server.url("none.mp4").absoluteString): Server returned 404 Not Found"),
            missing.errors)
    }

    func testThumbnails_writesOnePNGPerTime_andNamesTheFailures() throws {
        let clip = try TestMedia.frameCode(seconds: 2)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-thumbs-\(getpid())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let made = try ChildProcess.run(
            ChildProcess.product("wallnode"),
            ["thumbnails", clip.path, "--times", "0.5,1.51", "--exact", "--max-size", "80x0", "--out", folder.path])
        XCTAssertEqual(made.status, 0, made.errors)
        XCTAssertTrue(made.output.contains("1.510 s: the frame at 1.500 s, 80x45"), made.output)
        for index in 1...2 {
            let png = try Data(contentsOf: folder.appendingPathComponent("thumbnail-\(index).png"))
            XCTAssertEqual(Array(png.prefix(4)), [0x89, 0x50, 0x4E, 0x47], "a PNG")
        }
        let past = try ChildProcess.run(
            ChildProcess.product("wallnode"), ["thumbnails", clip.path, "--times", "1,5", "--out", folder.path])
        XCTAssertNotEqual(past.status, 0)
        XCTAssertTrue(past.output.contains("5.000 s: no image: 5.000000000s is past the end of the media"), past.output)
        XCTAssertTrue(past.errors.contains("1 of 2 images could not be made"), past.errors)
        let bad = try ChildProcess.run(
            ChildProcess.product("wallnode"), ["thumbnails", clip.path, "--times", "1,-2", "--out", folder.path])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.errors.contains("--times takes seconds (zero or more)"), bad.errors)
    }

    func testPlay_whenFileMissing_exitsNonZeroWithTheReason() throws {
        let result = try ChildProcess.run(
            ChildProcess.product("wallnode"), ["play", "/nonexistent/clip.mp4", "--video-sink", "fakesink"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.errors.contains("media file not found: /nonexistent/clip.mp4"), result.errors)
    }

    func testServeClock_aNodeCanBeTheMaster() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-serve-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // Relative to the config's folder; both nodes sign their clock packets with it.
        try "00112233445566778899aabbccddeeff\n".write(
            to: folder.appendingPathComponent("clock.key"), atomically: true, encoding: .utf8)
        let config = try TestWall(
            name: "serving", clockPort: 15701, media: try TestMedia.frameCode(seconds: 1).path, canvas: (320, 180),
            stateDirectory: folder.appendingPathComponent("state").path, extra: ["clock-key-file: clock.key"],
            nodes: [
                TestWall.Node(id: "master", controlPort: 17821, tile: (0, 0, 160, 180), videoSink: "fakesink"),
                TestWall.Node(id: "follower", controlPort: 17822, tile: (160, 0, 160, 180), videoSink: "fakesink"),
            ]
        ).write(to: folder.appendingPathComponent("wall.yaml"))
        let wallnode = ChildProcess.product("wallnode")
        let master = try ChildProcess(wallnode, ["run", "--config", config.path, "--id", "master", "--serve-clock"])
        let follower = try ChildProcess(
            wallnode, ["run", "--config", config.path, "--id", "follower", "--simulate-clock-offset", "-42"])
        defer {
            master.signal(SIGTERM)
            follower.signal(SIGTERM)
        }
        let locked = try await TestNode(port: 17822).waitForStatus(
            within: 20, "the follower locked to the serving node"
        ) {
            ($0["clock"] as? [String: Any])?["state"] as? String == "locked"
        }
        let offset = try XCTUnwrap((locked["clock"] as? [String: Any])?["offsetNs"] as? Double) / 1e9
        XCTAssertEqual(offset, 42, accuracy: 0.01, "the follower's clock is 42 s behind the serving node's")
        let serving = try TestNode(port: 17821).status()
        XCTAssertEqual((serving["clock"] as? [String: Any])?["serving"] as? Bool, true)
        let unkeyed = try ChildProcess.run(
            ChildProcess.product("wallctl"), ["clock", "probe", "127.0.0.1:15701", "--duration", "0.5"])
        XCTAssertNotEqual(unkeyed.status, 0, "the serving node answers only signed Lockstep requests")
    }

    func testServeClock_whenTheConfigsClockAddressIsNotThisMachines_failsNamingIt() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-elsewhere-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        // 192.0.2.1 is TEST-NET-1: never an address of this machine.
        var wall = TestWall(
            name: "elsewhere", clockPort: 15703, media: try TestMedia.frameCode(seconds: 1).path, canvas: (320, 180),
            nodes: [TestWall.Node(id: "only", controlPort: 17823, tile: (0, 0, 320, 180), videoSink: "fakesink")])
        wall.clock = "192.0.2.1:15703"
        let config = try wall.write(to: folder.appendingPathComponent("wall.yaml"))
        let result = try ChildProcess.run(
            ChildProcess.product("wallnode"), ["run", "--config", config.path, "--id", "only", "--serve-clock"])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(
            result.errors.contains("the config's clock address 192.0.2.1:15703 is not an address of this machine"),
            result.errors)
    }
}
