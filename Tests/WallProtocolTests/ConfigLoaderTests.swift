import LockstepTime
import TestSupport
import WallProtocol
import XCTest

final class ConfigLoaderTests: XCTestCase {
    private let valid = """
        name: test
        clock: 127.0.0.1:5637
        media: media/clip.mp4
        canvas: {width: 1920, height: 1080}
        start-margin: 300ms
        nodes:
          - id: left
            control: 127.0.0.1:7701
            tile: {x: 0, y: 0, width: 960, height: 1080}
            display-latency: 16.5ms
          - id: right
            control: 127.0.0.1:7702
            tile: {x: 960, y: 0, width: 960, height: 1080}
            output: {width: 1920, height: 2160}
            gravity: resizeAspectFill
            audio: true
        """

    func testParse_whenValid_readsEveryKeyAndResolvesMedia() throws {
        let config = try WallConfig.parse(valid, file: "wall.yaml", baseDirectory: "/etc/lockstep")
        XCTAssertEqual(config.name, "test")
        XCTAssertEqual(config.media, .shared(path: "/etc/lockstep/media/clip.mp4"))
        XCTAssertEqual(config.startMargin, MediaTime(value: 3, timescale: 10))
        XCTAssertEqual(config.nodes.map(\.id), ["left", "right"])
        XCTAssertEqual(config.nodes[0].displayLatency, MediaTime(value: 165, timescale: 10_000))
        XCTAssertEqual(config.nodes[1].output, CanvasSize(width: 1920, height: 2160))
        XCTAssertEqual(config.nodes[1].gravity, .resizeAspectFill)
        XCTAssertTrue(config.nodes[1].audio)
        XCTAssertFalse(config.nodes[0].audio)
        XCTAssertEqual(config.latency, .zero)
        XCTAssertTrue(config.loop)
    }

    func testLoad_shippedConfigs() throws {
        let root = TestMedia.repositoryRoot.appendingPathComponent("configs")
        let local = try WallConfig.load(path: root.appendingPathComponent("local-4.yaml").path)
        XCTAssertEqual(local.nodes.count, 4)
        XCTAssertEqual(Set(local.nodes.map(\.control)).count, 4)
        let lobby = try WallConfig.load(path: root.appendingPathComponent("wall-2x2-1080p.yaml").path)
        XCTAssertEqual(lobby.canvas, CanvasSize(width: 3888, height: 2208))
        XCTAssertEqual(lobby.nodes[1].tile.x, 1920 + 48, "the bezel gap lies between the tiles")
    }

    func testParse_whenKeyMissing_namesKeyAndLine() {
        let text = valid.replacingOccurrences(of: "    control: 127.0.0.1:7702\n", with: "")
        assertError(text, "wall.yaml:11: nodes[1].control is required")
    }

    func testParse_whenKeyMisspelt_suggestsTheKnownOne() {
        let text = valid.replacingOccurrences(of: "display-latency:", with: "display-latncy:")
        assertError(text, "wall.yaml:10: unknown key nodes[0].display-latncy (did you mean nodes[0].display-latency?)")
    }

    func testParse_whenDurationMalformed_namesIt() {
        let text = valid.replacingOccurrences(of: "300ms", with: "soon")
        assertError(text, "wall.yaml:5: start-margin: must be a duration such as 250ms, 1.5s or 0, got \"soon\"")
    }

    func testParse_readsTheLanguageKeys() throws {
        let text = valid.replacingOccurrences(
            of: "start-margin: 300ms\n", with: "start-margin: 300ms\naudio-languages: [fr, en-GB]\nsubtitles: [deu]\n")
        let config = try WallConfig.parse(text, file: "wall.yaml", baseDirectory: "/etc/lockstep")
        XCTAssertEqual(config.audioLanguages, ["fr", "en-GB"])
        XCTAssertEqual(config.subtitleLanguages, ["deu"])
        let off = try WallConfig.parse(
            valid.replacingOccurrences(of: "start-margin: 300ms\n", with: "start-margin: 300ms\nsubtitles: off\n"),
            file: "wall.yaml", baseDirectory: nil)
        XCTAssertEqual(off.subtitleLanguages, [])
        let plain = try WallConfig.parse(valid, file: "wall.yaml", baseDirectory: nil)
        XCTAssertEqual(plain.audioLanguages, [])
        XCTAssertEqual(plain.subtitleLanguages, [])
    }

