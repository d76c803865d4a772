import LockstepTime
import ShowControl
import WallProtocol
import WallTimeline
import XCTest

@testable import WallControl

/// Show control's decisions against fake nodes (`FakeNode`): a cue every node holds in standby
/// cuts a few frames ahead; one a node does not hold waits the edit lead, as any edit.
final class CueEditTests: FakeWallTestCase {
    /// Two fake nodes playing the fake wall's playlist, with cue `intro` (4 s of /m/b.mp4 from 1 s)
    /// and `hold` (the same, `standby: false`).
    private func playingWall() async throws -> (Wall, CueControl) {
        try await startNodes(["a", "b"], lengths: ["/m/a.mp4": seconds(10), "/m/b.mp4": seconds(6)])
        let wall = try self.wall(
            extra: """
                cues:
                  intro: {media: /m/b.mp4, in: 1s, out: 5s}
                  hold: {media: /m/b.mp4, in: 1s, out: 5s, standby: false}
                """)
        let control = TimelineControl(wall: wall)
        try await control.play(
            "play", playlist: Playlist(entries: try await control.entries(wall.config.playlistItems)), lead: .zero)
        return (wall, try await CueControl.prepare(wall))
    }

    /// The cue's segment: the first to take effect after `master` (its return follows it).
    private func cut(in timeline: Timeline, after master: MediaTime) throws -> TimelineSegment {
        try XCTUnwrap(timeline.segments.first { $0.from > master })
    }

    /// How far ahead of the master's time when it was sent the cue takes effect.
    private func lead(of timeline: Timeline, sentAt master: MediaTime) throws -> MediaTime {
        try cut(in: timeline, after: master).from - master
    }

    func testACueEveryNodeHolds_cutsAFewFramesAhead() async throws {
        let (_, cues) = try await playingWall()
        for node in nodes { node.cuesReady = ["intro"] }

        let master = FakeNode.master()
        let (timeline, held) = try await cues.perform(.cue("intro"), lead: .zero)

        XCTAssertNotNil(held, "sent as a cue every node holds")
        XCTAssertLessThan(try lead(of: timeline, sentAt: master), seconds(0.3), "a few frames ahead, not the edit lead")
        XCTAssertEqual(timeline.version, 2)
        for node in nodes { XCTAssertEqual(node.timeline, timeline, "node \(node.id)") }
        let segment = try cut(in: timeline, after: master)
        XCTAssertEqual(segment.playlist.entries.first?.media, "/m/b.mp4")
        XCTAssertEqual(segment.playlist.entries.first?.inPoint, seconds(1))
    }

    func testACueOneNodeDoesNotHold_waitsTheEditLead() async throws {
        let (_, cues) = try await playingWall()
        nodes[0].cuesReady = ["intro"]

        let master = FakeNode.master()
        let (timeline, held) = try await cues.perform(.cue("intro"), lead: .zero)

        XCTAssertNil(held, "node b does not hold it")
        XCTAssertGreaterThanOrEqual(try lead(of: timeline, sentAt: master), TimelineControl.minimumEditLead)
        for node in nodes { XCTAssertEqual(node.timeline, timeline, "node \(node.id)") }
    }

    func testACueNotKeptInStandby_waitsTheEditLead_evenWhereNodesSayTheyHoldIt() async throws {
        let (_, cues) = try await playingWall()
        for node in nodes { node.cuesReady = ["hold"] }

        let master = FakeNode.master()
        let (timeline, held) = try await cues.perform(.cue("hold"), lead: .zero)

        XCTAssertNil(held)
        XCTAssertGreaterThanOrEqual(try lead(of: timeline, sentAt: master), TimelineControl.minimumEditLead)
    }

    func testAnUnknownCue_isNamedWithTheKnownOnes_andNothingIsSent() async throws {
        let (_, cues) = try await playingWall()

        do {
            try await cues.perform(.cue("nowhere"), lead: .zero)
            XCTFail("an unknown cue was carried out")
        } catch {
            XCTAssertTrue("\(error)".contains("nowhere") && "\(error)".contains("intro"), "\(error)")
        }
        for node in nodes { XCTAssertEqual(node.received.count, 1, "node \(node.id): only the play") }
    }

    func testATransportCommand_isTheVerbTheCommandLineAndConsoleCarryOut() async throws {
        XCTAssertNil(WallVerb(ShowCommand.cue("intro")))
        XCTAssertEqual(WallVerb(ShowCommand.black), .black)
        let (_, cues) = try await playingWall()

        let (timeline, held) = try await cues.perform(.pause, lead: .zero)

        XCTAssertNil(held)
        let paused = try XCTUnwrap(timeline.segments.last)
        XCTAssertFalse(paused.isPlaying, "paused from the edit's time on")
        for node in nodes { XCTAssertEqual(node.timeline, timeline, "node \(node.id)") }
    }
}
