import LockstepTime
import WallFollower
import WallTimeline
import XCTest

/// Transitions of the follower one event at a time: what goes in, what comes out.
final class FollowerStateMachineTests: XCTestCase {
    private func seconds(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1) }
    private func ms(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1000) }

    private func timeline(start: MediaTime = MediaTime(value: 10, timescale: 1), loops: Bool = true) throws -> Timeline
    {
        try Timeline(
            wall: "w", epoch: 1,
            playlist: Playlist(
                entries: [
                    TimelineEntry(media: "a-{id}.mp4", outPoint: MediaTime(value: 4, timescale: 1)),
                    TimelineEntry(media: "b.mp4", outPoint: MediaTime(value: 2, timescale: 1)),
                ], loops: loops),
            start: start)
    }

    private func observe(
        _ now: MediaTime, epoch: UInt64 = 1, frame: FrameSample? = nil, queued: Int = 0, paused: Bool = true
    )
        -> FollowerObservation
    {
        FollowerObservation(
            clock: .usable(now: now, epoch: epoch), latestFrame: frame, queuedPasses: queued, playerPaused: paused)
    }

    /// A machine that has had its clock usable long enough to act.
    private func settled(_ machine: inout FollowerStateMachine, at now: MediaTime) -> [FollowerAction] {
        _ = machine.tick(observe(now - seconds(1)))
        return machine.tick(observe(now))
    }

    private func preparations(_ actions: [FollowerAction]) -> [Preparation] {
        actions.compactMap { if case .prepare(let preparation) = $0 { return preparation } else { return nil } }
    }

    func testNothingHappens_untilTheClockHasBeenUsableForItsSettlingTime() throws {
        var machine = FollowerStateMachine(wall: "w")
        machine.adopt(try timeline(), now: nil)
        XCTAssertEqual(
            machine.tick(
                FollowerObservation(
                    clock: .unusable(state: "locking"), latestFrame: nil, queuedPasses: 0, playerPaused: true)), [])
        XCTAssertEqual(machine.report(now: nil)?.problem, "waiting for the master clock to lock (locking)")
        XCTAssertEqual(machine.tick(observe(seconds(5))), [])
        XCTAssertEqual(machine.tick(observe(seconds(5) + ms(400))), [], "still settling")
        XCTAssertEqual(preparations(machine.tick(observe(seconds(5) + ms(600)))).count, 1)
    }

    func testAnAnchorBeforeTheStart_preparesTheFirstPassAndItsSuccessor_andStartsAtTheStart() throws {
        var machine = FollowerStateMachine(wall: "w")
        machine.adopt(try timeline(), now: nil)
        let actions = settled(&machine, at: seconds(9))
        let preparation = try XCTUnwrap(preparations(actions).first)
        XCTAssertEqual(preparation.passes.map(\.media), ["a-{id}.mp4", "b.mp4"])
        XCTAssertEqual(preparation.passes[0].start, .zero)
        XCTAssertNil(preparation.hold)
        XCTAssertTrue(preparation.renewPipeline, "the first anchor starts on a new pipeline")
        XCTAssertEqual(machine.activity, "preparing")
        XCTAssertEqual(machine.tick(observe(seconds(9) + ms(40))), [], "nothing more while it prepares")
        let started = machine.prepared(preparation.id, outcome: .ready, now: seconds(9) + ms(200))
        XCTAssertEqual(started.first, .start(rate: .normal, itemTime: .zero, presentAt: seconds(10)))
        XCTAssertEqual(machine.activity, "following (playing)")
        XCTAssertEqual(machine.lead, ms(550), "twice what it took, plus 150 ms")
    }

    func testAPreparationReadyTooLate_triesAgainAsFarAheadAsItNeeded() throws {
        var machine = FollowerStateMachine(wall: "w")
        machine.adopt(try timeline(start: .zero), now: nil)
        let preparation = try XCTUnwrap(preparations(settled(&machine, at: seconds(20))).first)
        let late = machine.prepared(preparation.id, outcome: .ready, now: seconds(21))
        XCTAssertEqual(
            late, [.note(.readyTooLate(lateBy: ms(400), newLead: ms(2150)))], "twice the second it took, plus 150 ms")
        XCTAssertEqual(machine.activity, "idle")
        let again = try XCTUnwrap(preparations(machine.tick(observe(seconds(21)))).first)
        XCTAssertFalse(again.renewPipeline)
        XCTAssertEqual(
            machine.prepared(again.id, outcome: .ready, now: seconds(22)).first,
            .start(rate: .normal, itemTime: seconds(1) + ms(150), presentAt: seconds(23) + ms(150)),
            "ready in time: it starts where the wall is then")
    }

    /// A process stopped (SIGSTOP, a paused machine) for 7.1 s of a preparation that took 7.3 s:
    /// the preparation took 200 ms, and the next try is that far ahead, not the 4 s maximum (a
    /// stop during a preparation left a node 4 s out of step, where any other stop cost 0.1 s).
    func testAPreparationThatSpannedAStop_isAsLongAsItsOwnTime_andTheNextTryIsSoon() throws {
        var machine = FollowerStateMachine(wall: "w")
        machine.adopt(try timeline(start: .zero), now: nil)
        let preparation = try XCTUnwrap(preparations(settled(&machine, at: seconds(20))).first)
        let late = machine.prepared(
            preparation.id, outcome: .ready, now: seconds(27) + ms(300), stoodStill: seconds(7) + ms(100))
        XCTAssertEqual(late, [.note(.readyTooLate(lateBy: ms(6700), newLead: ms(550)))], "twice 200 ms, plus 150 ms")
        let again = try XCTUnwrap(preparations(machine.tick(observe(seconds(27) + ms(300)))).first)
        XCTAssertEqual(
            machine.prepared(again.id, outcome: .ready, now: seconds(27) + ms(500)).first,
            .start(rate: .normal, itemTime: seconds(3) + ms(850), presentAt: seconds(27) + ms(850)),
            "back in step 550 ms after it woke")
    }

    func testAStartReadyJustAfterItsTime_startsThenAnyway_andSaysHowLate() throws {
        var machine = FollowerStateMachine(wall: "w")
        machine.adopt(try timeline(start: .zero), now: nil)
        let preparation = try XCTUnwrap(preparations(settled(&machine, at: seconds(20))).first)
        // Ready 10 ms after its time (a cut held in standby on a busy machine): it starts at its
        // time, its first frame 10 ms late, rather than a lead later.
        let late = machine.prepared(preparation.id, outcome: .ready, now: seconds(20) + ms(610))
        XCTAssertEqual(
            late.first, .start(rate: .normal, itemTime: seconds(2) + ms(600), presentAt: seconds(20) + ms(600)))
        XCTAssertEqual(
            machine.report(now: seconds(20) + ms(610))?.lastStart?.slack, ms(-10), "what the controller learns")
    }

    func testAStartReadyWellAfterItsTime_triesAgainSoon_soAShortClipIsNotSkipped() throws {
        var machine = FollowerStateMachine(wall: "w")
        machine.adopt(try timeline(start: .zero), now: nil)
        let preparation = try XCTUnwrap(preparations(settled(&machine, at: seconds(20))).first)
        let late = machine.prepared(preparation.id, outcome: .ready, now: seconds(20) + ms(700))
        XCTAssertEqual(late, [.note(.readyTooLate(lateBy: ms(100), newLead: ms(1550)))], "twice 700 ms, plus 150 ms")
    }

    func testAFailedPreparation_backsOffForASecond_thenTriesOnANewPipeline() throws {
        var machine = FollowerStateMachine(wall: "w")
        machine.adopt(try timeline(start: .zero), now: nil)
        let preparation = try XCTUnwrap(preparations(settled(&machine, at: seconds(20))).first)
        let failed = machine.prepared(preparation.id, outcome: .failed("no such file"), now: seconds(20) + ms(100))
        XCTAssertEqual(failed, [.note(.anchorFailed("entry 0: no such file"))])
        XCTAssertEqual(machine.report(now: seconds(20))?.problem, "entry 0: no such file")
        XCTAssertEqual(machine.tick(observe(seconds(20) + ms(500))), [], "backing off")
        let again = try XCTUnwrap(preparations(machine.tick(observe(seconds(21) + ms(200)))).first)
        XCTAssertTrue(again.renewPipeline)
    }

    /// A compositor that restarted took the screen's pipeline with it: the node shows where the
    /// wall is again, on a new pipeline; a preparation under way is done again once it answers.
    func testTheOutputLost_showsTheWallAgainOnANewPipeline() throws {
        var machine = FollowerStateMachine(wall: "w")
        XCTAssertEqual(machine.outputLost("gone"), [], "nothing shown, nothing to show again")
        machine.adopt(try timeline(start: .zero), now: nil)
        let preparation = try XCTUnwrap(preparations(settled(&machine, at: seconds(20))).first)
        XCTAssertEqual(machine.outputLost("gone"), [], "a preparation under way finishes first")
        XCTAssertEqual(machine.prepared(preparation.id, outcome: .ready, now: seconds(20) + ms(100)), [])
        let again = try XCTUnwrap(preparations(machine.tick(observe(seconds(20) + ms(140)))).first)
        XCTAssertTrue(again.renewPipeline, "on a new pipeline")
        let started = machine.prepared(again.id, outcome: .ready, now: seconds(20) + ms(300))
        XCTAssertEqual(machine.activity, "following (playing)", "\(started)")
        XCTAssertEqual(
            machine.outputLost("the Wayland compositor restarted"),
            [.note(.rejoining(reason: "the Wayland compositor restarted", rejoins: 1))])
        let renewed = try XCTUnwrap(preparations(machine.tick(observe(seconds(21)))).first)
        XCTAssertTrue(renewed.renewPipeline)
    }

    func testANewTimelineDuringAPreparation_supersedesIt_andTheStaleAnswerIsIgnored() throws {
        var machine = FollowerStateMachine(wall: "w")
        let first = try timeline(start: .zero)
        machine.adopt(first, now: nil)
        let preparation = try XCTUnwrap(preparations(settled(&machine, at: seconds(20))).first)
        machine.adopt(try first.applying(.goTo(entry: 1), at: seconds(20)), now: seconds(20) + ms(50))
        XCTAssertEqual(machine.prepared(preparation.id, outcome: .ready, now: seconds(20) + ms(150)), [])
        XCTAssertEqual(machine.activity, "idle", "what it prepared is not what holds any more")
        XCTAssertEqual(machine.prepared(preparation.id, outcome: .ready, now: seconds(20) + ms(160)), [], "once")
        let next = try XCTUnwrap(preparations(machine.tick(observe(seconds(20) + ms(200)))).first)
        XCTAssertEqual(next.passes.first?.media, "b.mp4")
    }

    /// A machine playing a 6 s loop from 0 (started at 20.6 s), and the frame due at 21 s: entry
    /// a, 3 s in, shown exactly then.
    private func playingTheLoop() throws -> (FollowerStateMachine, Timeline, FrameSample) {
        var machine = FollowerStateMachine(wall: "w")
        let first = try timeline(start: .zero)
        machine.adopt(first, now: nil)
        let preparation = try XCTUnwrap(preparations(settled(&machine, at: seconds(20))).first)
        _ = machine.prepared(preparation.id, outcome: .ready, now: seconds(20) + ms(100))
        let frame = FrameSample(
            sequence: 1, presentationTimestamp: seconds(3), presentedAt: seconds(21), dueAt: seconds(21))
        return (machine, first, frame)
    }

    /// A cut prepared ahead of its time leaves the screen on the segment before it, in step: the
    /// node says so until the cut, rather than judging the old clip's frames against the new one.
    func testACutPreparedAhead_leavesTheNodeInStep_untilItsTime() throws {
        var (machine, first, frame) = try playingTheLoop()
        _ = machine.tick(observe(seconds(21), frame: frame, queued: 2, paused: false))
        XCTAssertEqual(machine.report(now: seconds(21))?.inStep, true)
        machine.adopt(try first.applying(.goTo(entry: 1), at: seconds(22)), now: seconds(21) + ms(100))
        var now = seconds(21) + ms(100)
        var cut: Preparation?
        while cut == nil, now < seconds(22) {
            now = now + ms(40)
            cut = preparations(machine.tick(observe(now, frame: frame, queued: 2, paused: false))).first
            XCTAssertEqual(machine.report(now: now)?.inStep, true, "before the cut is prepared, at \(now.seconds) s")
        }
        let prepared = try XCTUnwrap(cut, "the cut is prepared ahead")
        XCTAssertEqual(prepared.passes.first?.media, "b.mp4")
        XCTAssertEqual(machine.report(now: now)?.inStep, true, "while the cut is prepared")
        _ = machine.prepared(prepared.id, outcome: .ready, now: now + ms(50))
        XCTAssertEqual(machine.report(now: now + ms(60))?.inStep, true, "while the cut waits for its time")
    }

    /// A cut prepared for its time, then a newer timeline whose edit comes before that time (a cue
    /// 40 ms after a load's start was prepared, the load's start after the cue's cut): the cut
    /// prepared is no longer the timeline's, and the new edit is carried out at its own time.
    /// Before, the node kept the stale cut, did nothing at the edit's time, and went where the wall
    /// was once the stale cut's time had passed: 0.6 s out of step by ground truth (the seed 12
    /// hour, 2026-12-01, n2 at 2,678 s).
    func testACutPreparedAhead_thenAnEditBeforeIt_isCarriedOutAtTheEditsTime() throws {
        var (machine, first, frame) = try playingTheLoop()
        let second = try first.applying(.goTo(entry: 1), at: seconds(23))
        machine.adopt(second, now: seconds(21))
        var now = seconds(21)
        var cut: Preparation?
        while cut == nil, now < seconds(23) {
            now = now + ms(40)
            cut = preparations(machine.tick(observe(now, frame: frame, queued: 2, paused: false))).first
        }
        let prepared = try XCTUnwrap(cut, "the cut to entry b is prepared ahead")
        XCTAssertEqual(
            machine.prepared(prepared.id, outcome: .ready, now: now + ms(10)).first,
            .start(rate: .normal, itemTime: .zero, presentAt: seconds(23)))

        let editAt = now + ms(100)
        machine.adopt(try second.applying(.goTo(entry: 0), at: editAt), now: now + ms(20))
        let again = try XCTUnwrap(
            preparations(machine.tick(observe(now + ms(20), frame: frame, queued: 2, paused: false))).first,
            "the newer edit is prepared at once")
        XCTAssertEqual(again.passes.first?.media, "a-{id}.mp4")
        XCTAssertEqual(
            machine.prepared(again.id, outcome: .ready, now: now + ms(30)).first,
            .start(rate: .normal, itemTime: .zero, presentAt: editAt), "and started at the edit's time")
    }

    func testAPlayerThatPresentsNothing_rejoinsAfterTheStallLimit() throws {
        var machine = FollowerStateMachine(wall: "w")
        machine.adopt(try timeline(start: .zero), now: nil)
        let preparation = try XCTUnwrap(preparations(settled(&machine, at: seconds(20))).first)
        _ = machine.prepared(preparation.id, outcome: .ready, now: seconds(20) + ms(100))
        XCTAssertEqual(machine.tick(observe(seconds(21), queued: 2, paused: false)), [])
        let stalled = machine.tick(observe(seconds(23), queued: 2, paused: false))
        XCTAssertEqual(stalled, [.note(.rejoining(reason: "no frame presented since the start", rejoins: 1))])
        XCTAssertEqual(machine.report(now: seconds(23))?.rejoins, 1)
    }

    /// A playlist that ends holds its last frame: no frame is due after it, so presenting none is
    /// no stall (it used to rejoin 1.5 s after every held clip, redrawing the screen).
    func testAPlaylistThatEnds_holdsItsLastFrame_withoutRejoining() throws {
        var machine = FollowerStateMachine(wall: "w")
        // Entries of 4 s and 2 s, once each, from 10 s: ended at 16 s.
        machine.adopt(try timeline(start: seconds(10), loops: false), now: nil)
        let preparation = try XCTUnwrap(preparations(settled(&machine, at: seconds(9))).first)
        _ = machine.prepared(preparation.id, outcome: .ready, now: seconds(9) + ms(100))
        let frame = FrameSample(
            sequence: 180, presentationTimestamp: seconds(2) - ms(33), presentedAt: seconds(16) - ms(33),
            dueAt: seconds(16) - ms(33))
        _ = machine.tick(observe(seconds(16) - ms(20), frame: frame, queued: 1, paused: false))
        XCTAssertEqual(machine.tick(observe(seconds(16) + ms(100), frame: frame, queued: 1, paused: true)), [])
        XCTAssertEqual(machine.tick(observe(seconds(20), frame: frame, queued: 1, paused: true)), [], "no rejoin")
        XCTAssertEqual(machine.activity, "following (ended)")
        XCTAssertEqual(machine.report(now: seconds(20))?.rejoins, 0)
    }

    func testFramesOffTheTimeline_sixInARow_makeItRejoin() throws {
        var machine = FollowerStateMachine(wall: "w")
        machine.adopt(try timeline(start: .zero), now: nil)
        let preparation = try XCTUnwrap(preparations(settled(&machine, at: seconds(20))).first)
        _ = machine.prepared(preparation.id, outcome: .ready, now: seconds(20) + ms(100))
        let start = seconds(20) + ms(600)
        // Frames presented on time but 200 ms behind in the media.
        var actions: [FollowerAction] = []
        for index in 0..<6 {
            let due = start + ms(40) * Int64(index + 1)
            let frame = FrameSample(
                sequence: UInt64(index + 1), presentationTimestamp: ms(2600) + ms(40) * Int64(index + 1) - ms(200),
                presentedAt: due, dueAt: due)
            actions = machine.tick(observe(due + ms(1), frame: frame, queued: 2, paused: false))
            if index < 5 { XCTAssertEqual(machine.report(now: due)?.inStep, false) }
        }
        XCTAssertEqual(actions.last, .note(.rejoining(reason: "6 frames off the timeline by 0.2 s", rejoins: 1)))
    }

    func testAStop_putsItsShowOnAtItsTime_andAReportSaysItIsOn() throws {
        var machine = FollowerStateMachine(wall: "w")
        let stopped = try timeline(start: .zero).applying(.stop, at: seconds(30))
        machine.adopt(stopped, now: nil)
        let actions = settled(&machine, at: seconds(31))
        XCTAssertEqual(actions, [.note(.showing(version: 2, show: .stopped, at: seconds(31)))])
        XCTAssertEqual(machine.tick(observe(seconds(31) + ms(40))), [.show(.stopped, presentAt: seconds(31))])
        XCTAssertEqual(machine.report(now: seconds(32))?.settled, false, "not before the driver says it is on")
        machine.shown(.stopped)
        XCTAssertEqual(machine.report(now: seconds(32))?.settled, true)
        XCTAssertEqual(machine.report(now: seconds(32))?.position?.state, .stopped)
    }

    /// A cue over a paused wall returns to the pause: on a screen with a standby the held frame is
    /// prepared a lead ahead behind the cue's clip; on one that prepares in place, where the clip
    /// stops when the preparation begins, as late as its last held frame's preparation allows.
    /// Either way the frame is presented at its time.
    func testAHeldFrameAfterAPlayingClip_isPreparedAsLateAsItMay_onAScreenThatPreparesInPlace() throws {
        let cue = Cue(
            target: .playlist(
                Playlist(entries: [TimelineEntry(media: "cue.mp4", outPoint: seconds(2))], loops: false)),
            after: .return)
        let paused = try timeline(start: .zero).applying(.pause, at: seconds(20))
            .applying(.cue(name: "intro", cue), at: seconds(21))
        for inPlace in [false, true] {
            var machine = FollowerStateMachine(wall: "w", configuration: .init(preparesInPlace: inPlace))
            machine.adopt(paused, now: nil)
            // The pause, 20 s into a 6 s loop (2 s into entry a), held in 100 ms.
            let pause = try XCTUnwrap(preparations(settled(&machine, at: seconds(19))).first)
            XCTAssertEqual(pause.hold, seconds(2))
            _ = machine.prepared(pause.id, outcome: .ready, now: seconds(19) + ms(100))
            /// Ticks from `now` until a preparation is asked for; from 21 s the cue's frames show,
            /// each on time.
            func nextPreparation(from now: inout MediaTime, before end: MediaTime) -> Preparation? {
                while now < end {
                    now = now + ms(40)
                    let frame =
                        now < seconds(21)
                        ? nil
                        : FrameSample(
                            sequence: UInt64((now.nanoseconds ?? 0) / 1_000_000),
                            presentationTimestamp: now - seconds(21),
                            presentedAt: now, dueAt: now)
                    if let preparation = preparations(
                        machine.tick(observe(now, frame: frame, queued: 1, paused: frame == nil))
                    ).first {
                        return preparation
                    }
                }
                return nil
            }
            var now = seconds(19) + ms(100)
            // The cue's clip, started in 300 ms: a lead of 750 ms from then.
            let start = try XCTUnwrap(nextPreparation(from: &now, before: seconds(21)))
            XCTAssertNil(start.hold, "the cue's clip plays")
            now = now + ms(300)
            _ = machine.prepared(start.id, outcome: .ready, now: now)
            XCTAssertEqual(machine.lead, ms(750))
            let preparation = try XCTUnwrap(
                nextPreparation(from: &now, before: seconds(23)), "the return to the pause is prepared before its time")
            XCTAssertEqual(preparation.hold, seconds(2), "the paused frame")
            // In place: the slowest of the held frame's 100 ms and the start's 300 ms, a quarter
            // more and 120 ms.
            let ahead = seconds(23) - now
            let expected = inPlace ? ms(495) : ms(750)
            XCTAssertLessThanOrEqual(ahead, expected, "in place: \(inPlace)")
            XCTAssertGreaterThan(ahead, expected - ms(40), "in place: \(inPlace)")
            XCTAssertEqual(
                machine.prepared(preparation.id, outcome: .ready, now: now + ms(100)).first,
                .presentHeld(itemTime: seconds(2), presentAt: seconds(23)), "at its time, in place: \(inPlace)")
        }
    }

    func testAMasterOnANewEpoch_movesTheTimeline_andAsksForItToBeKept() throws {
        var machine = FollowerStateMachine(wall: "w")
        let first = try timeline(start: .zero)
        machine.adopt(first, now: nil)
        _ = machine.tick(observe(seconds(1), epoch: 7))
        let actions = machine.tick(observe(seconds(2), epoch: 7))
        let moved = try first.reanchored(onto: 7)
        XCTAssertEqual(Array(actions.prefix(2)), [.store(moved), .note(.epochMoved(epoch: 7, version: 2))])
        XCTAssertEqual(machine.timeline, moved)
    }
}