    func testParse_whenALanguageIsNoTag_namesIt() {
        let text = valid.replacingOccurrences(
            of: "start-margin: 300ms\n", with: "start-margin: 300ms\nsubtitles: [fr, French!]\n")
        assertError(text, "wall.yaml:6: subtitles[1]: must be a language tag such as fr, en-GB or deu, got \"French!\"")
    }

    func testParse_readsTheScreenKeys() throws {
        let text = valid.replacingOccurrences(
            of: "    display-latency: 16.5ms\n",
            with:
                "    display-latency: 16.5ms\n    screen: {display: \":0\", monitor: HDMI-1, fullscreen: true, title: Lobby}\n"
        )
        .replacingOccurrences(
            of: "    audio: true",
            with: "    audio: true\n    screen: {window: {x: 10, y: 20, width: 640, height: 360}}")
        let config = try WallConfig.parse(text, file: "wall.yaml")
        XCTAssertEqual(
            config.nodes[0].screen, ScreenConfig(display: ":0", monitor: "HDMI-1", fullscreen: true, title: "Lobby"))
        XCTAssertEqual(config.nodes[1].screen.window, PixelRect(x: 10, y: 20, width: 640, height: 360))
        XCTAssertFalse(config.nodes[1].screen.fullscreen)
        let kms = valid.replacingOccurrences(
            of: "    display-latency: 16.5ms\n",
            with: "    display-latency: 16.5ms\n    screen: {connector: 32, plane: 31}\n")
        let parsed = try WallConfig.parse(kms, file: "wall.yaml")
        XCTAssertEqual(parsed.nodes[0].screen.connector, 32)
        XCTAssertEqual(parsed.nodes[0].screen.plane, 31)
        let moded = try WallConfig.parse(
            valid.replacingOccurrences(
                of: "    display-latency: 16.5ms\n",
                with: "    display-latency: 16.5ms\n    screen: {mode: 1920x1080@60}\n"),
            file: "wall.yaml")
        let mode = try XCTUnwrap(moded.nodes[0].screen.mode)
        XCTAssertEqual(mode.description, "1920x1080 at 60 Hz")
        XCTAssertNil(mode.mismatch(DisplayMode(output: "HDMI-1", width: 1920, height: 1080, refreshHz: 59.94)))
        XCTAssertEqual(
            mode.mismatch(DisplayMode(output: "HDMI-1", width: 1920, height: 1080, refreshHz: 50)),
            "the screen is in 1920x1080 at 50 Hz on HDMI-1; the config expects 1920x1080 at 60 Hz")
        XCTAssertNotNil(
            ScreenConfig.ExpectedMode("3840x2160")?.mismatch(
                DisplayMode(output: "DP-1", width: 1920, height: 1080, refreshHz: 60)))
    }

    func testAViewersTokenFile_needsAControlTokenFile_andAnotherOne() throws {
        let guarded = valid + "\ncontrol-token-file: /etc/lockstep/token"
        assertError(
            valid + "\nviewer-token-file: /etc/lockstep/viewer.token",
            prefix: "wall.yaml:", contains: "viewer-token-file: needs control-token-file")
        assertError(
            guarded + "\nviewer-token-file: /etc/lockstep/token", prefix: "wall.yaml:",
            contains: "names the control token's file")
        let config = try WallConfig.parse(
            guarded + "\nviewer-token-file: /etc/lockstep/viewer.token", file: "wall.yaml")
        XCTAssertEqual(config.security.viewerTokenFile, "/etc/lockstep/viewer.token")
    }

    func testParse_whenScreenKeysConflictOrAreWrong_namesThem() {
        func withScreen(_ screen: String) -> String {
            valid.replacingOccurrences(
                of: "    display-latency: 16.5ms\n", with: "    display-latency: 16.5ms\n    screen: \(screen)\n")
        }
        assertError(
            withScreen("{fullscreen: true, window: {x: 0, y: 0, width: 10, height: 10}}"),
            "wall.yaml:11: nodes[0].screen.window: cannot be given with fullscreen: a fullscreen window fills its monitor"
        )
        assertError(
            withScreen("{fullscren: true}"),
            "wall.yaml:11: unknown key nodes[0].screen.fullscren (did you mean nodes[0].screen.fullscreen?)")
        assertError(withScreen("{connector: -1}"), prefix: "wall.yaml:11: nodes[0].screen.connector:")
        assertError(
            withScreen("{mode: 1920p}"),
            "wall.yaml:11: nodes[0].screen.mode: \"1920p\" is not a display mode such as 1920x1080 or 1920x1080@60")
        assertError(
            withScreen("{fullscreen: maybe}"), prefix: "wall.yaml:11: nodes[0].screen.fullscreen: must be true or false"
        )
    }

