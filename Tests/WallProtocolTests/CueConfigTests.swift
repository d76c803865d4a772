import LockstepTime
import WallProtocol
import WallTimeline
import XCTest

final class CueConfigTests: XCTestCase {
    private func config(_ extra: String, showControlNode: Bool = false) -> String {
        """
        name: museum
        clock: 127.0.0.1:5637
        media: media/loop.mp4
        canvas: {width: 1920, height: 1080}
        \(extra)
        nodes:
          - id: left
            control: 127.0.0.1:7701
            tile: {x: 0, y: 0, width: 1920, height: 1080}
            \(showControlNode ? "show-control: true\n    standby: false" : "")
        """
    }

    func testCuesAndShowControl_areRead() throws {
        let wall = try WallConfig.parse(
            config(
                """
                cues:
                  welcome: {media: media/welcome.mp4, out: 8s}
                  reel: {playlist: [{media: media/a.mp4, out: 2s}, {media: media/b.mp4, out: 3s}], then: hold}
                  chapter-2: {entry: 1, at: 12.5s, then: next}
                  logo: {still: logo.png, for: 10s, then: return}
                  dark: black
                  hold: pause
                  go: resume
                show-control: {osc: "0.0.0.0:53000", udp: "0.0.0.0:53001", tcp: "[::]:53002", allow: [10.0.0.0/24, "::1"], rate: 5/s, lead: 40ms}
                """, showControlNode: true), file: "wall.yaml", baseDirectory: "/srv/wall")
        XCTAssertEqual(wall.cues.count, 7)
        XCTAssertEqual(
            wall.cues["welcome"]?.target,
            .clip([
                PlaylistItemConfig(media: "/srv/wall/media/welcome.mp4", outPoint: MediaTime(value: 8, timescale: 1))
            ]))
        XCTAssertEqual(wall.cues["welcome"]?.after, .return)
        XCTAssertEqual(wall.cues["reel"]?.after, .hold)
        XCTAssertEqual(wall.cues["chapter-2"]?.target, .entry(index: 1, at: MediaTime(value: 25, timescale: 2)))
        XCTAssertEqual(wall.cues["logo"]?.target, .still(image: "/srv/wall/logo.png"))
        XCTAssertEqual(wall.cues["logo"]?.duration, MediaTime(value: 10, timescale: 1))
        XCTAssertEqual(wall.cues["dark"]?.target, .black)
        XCTAssertEqual(wall.cues["dark"]?.after, .hold)
        XCTAssertEqual(wall.cues["hold"]?.target, .pause)
        XCTAssertEqual("\(wall.cues["welcome"]!)", "clip welcome.mp4, then return")
        let show = try XCTUnwrap(wall.showControl)
        XCTAssertEqual(show.osc, "0.0.0.0:53000")
        XCTAssertEqual(show.tcp, "[::]:53002")
        XCTAssertEqual(show.allow.map(\.description), ["10.0.0.0/24", "::1/128"])
        XCTAssertEqual(show.rate, 5)
        XCTAssertEqual(show.cueLead, MediaTime(value: 40, timescale: 1000))
        XCTAssertNil(
            try WallConfig.parse(config("show-control: {udp: \"127.0.0.1:53001\"}"), file: "w").showControl?.cueLead,
            "measured by default")
        XCTAssertTrue(wall.nodes[0].showControl)
        XCTAssertFalse(wall.nodes[0].standby)
        XCTAssertTrue(try WallConfig.parse(config(""), file: "w").nodes[0].standby, "on by default")
        // A clip's length the config leaves out comes from the nodes.
        let cue = try XCTUnwrap(wall.cues["reel"]?.cue())
        guard case .playlist(let clip) = cue.target else { return XCTFail("\(cue)") }
        XCTAssertEqual(clip.entries.map(\.outPoint.seconds), [2, 3])
        XCTAssertFalse(clip.loops)
        XCTAssertNil(
            try WallConfig.parse(config("cues: {x: {media: a.mp4}}"), file: "w").cues["x"]?.cue(), "no length yet")
        XCTAssertNotNil(
            try WallConfig.parse(config("cues: {x: {media: a.mp4}}"), file: "w").cues["x"]?.cue(
                lengths: ["a.mp4": MediaTime(value: 3, timescale: 1)]))
    }

