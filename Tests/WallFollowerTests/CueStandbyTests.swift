import LockstepTime
import WallFollower
import WallTimeline
import XCTest

/// What a node keeps prerolled for a cue (`Timeline.cutPass`) is exactly the first pass the
/// follower asks for when the cue comes, wherever the playlist then is: a node holding it starts
/// the cut without preparing, a few frames after the edit arrives.
final class CueStandbyTests: XCTestCase {
    private func seconds(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1) }
    private func ms(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1000) }

    private func loop() throws -> Timeline {
        try Timeline(
            wall: "w", epoch: 1,
            playlist: Playlist(
                entries: [
                    TimelineEntry(media: "loop.mp4", outPoint: seconds(4)),
                    TimelineEntry(media: "b.mp4", inPoint: seconds(1), outPoint: seconds(3)),
                ], loops: true),
            start: seconds(10))
    }

    private func observe(_ now: MediaTime, queued: Int = 2, paused: Bool = false) -> FollowerObservation {
        FollowerObservation(clock: .usable(now: now, epoch: 1), latestFrame: nil, queuedPasses: queued, playerPaused: paused)
    }

    /// A machine playing `timeline` since its start.
    private func playing(_ timeline: Timeline) throws -> FollowerStateMachine {
        var machine = FollowerStateMachine(wall: "w")
        machine.adopt(timeline, now: nil)
        _ = machine.tick(observe(seconds(8)))
        let actions = machine.tick(observe(seconds(9)))
        guard case .prepare(let preparation)? = actions.first else {
            XCTFail("no preparation: \(actions)")
            return machine
        }
        _ = machine.prepared(preparation.id, outcome: .ready, now: seconds(9) + ms(100))
        return machine
    }

    func testTheHeldPass_isTheOneTheCutAsksFor_forAClipAndAnEntryCue() throws {
        let cues: [(String, Cue)] = [
            ("clip", Cue(target: .playlist(Playlist(entries: [TimelineEntry(media: "welcome.mp4", inPoint: seconds(2), outPoint: seconds(5))], loops: false)))),
            ("entry", Cue(target: .entry(index: 1, itemTime: seconds(2)), after: .next)),
            ("entry-return", Cue(target: .entry(index: 0, itemTime: nil))),
        ]
        for (name, cue) in cues {
            let timeline = try loop()
            // Held a while before the cue comes, at another point of the loop.
            let held = try XCTUnwrap(timeline.cutPass(of: cue, named: name, at: seconds(12) + ms(300)), name)
            var machine = try playing(timeline)
            let cut = seconds(17) + ms(460)
            let edited = try timeline.applying(.cue(name: name, cue), at: cut)
            machine.adopt(edited, now: cut - ms(60))
            let actions = machine.tick(observe(cut - ms(58)))
            guard case .prepare(let preparation)? = actions.first else { return XCTFail("\(name): \(actions)") }
            XCTAssertEqual(preparation.passes.first, held, name)
            XCTAssertNil(preparation.hold, name)
            let started = machine.prepared(preparation.id, outcome: .ready, now: cut - ms(57))
            XCTAssertEqual(started.first, .start(rate: .normal, itemTime: held.start, presentAt: cut), name)
        }
    }

    func testNothingIsHeld_forACueThatCutsToNoVideo_orAnEntryThePlaylistLacks() throws {
        let timeline = try loop()
        XCTAssertNil(timeline.cutPass(of: Cue(target: .black, after: .hold), named: "dark", at: seconds(12)))
        XCTAssertNil(timeline.cutPass(of: Cue(target: .still(image: "logo.png"), after: .hold), named: "logo", at: seconds(12)))
        XCTAssertNil(timeline.cutPass(of: Cue(target: .entry(index: 5, itemTime: nil)), named: "far", at: seconds(12)))
    }
}