    func testParse_whenTileOffCanvas_namesTheNode() {
        let text = valid.replacingOccurrences(of: "x: 960, y: 0, width: 960", with: "x: 961, y: 0, width: 960")
        assertError(
            text, "wall.yaml:11: nodes[1].tile: (961, 0, 960x1080) does not fit the 1920x1080 canvas")
    }

    func testParse_whenIdRepeated_namesBothNodes() {
        let text = valid.replacingOccurrences(of: "id: right", with: "id: left")
        assertError(text, "wall.yaml:11: nodes[1].id: \"left\" is already the id of nodes[0]")
    }

    func testParse_whenAddressHasNoPort_explains() {
        let text = valid.replacingOccurrences(of: "clock: 127.0.0.1:5637", with: "clock: master.local")
        assertError(text, prefix: "wall.yaml:2: clock: ")
    }

    func testParse_whenWidthNotANumber_namesIt() {
        let text = valid.replacingOccurrences(of: "{width: 1920, height: 1080}", with: "{width: wide, height: 1080}")
        assertError(text, "wall.yaml:4: canvas.width: must be a whole number, got \"wide\"")
    }

    func testParse_whenYAMLBroken_givesTheLine() {
        assertError("name: [unclosed\nclock: x:1\n", prefix: "wall.yaml:")
    }

    func testParse_whenPerNodeTemplateLacksId_explains() {
        let text = valid.replacingOccurrences(of: "media: media/clip.mp4", with: "media: {per-node: media/tile.mp4}")
        assertError(text, "wall.yaml:3: media.per-node: must contain {id}, which becomes each node's id")
    }

    func testParse_still_isAnImageOrOnePerNode_resolvedLikeMedia() throws {
        let shared = valid.replacingOccurrences(
            of: "start-margin: 300ms", with: "start-margin: 300ms\nstill: slides/holding.png")
        XCTAssertEqual(
            try WallConfig.parse(shared, file: "wall.yaml", baseDirectory: "/etc/lockstep").still,
            .shared(path: "/etc/lockstep/slides/holding.png"))
        XCTAssertNil(try WallConfig.parse(valid, file: "wall.yaml").still)
        let perNode = valid.replacingOccurrences(
            of: "start-margin: 300ms", with: "start-margin: 300ms\nstill: {per-node: \"/srv/{id}.png\"}")
        XCTAssertEqual(try WallConfig.parse(perNode, file: "wall.yaml").still?.path(forNode: "left"), "/srv/left.png")
        assertError(
            valid.replacingOccurrences(of: "start-margin: 300ms", with: "start-margin: 300ms\nstill: \"\""),
            "wall.yaml:6: still: must name an image file")
        assertError(
            valid.replacingOccurrences(
                of: "start-margin: 300ms", with: "start-margin: 300ms\nstill: {per-node: a.png}"),
            "wall.yaml:6: still.per-node: must contain {id}, which becomes each node's id")
    }

    func testParse_clockSources_aListInOrderOfPreference_withNodesServingTheClock() throws {
        let text = valid.replacingOccurrences(
            of: "clock: 127.0.0.1:5637", with: "clock: [127.0.0.1:5637, 127.0.0.1:5638, 127.0.0.1:5639]"
        ).replacingOccurrences(
            of: "    display-latency: 16.5ms\n", with: "    display-latency: 16.5ms\n    serve-clock: 127.0.0.1:5638\n")
        let config = try WallConfig.parse(text, file: "wall.yaml")
        XCTAssertEqual(config.clockSources, ["127.0.0.1:5637", "127.0.0.1:5638", "127.0.0.1:5639"])
        XCTAssertEqual(config.clock, "127.0.0.1:5637", "the master comes first")
        XCTAssertEqual(config.nodes[0].serveClock, "127.0.0.1:5638")
        XCTAssertNil(config.nodes[1].serveClock)
        XCTAssertEqual(try WallConfig.parse(valid, file: "wall.yaml").clockSources, ["127.0.0.1:5637"])
    }