    func testStandby_isEveryClipAndEntryCue_unlessOneSaysNot() throws {
        let wall = try WallConfig.parse(
            config(
                """
                cues:
                  welcome: {media: a.mp4}
                  chapter: {entry: 1}
                  rare: {media: b.mp4, standby: false}
                  logo: {still: logo.png, for: 5s}
                  dark: black
                """), file: "w")
        XCTAssertEqual(CueConfig.standbyNames(wall.cues), ["chapter", "welcome"])
        XCTAssertFalse(wall.cues["rare"]!.standby)
        XCTAssertFalse(wall.cues["logo"]!.standby, "a still needs no preroll")
        // More than the limit: each costs every node a pipeline, so the config says which.
        let clips = (1...5).map { "  c\($0): {media: a.mp4}" }
        XCTAssertThrowsError(
            try WallConfig.parse(config((["cues:"] + clips).joined(separator: "\n")), file: "wall.yaml")
        ) {
            error in
            XCTAssertTrue("\(error)".contains("5 cues are kept in standby (c1, c2, c3, c4, c5): at most 4"), "\(error)")
            XCTAssertTrue("\(error)".contains("standby: false"), "\(error)")
        }
        let fewer = clips.dropLast() + ["  c5: {media: a.mp4, standby: false}"]
        XCTAssertEqual(
            CueConfig.standbyNames(
                try WallConfig.parse(config((["cues:"] + fewer).joined(separator: "\n")), file: "w").cues),
            ["c1", "c2", "c3", "c4"])
    }

    func testBadCues_areErrorsNamingTheKeyAndLine() {
        let cases: [(String, String)] = [
            ("cues: {\"no spaces\": black}", "cues.no spaces"),
            ("cues: {x: launch}", "is not a cue"),
            ("cues: {x: {media: a.mp4, still: b.png}}", "one target a cue"),
            ("cues: {x: {then: return}}", "names no target"),
            ("cues: {x: {media: a.mp4, then: later}}", "is not return, hold or next"),
            ("cues: {x: {still: a.png, then: return}}", "needs for: DURATION"),
            ("cues: {x: {media: a.mp4, for: 3s}}", "only a still or black"),
            ("cues: {x: {entry: 1, in: 2s}}", "goes with media"),
            ("cues: {x: {entry: -1}}", "cues.x.entry"),
            ("cues: {x: {media: a.mp4, colour: red}}", "colour"),
            ("cues: {x: {still: a.png, for: 2s, standby: true}}", "only a clip or an entry is kept in standby"),
            ("cues: {x: {media: a.mp4, standby: maybe}}", "cues.x.standby"),
            ("show-control: {osc: \"nowhere\"}", "show-control.osc"),
            ("show-control: {allow: [example.com]}", "show-control.allow[0]"),
            ("show-control: {allow: []}", "names nobody"),
            ("show-control: {rate: 0}", "show-control.rate"),
            ("show-control: {lead: 1ms}", "5 ms to 2 s ahead"),
            ("show-control: {lead: 3s}", "show-control.lead"),
            ("show-control: {lead: soon}", "show-control.lead"),
        ]
        for (extra, expected) in cases {
            XCTAssertThrowsError(try WallConfig.parse(config(extra), file: "wall.yaml"), extra) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(extra): \(error)")
                XCTAssertTrue("\(error)".contains("wall.yaml"), "\(error)")
            }
        }
        XCTAssertThrowsError(try WallConfig.parse(config("", showControlNode: true), file: "wall.yaml")) { error in
            XCTAssertTrue("\(error)".contains("needs the wall's show-control"), "\(error)")
        }
    }
}
