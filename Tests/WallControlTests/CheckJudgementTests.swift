import LockstepTime
import WallProtocol
import WallTimeline
import XCTest

@testable import WallControl

/// Which of what `wallctl check` finds on a node stands in the way of a show, and which is only
/// said: judged with no node.
final class CheckJudgementTests: XCTestCase {
    private let config = (path: "wall.yaml", digest: String?.some("c0ffee"))

    /// A node with nothing in the way: on the config, its sink built, its clock locked with a
    /// standby source, and the playlist's one file.
    private func healthy() -> WallCheck.NodeFindings {
        WallCheck.NodeFindings(
            check: NodeCheck(
                node: "a", version: "1.0", configSHA256: "c0ffee",
                sinks: [SinkCheck(role: "video", description: "xvimagesink", problem: nil)]),
            clock: ClockReport(
                state: .locked, usable: true, server: "10.0.0.1:5600",
                sources: [
                    ClockSourceReport(source: "10.0.0.1:5600", state: .locked, kind: .followed, standing: "followed"),
                    ClockSourceReport(source: "10.0.0.2:5600", state: .locked, kind: .standby, standing: "standby"),
                ]),
            media: [(name: "/m/a.mp4", outcome: .success(MediaTime(value: 10, timescale: 1)))])
    }

    func testAHealthyNode_hasNoProblem_andSaysWhatItChecked() {
        let judgement = WallCheck.judge("a", healthy(), config: config, version: "1.0")
        XCTAssertEqual(judgement.problems, [])
        XCTAssertEqual(
            judgement.lines,
            [
                "node a: Lockstep 1.0", "  video sink \"xvimagesink\": ok", "  clock: locked to 10.0.0.1:5600",
                "  media /m/a.mp4: 10.000 s",
            ])
    }

    func testAnotherVersion_isNoted_notAProblem() {
        let judgement = WallCheck.judge("a", healthy(), config: config, version: "1.1")
        XCTAssertEqual(judgement.problems, [])
        XCTAssertTrue(judgement.lines.contains("  note: wallctl is 1.1"), "\(judgement.lines)")
    }

    func testWhatStandsInTheWay_isEachAProblem_namingIt() throws {
        var findings = healthy()
        findings.check.configSHA256 = "beef"
        findings.check.sinks = [SinkCheck(role: "video", description: "kmssink", problem: "no DRM device")]
        findings.clock.usable = false
        findings.clock.state = .locking
        findings.media = [
            (
                name: "/m/b.mp4",
                outcome: .failure(.refused(node: "a", command: "/media/durations", reason: "/m/b.mp4: no such file"))
            )
        ]
        var timeline = TimelineReport(
            version: 7, state: "playing", entry: 0, pass: 0, itemTime: .zero, inStep: true, offset: nil, rejoins: 0,
            problem: nil)
        timeline.missingMedia = ["/m/c.mp4"]
        findings.timeline = timeline
        let id = try XCTUnwrap(ContentID(sha256: String(repeating: "ab", count: 32), size: 2_000_000))
        findings.content = ContentReport(
            node: "a", held: [],
            transfers: [ContentTransfer(id: id, name: "c.mp4", have: 1_000_000, problem: "no source holds it")],
            freeBytes: nil)
        findings.problems = [
            ServiceProblem(service: "schedule", problem: "a schedule needs a master serving real time")
        ]

        let problems = WallCheck.judge("a", findings, config: config, version: "1.0").problems
        XCTAssertEqual(problems.count, 7, "\(problems)")
        XCTAssertTrue(problems[0].hasPrefix("its config differs from wall.yaml (SHA-256 beef)"), problems[0])
        XCTAssertEqual(problems[1], "its video sink \"kmssink\" cannot be built: no DRM device")
        XCTAssertEqual(problems[2], "its clock is locking (following 10.0.0.1:5600): it cannot start a show")
        XCTAssertTrue(problems[3].hasPrefix("media /m/b.mp4: ") && problems[3].contains("no such file"), problems[3])
        XCTAssertEqual(problems[4], "timeline version 7 names files not here yet: /m/c.mp4")
        XCTAssertEqual(problems[5], "fetching c.mp4: 1.0/2.0 MB (no source holds it)")
        XCTAssertEqual(problems[6], "its schedule: a schedule needs a master serving real time")
    }