    func testParse_ptp_readsItsKeys_withDefaultsAndPerNodeSockets() throws {
        let text = valid.replacingOccurrences(
            of: "start-margin: 300ms", with: "start-margin: 300ms\nptp: {uds: \"run/{id}.sock\", domain: 24}")
        let ptp = try XCTUnwrap(try WallConfig.parse(text, file: "/etc/lockstep/wall.yaml").ptp)
        XCTAssertEqual(ptp.udsAddress(forNode: "left"), "run/left.sock")
        XCTAssertEqual(ptp.domain, 24)
        XCTAssertEqual(ptp.pmc, PTPConfig.defaultPMC)
        let defaults = try XCTUnwrap(
            try WallConfig.parse(valid.replacingOccurrences(of: "start-margin: 300ms", with: "ptp: {}"), file: "w.yaml")
                .ptp)
        XCTAssertEqual(defaults, PTPConfig())
        XCTAssertNil(try WallConfig.parse(valid, file: "wall.yaml").ptp)
    }

    func testParse_whenPTPIsWrong_namesWhat() {
        let ptp = { (value: String) in
            self.valid.replacingOccurrences(of: "start-margin: 300ms", with: "start-margin: 300ms\nptp: \(value)")
        }
        assertError(ptp("{domain: 300}"), "wall.yaml:6: ptp.domain: must be 0 to 255, got 300")
        assertError(ptp("{domain: -1}"), prefix: "wall.yaml:6: ptp.domain: must be at least 0")
        assertError(ptp("{udp: /var/run/ptp4l}"), "wall.yaml:6: unknown key ptp.udp (did you mean ptp.uds?)")
        assertError(ptp("{uds: /\(String(repeating: "x", count: 120))}"), prefix: "wall.yaml:6: ptp.uds: is too long")
        assertError(ptp("yes"), prefix: "wall.yaml:6: ptp")
    }

    func testParse_whenClockSourcesAreWrong_namesWhat() {
        assertError(
            valid.replacingOccurrences(of: "clock: 127.0.0.1:5637", with: "clock: []"),
            "wall.yaml:2: clock: the list of clock sources is empty")
        assertError(
            valid.replacingOccurrences(of: "clock: 127.0.0.1:5637", with: "clock: [127.0.0.1:5637, 127.0.0.1:5637]"),
            "wall.yaml:2: clock[1]: 127.0.0.1:5637 is listed twice")
        assertError(
            valid.replacingOccurrences(
                of: "    display-latency: 16.5ms\n",
                with: "    display-latency: 16.5ms\n    serve-clock: 127.0.0.1:5637\n"),
            prefix: "wall.yaml:7: nodes[0].serve-clock: 127.0.0.1:5637 is the master's address")
        let twice = valid.replacingOccurrences(
            of: "    display-latency: 16.5ms\n", with: "    display-latency: 16.5ms\n    serve-clock: 127.0.0.1:5640\n"
        ).replacingOccurrences(of: "    audio: true", with: "    audio: true\n    serve-clock: 127.0.0.1:5640")
        assertError(
            twice, prefix: "wall.yaml:12: nodes[1].serve-clock: 127.0.0.1:5640 is already where node left serves")
    }

    func testLoad_whenFileMissing_says() {
        XCTAssertThrowsError(try WallConfig.load(path: "/nonexistent/wall.yaml")) {
            XCTAssertEqual("\($0)", "/nonexistent/wall.yaml: cannot read the config: no such file")
        }
    }

