import Foundation
import GroundTruth
import LockstepTime
import TestSupport
import WallDisplay
import WallTimeline
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

/// Four nodes on one X screen under a window manager, the way an integrator runs a wall from one
/// machine with four monitors: each node's window lands where the config puts it (a rectangle, or
/// fullscreen on a named monitor), titled with the wall and node, and the screen, captured as a
/// viewer would see it, recomposes the source frame with one frame on all four; between shows the
/// screen is black.
///
/// Needs Xvfb, openbox, xrandr, xwininfo and xprop (setup installs them); without them the test
/// fails in CI and is skipped elsewhere.
final class ScreenTests: XCTestCase {
    private static let display = ":71"
    private static let screen = (width: 640, height: 360)
    private var folder: URL!
    private var processes: [ChildProcess] = []
    /// Xvfb and the window manager: they start with the test's signal mask, SIGTERM blocked.
    private var displayProcesses: [ChildProcess] = []
    /// The nodes by id: their logs stay beside the screenshots.
    private var nodes: [String: ChildProcess] = [:]
    /// Where the screenshots stay after the test, to look at when it fails.
    private static let shots = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-screen-shots")

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-screen-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        for process in processes.reversed() { process.signal(SIGTERM) }
        for (id, node) in nodes {
            let result = node.finish()
            try? (result.output + result.errors).write(
                to: Self.shots.appendingPathComponent("\(id).log"), atomically: true, encoding: .utf8)
        }
        nodes = [:]
        processes = []
        for process in displayProcesses.reversed() { process.signal(SIGKILL) }
        displayProcesses = []
        try? FileManager.default.removeItem(at: folder)
    }

    /// Starts Xvfb with four 320x180 RandR monitors in a 2x2 and openbox managing it.
    private func startDisplay() async throws {
        let xrandr = try installedTool("xrandr")
        let openbox = try installedTool("openbox")
        displayProcesses.append(
            try await startXvfb(display: Self.display, width: Self.screen.width, height: Self.screen.height))
        let (w, h) = (Self.screen.width / 2, Self.screen.height / 2)
        for (name, x, y) in [("TL", 0, 0), ("TR", w, 0), ("BL", 0, h), ("BR", w, h)] {
            try TestMedia.run(
                xrandr, ["-display", Self.display, "--setmonitor", name, "\(w)/0x\(h)/0+\(x)+\(y)", "none"])
        }
        displayProcesses.append(try ChildProcess(openbox, ["--sm-disable"], environment: ["DISPLAY": Self.display]))
        // The window manager is up once it has announced itself on the root window (EWMH).
        let xprop = try installedTool("xprop")
        try await eventually(within: 10, "openbox managing the display") {
            let root = try ChildProcess.run(xprop, ["-display", Self.display, "-root", "_NET_SUPPORTING_WM_CHECK"])
            return root.output.contains("window id #")
        }
    }

    /// Every top-level window's title and its rectangle on the screen (`xwininfo -root -tree`).
    private static func windows() throws -> [String: String] {
        let output = try TestMedia.run(try installedTool("xwininfo"), ["-display", Self.display, "-root", "-tree"])
        var found: [String: String] = [:]
        for line in output.split(separator: "\n") {
            // 0x400001 "screens — tl": ("wallnode" "Lockstep")  320x180+0+0  +0+0
            let parts = line.split(separator: "\"")
            guard parts.count >= 2, line.contains("(\"wallnode\" \"Lockstep\")"),
                let geometry = line.split(separator: " ").last(where: { $0.hasPrefix("+") }),
                let size = line.split(separator: " ").first(where: {
                    $0.contains("x") && $0.contains("+") && !$0.hasPrefix("0x")
                })
            else { continue }
            found[String(parts[1])] = "\(size.split(separator: "+")[0])\(geometry)"
        }
        return found
    }

    private func grab(_ name: String) throws -> String {
        try FileManager.default.createDirectory(at: Self.shots, withIntermediateDirectories: true)
        let path = Self.shots.appendingPathComponent(name).path
        try TestMedia.run(
            "/usr/bin/ffmpeg",
            [
                "-nostdin", "-loglevel", "error", "-y", "-f", "x11grab", "-video_size",
                "\(Self.screen.width)x\(Self.screen.height)",
                "-i", Self.display, "-frames:v", "1", path,
            ])
        return path
    }

    /// For one rectangle of a screenshot: the source frame it matches best and the PSNR (dB) there.
    private func bestFrame(shot: String, source: String, x: Int, y: Int, width: Int, height: Int) throws -> (
        frame: Int, psnr: Double
    ) {
        let stats = folder.appendingPathComponent("psnr-\(x)-\(y)-\(width).txt").path
        let crop = "crop=\(width):\(height):\(x):\(y),format=rgb24"
        try TestMedia.run(
            "/usr/bin/ffmpeg",
            [
                "-nostdin", "-loglevel", "error", "-i", source, "-loop", "1", "-i", shot, "-lavfi",
                "[0:v]\(crop)[a];[1:v]\(crop)[b];[a][b]psnr=stats_file=\(stats):shortest=1", "-f", "null", "-",
            ])
        // n:1 mse_avg:... mse_r:... mse_g:... mse_b:... psnr_avg:43.88 ...
        var best = (frame: -1, psnr: -Double.infinity)
        for line in try String(contentsOfFile: stats, encoding: .utf8).split(separator: "\n") {
            var fields: [Substring: Substring] = [:]
            for field in line.split(separator: " ") {
                let pair = field.split(separator: ":", maxSplits: 1)
                if pair.count == 2 { fields[pair[0]] = pair[1] }
            }
            guard let n = fields["n"].flatMap({ Int($0) }), let psnr = fields["psnr_avg"].flatMap({ Double($0) }) else {
                continue
            }
            if psnr > best.psnr { best = (n - 1, psnr) }
        }
        return best
    }

    /// Screen keys that cannot apply to a node's sink or display stop it at start, named.
    func testScreenKeys_thatCannotApply_stopTheNodeAtStart() throws {
        let clip = try TestMedia.frameCode(seconds: 1).path
        let cases: [(sink: String, screen: String, display: String?, expected: String)] = [
            (
                "fakesink", "{window: {x: 0, y: 0, width: 10, height: 10}}", nil,
                "screen places a window, but this node's video sink \"fakesink\" draws none"
            ),
            (
                "ximagesink", "{connector: 32}", nil,
                "screen.connector and screen.plane are kmssink's; this node's video sink is \"ximagesink\""
            ),
            (
                "kmssink", "{monitor: HDMI-1}", nil,
                "screen.monitor places an X window; this node's video sink \"kmssink\" draws without one"
            ),
            (
                "ximagesink", "{fullscreen: true}", "",
                "screen places a window on an X display, but DISPLAY is unset and screen.display is not given"
            ),
            (
                "ximagesink", "{display: \":79\", fullscreen: true}", nil,
                "cannot show the picture: cannot open X display \":79\""
            ),
        ]
        for (index, check) in cases.enumerated() {
            let config = try TestWall(
                name: "screens", clockPort: 15682, media: clip, canvas: (160, 90),
                nodes: [
                    TestWall.Node(
                        id: "a", controlPort: 17955, tile: (0, 0, 160, 90), videoSink: check.sink,
                        extra: ["screen: \(check.screen)"])
                ]
            ).write(to: folder.appendingPathComponent("bad-\(index).yaml")).path
            let node = try ChildProcess(
                ChildProcess.product("wallnode"),
                [
                    "run", "--config", config, "--id", "a", "--state-directory",
                    folder.appendingPathComponent("bad").path,
                ],
                environment: ["DISPLAY": check.display ?? ""])
            let result = node.finish()
            XCTAssertNotEqual(result.status, 0, "\(check.screen) on \(check.sink)")
            XCTAssertTrue(result.errors.contains(check.expected), "\(check.screen) on \(check.sink): \(result.errors)")
        }
    }

    func testFourNodes_landWhereTheConfigPutsThem_andRecomposeTheFrame() async throws {
        try await startDisplay()
        // A moving test pattern: every frame differs, so the best match names the frame.
        let clip = try TestMedia.audioVideo(seconds: 6, size: "\(Self.screen.width)x\(Self.screen.height)").path
        let (w, h) = (Self.screen.width / 2, Self.screen.height / 2)
        let config = folder.appendingPathComponent("screens.yaml").path
        // A still for three screens between shows; the fourth's is missing, so that screen stays black.
        for id in ["tl", "tr", "bl"] {
            try TestMedia.run(
                "/usr/bin/ffmpeg",
                [
                    "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=\(w)x\(h)", "-frames:v",
                    "1",
                    folder.appendingPathComponent("still-\(id).png").path,
                ])
        }
        let screens: [(id: String, x: Int, y: Int, screen: String)] = [
            // The display mode each expects: tl the one Xvfb has, br one it has not.
            (
                "tl", 0, 0,
                "{window: {x: 0, y: 0, width: \(w), height: \(h)}, mode: \"\(Self.screen.width)x\(Self.screen.height)\"}"
            ),
            ("tr", w, 0, "{monitor: TR, window: {x: 0, y: 0, width: \(w), height: \(h)}}"),
            ("bl", 0, h, "{monitor: BL, fullscreen: true}"),
            ("br", w, h, "{monitor: BR, fullscreen: true, title: \"lobby, bottom right\", mode: \"1920x1080@60\"}"),
        ]
        try TestWall(
            name: "screens", clockPort: 15681, media: clip, canvas: (Self.screen.width, Self.screen.height),
            extra: ["still: {per-node: \"\(folder.path)/still-{id}.png\"}", "start-margin: 300ms"],
            nodes: screens.enumerated().map { index, screen in
                TestWall.Node(
                    id: screen.id, controlPort: 17951 + index, tile: (screen.x, screen.y, w, h),
                    videoSink: "ximagesink",
                    extra: ["screen: \(screen.screen)"])
            }
        ).write(to: URL(fileURLWithPath: config))

        let wallctl = ChildProcess.product("wallctl")
        processes.append(try ChildProcess(wallctl, ["clock", "serve", "--listen", "127.0.0.1:15681"]))
        for id in ["tl", "tr", "bl", "br"] {
            let node = try ChildProcess(
                ChildProcess.product("wallnode"),
                [
                    "run", "--config", config, "--id", id, "--state-directory", folder.appendingPathComponent(id).path,
                    "--log-format", "text",
                ],
                environment: ["DISPLAY": Self.display])
            processes.append(node)
            nodes[id] = node
        }
        let expected = [
            "screens — tl": "\(w)x\(h)+0+0", "screens — tr": "\(w)x\(h)+\(w)+0",
            "screens — bl": "\(w)x\(h)+0+\(h)", "lobby, bottom right": "\(w)x\(h)+\(w)+\(h)",
        ]
        try await withTimeout(20, "four windows at their rectangles") {
            while try Self.windows() != expected { try await Task.sleep(for: .milliseconds(200)) }
        }
        // The fullscreen ones are fullscreen to the window manager (above its panels), the others not.
        let xprop = try installedTool("xprop")
        for (title, fullscreen) in [("lobby, bottom right", true), ("screens — tl", false)] {
            let state = try TestMedia.run(xprop, ["-display", Self.display, "-name", title, "_NET_WM_STATE"])
            XCTAssertEqual(state.contains("_NET_WM_STATE_FULLSCREEN"), fullscreen, "\(title): \(state)")
        }

        // The pause holds the frame due at its time on every node: wallctl pause returns once every
        // node has moved to it exactly.
        try await playThenPause(wallctl, config)
        let shot = try grab("playing.png")

        var frames: [Int] = []
        for (x, y) in [(0, 0), (w, 0), (0, h), (w, h)] {
            let match = try bestFrame(shot: shot, source: clip, x: x, y: y, width: w, height: h)
            XCTAssertGreaterThan(
                match.psnr, 30, "tile at (\(x), \(y)) matches frame \(match.frame) at only \(match.psnr) dB")
            frames.append(match.frame)
        }
        XCTAssertEqual(Set(frames).count, 1, "the four tiles show frames \(frames)")
        let whole = try bestFrame(
            shot: shot, source: clip, x: 0, y: 0, width: Self.screen.width, height: Self.screen.height)
        XCTAssertEqual(whole.frame, frames[0])
        XCTAssertGreaterThan(whole.psnr, 30, "the screen recomposes frame \(whole.frame) at only \(whole.psnr) dB")

        // Between shows the windows stay, with their still or black (no desktop, no frozen frame, no cursor).
        let stopped = try ChildProcess.run(wallctl, ["stop", "--config", config, "--timeout", "10"])
        XCTAssertEqual(stopped.status, 0, stopped.output + stopped.errors)
        _ = try grab("stopped.png")
        try assertStills(in: try grabRGB(), "after stop")
        XCTAssertEqual(try Self.windows(), expected, "the windows outlive the show")
        let checked = try ChildProcess.run(wallctl, ["check", "--config", config, "--timeout", "10"])
        XCTAssertTrue(checked.output.contains("still \(folder.path)/still-tl.png: ok"), checked.output)
        XCTAssertTrue(checked.output.contains("its still \(folder.path)/still-br.png cannot be shown"), checked.output)
        // The screen not in the mode its config expects is a problem; the others show theirs.
        XCTAssertEqual(
            checked.output.components(
                separatedBy:
                    "problem: its display: the screen is in \(Self.screen.width)x\(Self.screen.height) on screen"
            ).count - 1, 1,
            checked.output)
        XCTAssertTrue(checked.output.contains("the config expects 1920x1080 at 60 Hz"), checked.output)
        XCTAssertEqual(
            checked.output.components(separatedBy: "  display: \(Self.screen.width)x").count - 1, 4, checked.output)

        // Identify: each screen shows its own test card, lines running on across the joins.
        let identified = try ChildProcess.run(wallctl, ["identify", "--config", config, "--seconds", "3"])
        XCTAssertEqual(identified.status, 0, identified.output + identified.errors)
        XCTAssertTrue(identified.output.contains("tr: screen 2 of 4, tile \(w)x\(h)+\(w)+0"), identified.output)
        let card = try grabRGB()
        _ = try grab("identify.png")
        for (index, (x, y)) in [(0, 0), (w, 0), (0, h), (w, h)].enumerated() {
            let expected = TestCard(
                canvas: Self.screen, tile: DisplayRect(x: x, y: y, width: w, height: h), output: (w, h), index: index)
            let (matching, caption) = compare(card, at: (x, y), with: expected)
            XCTAssertGreaterThan(matching, 0.99, "screen \(index + 1) at (\(x), \(y)) is not its test card")
            XCTAssertGreaterThan(caption, 0.005, "screen \(index + 1) at (\(x), \(y)) shows no caption")
        }
        // The card ends by itself: the stills (and black) again, as every node reports.
        try await eventually(within: 10, "every node back on its still after the card") {
            try ["tl", "tr", "bl", "br"].allSatisfy { id in
                let port = 17951 + ["tl", "tr", "bl", "br"].firstIndex(of: id)!
                let timeline = try TestNode(port: port).timeline()
                return timeline?["show"] as? String == "stopped" && timeline?["settled"] as? Bool == true
            }
        }
        try assertStills(in: try grabRGB(), "after the test card")

        // Each node names the display its window is on, as RandR has it: Xvfb's one screen.
        for port in 17951...17954 {
            let health = try XCTUnwrap(try TestNode(port: port).status()["health"] as? [String: Any])
            let display = try XCTUnwrap(health["display"] as? [String: Any], "\(health)")
            XCTAssertEqual(display["width"] as? Int, Self.screen.width, "\(display)")
            XCTAssertEqual(display["height"] as? Int, Self.screen.height, "\(display)")
            // Xvfb's mode has no pixel clock: no refresh rate, rather than a made-up one.
            XCTAssertNil(display["refreshHz"], "\(display)")
            XCTAssertEqual(display["output"] as? String, "screen", "\(display)")
        }
    }

    /// What is on the glass is what the nodes report, after every verb: the screen is captured after
    /// each, every tile's frame number read from the frame-code pixels, and compared across the wall
    /// and, while paused, with the frame each node's /status says it shows. Between verbs the window
    /// manager's doings (a window over a tile and gone, a node's window unmapped and mapped again) must
    /// leave the paused frame in place. Four 320x180 windows, each node's `screen.display` naming the
    /// display while the node's own DISPLAY names none.
    func testEveryVerb_theGlassShowsWhatTheNodesReport() async throws {
        try await startDisplay()
        // Bar codes, not frame-code colours: those leave the RGB gamut and cannot be read back.
        let size = "\(Self.screen.width)x\(Self.screen.height)"
        let first = try TestMedia.barCode(seconds: 8, size: size).path
        let second = try TestMedia.barCode(seconds: 4, size: size).path
        let (w, h) = (Self.screen.width / 2, Self.screen.height / 2)
        // A still: frame 100 of the first clip, so the tiles read 100 while it shows.
        let still = folder.appendingPathComponent("code-100.png").path
        try TestMedia.run(
            "/usr/bin/ffmpeg",
            ["-nostdin", "-loglevel", "error", "-y", "-i", first, "-vf", "select=eq(n\\,100)", "-frames:v", "1", still])
        let ids = ["tl", "tr", "bl", "br"]
        let origins = [(0, 0), (w, 0), (0, h), (w, h)]
        let config = folder.appendingPathComponent("glass.yaml").path
        try TestWall(
            name: "glass", clockPort: 15699, media: first, canvas: (Self.screen.width, Self.screen.height),
            extra: [
                "playlist: [{media: \(first)}, {media: \(second)}]",
                "media-roots: [\(folder.path), \(URL(fileURLWithPath: first).deletingLastPathComponent().path)]",
                "start-margin: 300ms",
            ],
            nodes: ids.enumerated().map { index, id in
                TestWall.Node(
                    id: id, controlPort: 17961 + index, tile: (origins[index].0, origins[index].1, w, h),
                    videoSink: "ximagesink",
                    extra: [
                        "screen: {display: \"\(Self.display)\", window: {x: \(origins[index].0), y: \(origins[index].1), "
                            + "width: \(w), height: \(h)}}"
                    ])
            }
        ).write(to: URL(fileURLWithPath: config))

        let wallctl = ChildProcess.product("wallctl")
        processes.append(try ChildProcess(wallctl, ["clock", "serve", "--listen", "127.0.0.1:15699"]))
        func startNode(_ id: String) throws {
            let node = try ChildProcess(
                ChildProcess.product("wallnode"),
                [
                    "run", "--config", config, "--id", id, "--state-directory", folder.appendingPathComponent(id).path,
                    "--log-format", "text",
                ],
                // screen.display alone must bring the sink to the display, not only the window.
                environment: ["DISPLAY": ""])
            processes.append(node)
            nodes[id] = node
        }
        for id in ids { try startNode(id) }
        let clients = ids.indices.map { TestNode(port: 17961 + $0, wall: "glass") }
        func run(_ arguments: String...) throws {
            let result = try ChildProcess.run(wallctl, arguments + ["--config", config, "--timeout", "30"])
            XCTAssertEqual(
                result.status, 0, "wallctl \(arguments.joined(separator: " ")): \(result.output)\(result.errors)")
        }
        var step = 0
        /// The frame on each tile of one screenshot (nil: not a frame code there).
        func tiles(_ label: String) throws -> [Int?] {
            step += 1
            let rgb = try grabRGB()
            try FileManager.default.createDirectory(at: Self.shots, withIntermediateDirectories: true)
            try Data(rgb).write(to: Self.shots.appendingPathComponent(String(format: "glass-%02d-%@.rgb", step, label)))
            return origins.map { x, y in BarCode.read(rgb: rgb, stride: Self.screen.width, region: (x, y, w, h)) }
        }
        /// The frame each node's status says it shows (its position at 30 frames a second).
        func reported() throws -> [Int] {
            try clients.map { client in
                let position = try XCTUnwrap(client.status()["player"] as? [String: Any])["positionNs"] as? Int ?? -1
                // The frame shown at a position is the last one that began at or before it.
                return Int((Double(position) * 30 / 1e9 + 1e-6).rounded(.down))
            }
        }
        func assertPaused(_ label: String, at expected: Int? = nil) async throws {
            var last: ([Int?], [Int]) = ([], [])
            do {
                try await eventually(within: 3, "the glass \(label)") {
                    last = (try tiles(label), try reported())
                    let shown = last.0
                    return shown.allSatisfy { $0 != nil && $0 == shown[0] } && last.1.allSatisfy { $0 == shown[0] }
                        && (expected == nil || shown[0] == expected)
                }
            } catch {
                XCTFail(
                    "\(label): the tiles show \(last.0), the nodes report \(last.1), expected \(expected.map(String.init) ?? "one frame")"
                )
            }
        }
        func assertPlaying(_ label: String, below limit: Int = 4096) async throws {
            var last: [Int?] = []
            do {
                try await eventually(within: 3, "the glass \(label)") {
                    last = try tiles(label)
                    let codes = last.compactMap { $0 }
                    return codes.count == 4 && codes.max()! - codes.min()! <= 1 && codes.max()! < limit
                }
            } catch {
                XCTFail("\(label): the tiles show \(last) while playing")
            }
            // Moving: a second later every tile shows a later frame.
            try await Task.sleep(for: .milliseconds(500))
            let later = try tiles(label + "-later")
            XCTAssertTrue(
                zip(later, last).allSatisfy { ($0 ?? -1) > ($1 ?? 4096) || ($0 ?? 4096) < 30 },
                "\(label): \(last) then \(later)")
        }

        try run("play")
        try await assertPlaying("play")
        try run("pause")
        try await assertPaused("pause")
        try run("seek", "2.5")
        try await assertPaused("seek 2.5 while paused", at: 75)
        try run("seek", "6")
        try await assertPaused("seek 6 while paused", at: 180)
        try run("resume")
        try await assertPlaying("resume")
        try run("next")
        try await assertPlaying("next (the 4 s clip)", below: 120)
        try run("pause")
        try await assertPaused("pause in the second entry")

        // A window over every tile, then gone: each node's window exposed must show its frame again.
        let xdotool = try installedTool("xdotool")
        let environment = ["DISPLAY": Self.display]
        var covers: [ChildProcess] = []
        for (index, (x, y)) in origins.enumerated() {
            // xmessage sets no _NET_WM_PID: each cover is found by its own title.
            let title = "lockstep-cover-\(index)"
            let cover = try ChildProcess(
                "/usr/bin/xmessage",
                ["-display", Self.display, "-title", title, "-geometry", "\(w)x\(h)", "-center", "covering the tile"])
            covers.append(cover)
            // Where the window manager put it, moved over the tile.
            var found: [Substring] = []
            try await eventually(within: 5, "\(title) mapped") {
                found = try ChildProcess.run(xdotool, ["search", "--name", "^\(title)$"], environment: environment)
                    .output.split(separator: "\n")
                return !found.isEmpty
            }
            for window in found {
                _ = try ChildProcess.run(
                    xdotool, ["windowmove", "--sync", String(window), "\(x)", "\(y)"], environment: environment)
            }
        }
        try await eventually(within: 3, "every tile covered") { try tiles("covered").allSatisfy { $0 == nil } }
        // Children inherit the tests' blocked SIGTERM: killed outright, and waited for.
        for cover in covers {
            cover.signal(SIGKILL)
            _ = cover.finish()
        }
        try await assertPaused("after an expose")
        // The window manager unmaps a node's window and maps it again (as on a workspace switch).
        let found = try ChildProcess.run(xdotool, ["search", "--name", "^glass .* tr$"], environment: environment)
        let window = try XCTUnwrap(found.output.split(separator: "\n").first, "the node's window: \(found)")
        _ = try ChildProcess.run(xdotool, ["windowunmap", "--sync", String(window)], environment: environment)
        _ = try ChildProcess.run(xdotool, ["windowmap", "--sync", String(window)], environment: environment)
        try await assertPaused("after an unmap and a map")

        try run("still", still)
        try await eventually(within: 3, "the still on every tile") { try tiles("still").allSatisfy { $0 == 100 } }
        try run("stop")
        try await eventually(within: 3, "black after stop") {
            let rgb = try grabRGB()
            return rgb.max() ?? 255 < 16
        }
        try run("play")
        try await assertPlaying("play after stop")
        // A node killed and started again rejoins; paused, its frame is the wall's.
        nodes["tr"]?.signal(SIGKILL)
        _ = nodes["tr"]?.finish()
        try startNode("tr")
        try await eventually(within: 20, "tr back in step") {
            (try? clients[1].timeline()?["inStep"] as? Bool) == true
        }
        try await assertPlaying("after tr rejoined")
        try run("pause")
        try await assertPaused("pause after the rejoin")

        // The item-end boundary: a pause timed inside the last frame of a pass holds that frame on
        // the glass, not the next pass's first, and every node reports it (a pause that fell there
        // by chance once showed frame 0 of the next pass while every node reported the item's end).
        // The pause goes to every node as a controller sends it, at a time chosen from the timeline.
        func pauseInsideTheLastFrame() throws -> (frame: Int, in: Double) {
            let stored = try clients[0].get("/timeline")
            let timeline = try JSONDecoder().decode(Timeline.self, from: Data(stored.body.utf8))
            let masterNow = try XCTUnwrap(try clients[0].status()["masterTimeNs"] as? Int, "the node's master time")
            let now = MediaTime(nanoseconds: Int64(masterNow))
            var position = timeline.position(at: now)
            var end = try XCTUnwrap(position.passEnd, "a pass that ends: \(position)")
            if end - now < MediaTime(value: 1, timescale: 2) {
                position = timeline.position(at: end + MediaTime(value: 1, timescale: 1000))
                end = try XCTUnwrap(position.passEnd, "the next pass ends: \(position)")
            }
            let paused = try timeline.applying(.pause, at: end - MediaTime(value: 15, timescale: 1000))
            let body = String(decoding: try JSONEncoder().encode(paused), as: UTF8.self)
            for client in clients {
                let reply = try client.request("PUT", "/timeline", body: body)
                XCTAssertEqual(reply.status, 200, "\(reply)")
            }
            return (Int((position.entry.duration.seconds * 30).rounded()) - 1, (end - now).seconds)
        }
        for round in 1...4 {
            try run("resume")
            try await assertPlaying("resume \(round) before a pause at an item's end")
            let (last, due) = try pauseInsideTheLastFrame()
            // The pause's time is up to a pass ahead: looked for once it has passed.
            try await Task.sleep(for: .seconds(due + 0.2))
            try await assertPaused("paused inside the last frame (\(round))", at: last)
        }

        // Through all of it, no X request failed (ximagesink's pool once outlived its connection:
        // BadShmSeg on every frame put and every buffer freed after a rebuilt video chain).
        for (id, node) in nodes {
            node.signal(SIGTERM)
            let result = node.finish()
            let log = result.output + result.errors
            try? log.write(to: Self.shots.appendingPathComponent("\(id).log"), atomically: true, encoding: .utf8)
            XCTAssertFalse(
                log.contains("X errors ignored"),
                "\(id): \(log.split(separator: "\n").filter { $0.contains("X error") })")
        }
        nodes = [:]
    }

    /// On Wayland the compositor places windows; a node asks only for fullscreen (waylandsink's
    /// `fullscreen`), which covers the output, the desktop shell's panel included. Weston runs
    /// headless (pixman), one 640x360 output, its screenshots allowed (`--debug`).
    func testWaylandNode_fullscreen_coversTheOutputWithTheFrame() async throws {
        let weston = try installedTool("weston")
        let screenshooter = try installedTool("weston-screenshooter")
        let runtime = folder.appendingPathComponent("xdg")
        try FileManager.default.createDirectory(
            at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let socket = "lockstep-wayland-\(getpid())"
        let wayland = ["XDG_RUNTIME_DIR": runtime.path, "WAYLAND_DISPLAY": socket]
        let startCompositor = {
            let compositor = try ChildProcess(
                weston,
                [
                    "--backend=headless-backend.so", "--use-pixman", "--width=\(Self.screen.width)",
                    "--height=\(Self.screen.height)", "--socket=\(socket)", "--debug",
                ],
                environment: ["XDG_RUNTIME_DIR": runtime.path])
            self.displayProcesses.append(compositor)
            try await withTimeout(10, "weston's socket") {
                while !FileManager.default.fileExists(atPath: runtime.appendingPathComponent(socket).path) {
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            return compositor
        }
        let compositor = try await startCompositor()
        let clip = try TestMedia.audioVideo(seconds: 6, size: "\(Self.screen.width)x\(Self.screen.height)").path
        let config = folder.appendingPathComponent("wayland.yaml").path
        try TestWall(
            name: "wayland", clockPort: 15683, media: clip, canvas: (Self.screen.width, Self.screen.height),
            extra: ["start-margin: 300ms"],
            nodes: [
                TestWall.Node(
                    id: "w", controlPort: 17956, tile: (0, 0, Self.screen.width, Self.screen.height),
                    videoSink: "waylandsink", extra: ["screen: {fullscreen: true}"])
            ]
        ).write(to: URL(fileURLWithPath: config))
        let wallctl = ChildProcess.product("wallctl")
        processes.append(try ChildProcess(wallctl, ["clock", "serve", "--listen", "127.0.0.1:15683"]))
        let node = try ChildProcess(
            ChildProcess.product("wallnode"),
            [
                "run", "--config", config, "--id", "w", "--state-directory", folder.appendingPathComponent("w").path,
                "--log-format", "text",
            ],
            environment: wayland)
        processes.append(node)
        nodes["wayland"] = node
        try await playThenPause(wallctl, config)
        // weston-screenshooter writes wayland-screenshot-<time>.png into its working directory.
        let environment = wayland.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let screenshot = { (name: String) throws -> String in
            // A folder emptied for each picture: its listing's order is the file system's, and an
            // earlier picture left there could be read in place of this one.
            let shots = self.folder.appendingPathComponent("wayland-shots-\(name)")
            try? FileManager.default.removeItem(at: shots)
            try FileManager.default.createDirectory(at: shots, withIntermediateDirectories: true)
            try TestMedia.run("/bin/sh", ["-c", "cd '\(shots.path)' && env \(environment) '\(screenshooter)'"])
            let shot = try XCTUnwrap(
                try FileManager.default.contentsOfDirectory(atPath: shots.path).first { $0.hasSuffix(".png") },
                "weston-screenshooter wrote no screenshot")
            let path = shots.appendingPathComponent(shot).path
            try FileManager.default.createDirectory(at: Self.shots, withIntermediateDirectories: true)
            try? FileManager.default.removeItem(at: Self.shots.appendingPathComponent("\(name).png"))
            try FileManager.default.copyItem(
                atPath: path, toPath: Self.shots.appendingPathComponent("\(name).png").path)
            return path
        }
        let path = try screenshot("wayland")
        let whole = try bestFrame(
            shot: path, source: clip, x: 0, y: 0, width: Self.screen.width, height: Self.screen.height)
        XCTAssertGreaterThan(
            whole.psnr, 30, "the output shows frame \(whole.frame) at only \(whole.psnr) dB: not fullscreen?")
        // The top rows, where the shell's panel is, show the frame too.
        let top = try bestFrame(shot: path, source: clip, x: 0, y: 0, width: Self.screen.width, height: 32)
        XCTAssertEqual(top.frame, whole.frame)
        XCTAssertGreaterThan(top.psnr, 30, "the panel shows through above the picture")

        // The compositor dies and comes back on its socket: the node's pipeline lost its display;
        // the node renews it and shows the paused frame again, fullscreen, by itself.
        compositor.signal(SIGKILL)
        _ = compositor.finish()
        try? FileManager.default.removeItem(at: runtime.appendingPathComponent(socket))
        try? FileManager.default.removeItem(at: runtime.appendingPathComponent(socket + ".lock"))
        _ = try await startCompositor()
        // Every picture of the screen from then on is black or the paused frame: never another one,
        // such as the entry's first frame a new pipeline prerolls on before its exact seek.
        var again = (frame: -1, psnr: -Double.infinity)
        var others: [String] = []
        try await eventually(within: 20, "the paused frame \(whole.frame) on the restarted compositor") {
            let shot = try screenshot("wayland-restarted")
            again = try self.bestFrame(
                shot: shot, source: clip, x: 0, y: 0, width: Self.screen.width, height: Self.screen.height)
            if again.psnr > 30, again.frame != whole.frame { others.append("frame \(again.frame) (\(again.psnr) dB)") }
            return again.psnr > 30 && again.frame == whole.frame
        }
        XCTAssertEqual(others, [], "the screen showed another frame than the paused \(whole.frame) meanwhile")
        let status = try TestNode(port: 17956).status()
        XCTAssertEqual((status["timeline"] as? [String: Any])?["state"] as? String, "paused", "\(status)")
    }

    /// Plays the wall (play waits for the nodes by itself) and pauses it a second into the show;
    /// each command returns once every screen carries it out.
    private func playThenPause(_ wallctl: String, _ config: String) async throws {
        let played = try ChildProcess.run(wallctl, ["play", "--config", config, "--timeout", "30"])
        XCTAssertEqual(played.status, 0, played.output + played.errors)
        let paused = try ChildProcess.run(wallctl, ["pause", "--config", config, "--timeout", "10"])
        XCTAssertEqual(paused.status, 0, paused.output + paused.errors)
    }

    /// tl, tr and bl show their stills (above 35 dB PSNR), br is black.
    private func assertStills(in shot: [UInt8], _ when: String) throws {
        let (w, h) = (Self.screen.width / 2, Self.screen.height / 2)
        for (id, (x, y)) in [("tl", (0, 0)), ("tr", (w, 0)), ("bl", (0, h)), ("br", (w, h))] {
            var region: [UInt8] = []
            for row in y..<(y + h) {
                region += shot[(row * Self.screen.width + x) * 3..<(row * Self.screen.width + x + w) * 3]
            }
            guard id != "br" else {
                XCTAssertEqual(region.max(), 0, "\(id) is not black \(when)")
                continue
            }
            let raw = folder.appendingPathComponent("still-\(id).rgb").path
            try TestMedia.run(
                "/usr/bin/ffmpeg",
                [
                    "-nostdin", "-loglevel", "error", "-y", "-i", folder.appendingPathComponent("still-\(id).png").path,
                    "-f", "rawvideo", "-pix_fmt", "rgb24", raw,
                ])
            let still = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
            XCTAssertEqual(still.count, region.count)
            let psnr = Pictures.psnr(still, region)
            XCTAssertGreaterThan(psnr, 35, "\(id) does not show its still \(when)")
        }
    }

    /// The screen as RGB bytes, rows of `screen.width` pixels.
    private func grabRGB() throws -> [UInt8] {
        let path = folder.appendingPathComponent("screen.rgb").path
        try TestMedia.run(
            "/usr/bin/ffmpeg",
            [
                "-nostdin", "-loglevel", "error", "-y", "-f", "x11grab", "-video_size",
                "\(Self.screen.width)x\(Self.screen.height)",
                "-i", Self.display, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", path,
            ])
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// How much of one screen of `shot` shows `card`: the share of pixels within 8 levels of the
    /// card outside the caption's band (10 % to 50 % of the height), and the share that differs
    /// inside it (the caption).
    private func compare(_ shot: [UInt8], at origin: (x: Int, y: Int), with card: TestCard) -> (
        matching: Double, caption: Double
    ) {
        var (same, outside, changed, inside) = (0, 0, 0, 0)
        for y in 0..<card.output.height {
            let inCaption = y >= card.output.height / 10 && y < card.output.height / 2
            for x in 0..<card.output.width {
                let color = card.color(x: x, y: y)
                let offset = ((origin.y + y) * Self.screen.width + origin.x + x) * 3
                let close = zip([color.red, color.green, color.blue], shot[offset..<offset + 3]).allSatisfy {
                    abs(Int($0) - Int($1)) <= 8
                }
                if inCaption {
                    inside += 1
                    if !close { changed += 1 }
                } else {
                    outside += 1
                    if close { same += 1 }
                }
            }
        }
        return (Double(same) / Double(max(1, outside)), Double(changed) / Double(max(1, inside)))
    }
}