    func testTheShowsFilesAPushWouldSend_mustFitTheStore_countingOnlyWhatTheNodeLacks() throws {
        let big = try XCTUnwrap(ContentID(sha256: String(repeating: "aa", count: 32), size: 3_000_000_000))
        let small = try XCTUnwrap(ContentID(sha256: String(repeating: "bb", count: 32), size: 500_000_000))
        let pushing = [ContentNeed(id: big, name: "/m/reel.mp4"), ContentNeed(id: small, name: "/m/loop.mp4")]
        var findings = healthy()
        findings.content = ContentReport(node: "a", held: [], transfers: [], freeBytes: 2_000_000_000)
        let problems = WallCheck.judge("a", findings, config: config, version: "1.0", pushing: pushing).problems
        XCTAssertEqual(
            problems,
            [
                "the show's files it lacks (2, 3.50 GB) do not fit its content store (2.00 GB free): make room, or a "
                    + "smaller show"
            ])
        // The big one held already: the small one fits.
        findings.content?.held = [big]
        XCTAssertEqual(WallCheck.judge("a", findings, config: config, version: "1.0", pushing: pushing).problems, [])
        // A node that does not say what it has free is not judged on it.
        findings.content = nil
        XCTAssertEqual(WallCheck.judge("a", findings, config: config, version: "1.0", pushing: pushing).problems, [])
    }

    func testAClockSourceTheNodeCannotFollow_isAProblem_oneThatFollowsTheNodeIsNot() {
        var findings = healthy()
        findings.clock.sources = [
            ClockSourceReport(source: "10.0.0.1:5600", state: .locked, kind: .followed, standing: "followed"),
            ClockSourceReport(
                source: "10.0.0.3:5600", state: .unsynced, kind: .notLocked, standing: "not locked (unsynced)"),
            ClockSourceReport(
                source: "10.0.0.4:5600", state: .locked, kind: .loop, standing: "follows this node (a loop)"),
        ]
        let judgement = WallCheck.judge("a", findings, config: config, version: "1.0")
        XCTAssertEqual(
            judgement.problems,
            ["clock source 10.0.0.3:5600: not locked (unsynced): the node could not fall back on it"])
        XCTAssertTrue(
            judgement.lines.contains("  clock source 10.0.0.4:5600: follows this node (a loop)"), "\(judgement.lines)")
    }

    func testASourceReport_fromANodeTooOldToGiveItsKind_isReadFromItsSentence_whereThatIsAKind() throws {
        func decoded(_ standing: String) throws -> ClockSourceReport {
            try JSONDecoder().decode(
                ClockSourceReport.self,
                from: Data(#"{"source": "10.0.0.1:5600", "state": "locked", "standing": "\#(standing)"}"#.utf8))
        }
        XCTAssertEqual(try decoded("followed").kind, .followed)
        XCTAssertEqual(try decoded("standby").kind, .standby)
        XCTAssertNil(try decoded("follows this node (a loop)").kind)
        let report = ClockSourceReport(
            source: "10.0.0.1:5600", state: .locked, kind: .tooManyRelays, standing: "8 relays from the master",
            errorBound: MediaTime(nanoseconds: 1500))
        let again = try JSONDecoder().decode(ClockSourceReport.self, from: JSONEncoder().encode(report))
        XCTAssertEqual(again, report)
    }

    func testTheLayout_warnsOfOverlapsAndUncoveredPixels() throws {
        let config = try WallConfig.parse(
            """
            name: layout
            clock: 127.0.0.1:18590
            media: /m/a.mp4
            canvas: {width: 400, height: 90}
            nodes:
              - {id: a, control: "127.0.0.1:1", tile: {x: 0, y: 0, width: 200, height: 90}}
              - {id: b, control: "127.0.0.1:2", tile: {x: 180, y: 0, width: 200, height: 90}}
            """)
        let warnings = WallCheck.warnings(TileLayout(config: config))
        XCTAssertEqual(warnings.count, 2, "\(warnings)")
        XCTAssertEqual(
            warnings.first, "warning: tiles a and b overlap in 20x90 at (180, 0): both screens show those pixels")
        XCTAssertTrue(
            warnings.last?.hasPrefix("warning: no screen shows 1800 canvas pixels (5.0 %)") == true, "\(warnings)")
    }
}

final class ByteCountTests: XCTestCase {
    func testSizes_readWithTheirUnit_aSmallStoreNeverZeroGB() {
        XCTAssertEqual(ByteCount.text(0), "0 bytes")
        XCTAssertEqual(ByteCount.text(999), "999 bytes")
        XCTAssertEqual(ByteCount.text(1500), "1.50 kB")
        XCTAssertEqual(ByteCount.text(312_400_000), "312 MB")
        XCTAssertEqual(ByteCount.text(45_670_000), "45.7 MB")
        XCTAssertEqual(ByteCount.text(3_500_000_000), "3.50 GB")
        XCTAssertEqual(ByteCount.text(1_200_000_000_000), "1200 GB")
        XCTAssertEqual(ByteCount.text(9_999_000), "10.0 MB", "as it reads once rounded")
        XCTAssertEqual(ByteCount.text(999_999), "1.00 MB")
        XCTAssertEqual(ByteCount.text(999_499), "999 kB")
    }
}