    func testLoad_whenNotAConfigFile_saysWhatItIs() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        XCTAssertThrowsError(try WallConfig.load(path: folder.path)) {
            XCTAssertEqual("\($0)", "\(folder.path): cannot read the config: it is a directory, not a config file")
        }
        let huge = folder.appendingPathComponent("huge.yaml")
        try Data(repeating: 0x20, count: WallConfig.largestFile + 1).write(to: huge)
        XCTAssertThrowsError(try WallConfig.load(path: huge.path)) {
            XCTAssertEqual(
                "\($0)", "\(huge.path): cannot read the config: it is over 256 KiB; a wall config is at most that long")
        }
        let latin1 = folder.appendingPathComponent("latin1.yaml")
        try Data("name: test\nclock: caf".utf8 + [0xE9] + Data(":5637\n".utf8)).write(to: latin1)
        XCTAssertThrowsError(try WallConfig.load(path: latin1.path)) {
            XCTAssertEqual(
                "\($0)", "\(latin1.path):2: not valid YAML: the text is not UTF-8 (an invalid byte at column 11)")
        }
        let fifo = folder.appendingPathComponent("fifo.yaml")
        XCTAssertEqual(mkfifo(fifo.path, 0o600), 0)
        XCTAssertThrowsError(try WallConfig.load(path: fifo.path), "a FIFO nobody writes to is an empty config") {
            XCTAssertTrue("\($0)".hasPrefix("\(fifo.path)"), "\($0)")
        }
    }

    func testParse_whenNameMissing_saysTheWallNeedsOne() {
        assertError(valid.replacingOccurrences(of: "name: test\n", with: ""), prefix: "wall.yaml:1: name is required")
    }

    func testParse_whenTooManyNodes_refusesBeforeReadingThem() {
        let node = "  - {id: n, control: 127.0.0.1:7701, tile: {x: 0, y: 0, width: 1, height: 1}}\n"
        let text =
            "name: t\nclock: 127.0.0.1:5637\nmedia: m.mp4\ncanvas: {width: 1, height: 1}\nnodes:\n"
            + String(repeating: node, count: WallConfig.mostNodes + 1)
        assertError(text, prefix: "wall.yaml:6: nodes: 1001 nodes: a wall has at most 1000")
    }

    func testDurationSyntax_isExact() {
        XCTAssertEqual(DurationSyntax.parse("250ms"), MediaTime(value: 1, timescale: 4))
        XCTAssertEqual(DurationSyntax.parse("1.5"), MediaTime(value: 3, timescale: 2))
        XCTAssertEqual(DurationSyntax.parse("20us"), MediaTime(value: 20, timescale: 1_000_000))
        XCTAssertEqual(DurationSyntax.parse("0"), .zero)
        XCTAssertNil(DurationSyntax.parse("1.2.3s"))
        XCTAssertNil(DurationSyntax.parse("ms"))
    }

    private func assertError(
        _ text: String, _ expected: String? = nil, prefix: String? = nil, contains: String? = nil,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try WallConfig.parse(text, file: "wall.yaml"), file: file, line: line) { error in
            let message = "\(error)"
            if let expected { XCTAssertEqual(message, expected, file: file, line: line) }
            if let prefix { XCTAssertTrue(message.hasPrefix(prefix), message, file: file, line: line) }
            if let contains { XCTAssertTrue(message.contains(contains), message, file: file, line: line) }
        }
    }
}

final class ConfigSecurityTests: XCTestCase {
    private func config(_ extra: String, control: String = "127.0.0.1:7701") -> String {
        """
        name: test
        clock: 127.0.0.1:5637
        media: media/clip.mp4
        canvas: {width: 1920, height: 1080}
        \(extra)
        nodes:
          - id: left
            control: \(control)
            tile: {x: 0, y: 0, width: 1920, height: 1080}
        """
    }

    func testParse_readsTheSecurityKeysAndResolvesTheirPaths() throws {
        let text = config(
            """
            control-token-file: secrets/token
            metrics-open: true
            control-tls: {certificate: tls/wall.crt, key: /etc/lockstep/wall.key}
            media-roots: [media, /srv/more]
            start-horizon: 90s
            clock-key-file: secrets/clock.key
            """)
        let wall = try WallConfig.parse(text, file: "wall.yaml", baseDirectory: "/etc/lockstep")
        XCTAssertEqual(wall.security.tokenFile, "/etc/lockstep/secrets/token")
        XCTAssertTrue(wall.security.metricsOpen)
        XCTAssertEqual(
            wall.security.tls,
            ControlTLS(certificate: "/etc/lockstep/tls/wall.crt", key: "/etc/lockstep/wall.key"))
        XCTAssertEqual(wall.security.tls?.trustRoots, "/etc/lockstep/tls/wall.crt")
        XCTAssertEqual(wall.mediaRoots, ["/etc/lockstep/media", "/srv/more"])
        XCTAssertEqual(wall.startHorizon, MediaTime(value: 90, timescale: 1))
        XCTAssertEqual(wall.clockKeyFile, "/etc/lockstep/secrets/clock.key")
    }

    func testParse_defaults_mediaRootsToTheMediaFolder() throws {
        let wall = try WallConfig.parse(config(""), file: "wall.yaml", baseDirectory: "/etc/lockstep")
        XCTAssertEqual(wall.mediaRoots, ["/etc/lockstep/media"])
        XCTAssertNil(wall.security.tokenFile)
        XCTAssertFalse(wall.security.metricsOpen)
        XCTAssertEqual(wall.startHorizon, MediaTime(value: 300, timescale: 1))
        let perNode = try WallConfig.parse(
            config("").replacingOccurrences(of: "media: media/clip.mp4", with: "media: {per-node: \"/srv/{id}/a.mp4\"}")
        )
        XCTAssertEqual(perNode.mediaRoots, ["/srv"])
    }

    func testParse_whenControlListensBeyondLoopbackWithoutAToken_refuses() {
        XCTAssertThrowsError(try WallConfig.parse(config("", control: "10.0.0.11:7700"), file: "wall.yaml")) { error in
            XCTAssertTrue(
                "\(error)".contains("nodes[0].control: 10.0.0.11:7700 is reachable beyond this machine"), "\(error)")
        }
        XCTAssertNoThrow(
            try WallConfig.parse(config("control-token-file: /t", control: "10.0.0.11:7700"), file: "wall.yaml"))
        XCTAssertNoThrow(try WallConfig.parse(config("", control: "localhost:7700"), file: "wall.yaml"))
    }

    func testParse_whenTheDaemonListensBeyondLoopbackWithoutAToken_refuses() {
        XCTAssertThrowsError(
            try WallConfig.parse(config("controller: {listen: \"0.0.0.0:7800\"}"), file: "wall.yaml")
        ) { error in
            XCTAssertTrue(
                "\(error)".contains("controller.listen: 0.0.0.0:7800 is reachable beyond this machine"), "\(error)")
        }
        XCTAssertNoThrow(
            try WallConfig.parse(
                config("control-token-file: /t\ncontroller: {listen: \"0.0.0.0:7800\"}"), file: "wall.yaml"))
        XCTAssertNoThrow(try WallConfig.parse(config("controller: {listen: \"127.0.0.1:7800\"}"), file: "wall.yaml"))
    }

    func testParse_aWallName_isOneLineOfAtMost100Bytes_andANodeIdTooIsBounded() {
        let cases = [
            ("\"\"", "name: must not be empty"), ("\"   \"", "name: must not be empty"),
            ("\"lobby\\nwall\"", "name: must not hold a line break"), ("\"a\\tb\"", "name: must not hold a line break"),
            (String(repeating: "w", count: 101), "name: must be at most 100 bytes, this one has 101"),
        ]
        for (name, expected) in cases {
            let text = config("").replacingOccurrences(of: "name: test", with: "name: \(name)")
            XCTAssertThrowsError(try WallConfig.parse(text, file: "wall.yaml"), name) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(name): \(error)")
            }
        }
        XCTAssertNoThrow(
            try WallConfig.parse(config("").replacingOccurrences(of: "name: test", with: "name: Lobby wall (north)")))
        let longID = config("").replacingOccurrences(of: "id: left", with: "id: \(String(repeating: "n", count: 101))")
        XCTAssertThrowsError(try WallConfig.parse(longID, file: "wall.yaml")) { error in
            XCTAssertTrue("\(error)".contains("must be at most 100 bytes"), "\(error)")
        }
    }

    func testParse_whenSecurityValuesAreWrong_namesTheKey() {
        let cases = [
            ("control-tls: {certificate: a.crt}", "control-tls.key is required"),
            ("control-tls: {certificate: a.crt, key: a.key, ca: b}", "unknown key control-tls.ca"),
            ("media-roots: []", "media-roots: must name at least one folder"),
            ("start-horizon: 10ms", "start-horizon: must be at least 1s"),
            ("metrics-open: sometimes", "metrics-open: must be true or false"),
        ]
        for (extra, message) in cases {
            XCTAssertThrowsError(try WallConfig.parse(config(extra), file: "wall.yaml"), extra) { error in
                XCTAssertTrue("\(error)".contains(message), "\(extra): \(error)")
            }
        }
    }
}
