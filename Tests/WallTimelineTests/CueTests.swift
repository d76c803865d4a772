import Foundation
import LockstepTime
import WallTimeline
import XCTest

/// Show-control cues as timeline edits: the cut at the cue's master time, and what follows it.
final class CueTests: XCTestCase {
    private func seconds(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1) }
    private func ms(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1000) }
    private let start = MediaTime(value: 5_000, timescale: 1)

    /// An attract loop of two entries (10 s and 6 s) the wall plays round and round.
    private func attractLoop() throws -> Timeline {
        try Timeline(
            wall: "w", epoch: 7,
            playlist: Playlist(entries: [
                TimelineEntry(media: "attract.mp4", outPoint: seconds(10)),
                TimelineEntry(media: "credits.mp4", outPoint: seconds(6)),
            ]),
            start: start)
    }

    private let welcome = Playlist(entries: [
        TimelineEntry(media: "welcome.mp4", outPoint: MediaTime(value: 4, timescale: 1))
    ])

    func testClipThatReturns_cutsToItsFirstFrame_thenTheLoopFromWhereItWas() throws {
        let cueAt = start + ms(12_500)  // credits, 2.5 s in
        let timeline = try attractLoop().applying(
            .cue(name: "welcome", Cue(target: .playlist(welcome), after: .return)), at: cueAt)
        let cut = timeline.position(at: cueAt)
        XCTAssertEqual(cut.entry.media, "welcome.mp4")
        XCTAssertEqual(cut.itemTime, .zero, "the clip's first frame at the cue's time")
        XCTAssertEqual(timeline.segment(at: cueAt).cue, "welcome")
        let nearEnd = timeline.position(at: cueAt + ms(3_960))
        XCTAssertEqual(nearEnd.entry.media, "welcome.mp4")
        let back = timeline.position(at: cueAt + seconds(4))
        XCTAssertEqual(back.entry.media, "credits.mp4")
        XCTAssertEqual(back.itemTime, ms(2_500), "the loop resumes where the cue interrupted it")
        XCTAssertEqual(back.state, .playing)
        XCTAssertNil(timeline.segment(at: cueAt + seconds(4)).cue)
    }

    func testCueOverACue_returnsToWhatTheFirstInterrupted() throws {
        let first = start + seconds(3)
        let second = first + seconds(2)
        let other = Playlist(entries: [TimelineEntry(media: "map.mp4", outPoint: seconds(5))])
        let timeline = try attractLoop()
            .applying(.cue(name: "welcome", Cue(target: .playlist(welcome))), at: first)
            .applying(.cue(name: "map", Cue(target: .playlist(other))), at: second)
        XCTAssertEqual(timeline.position(at: second).entry.media, "map.mp4")
        XCTAssertEqual(timeline.position(at: second).itemTime, .zero)
        XCTAssertEqual(
            timeline.position(at: first + seconds(4)).entry.media, "map.mp4",
            "the first clip's return is superseded by the second cue")
        let back = timeline.position(at: second + seconds(5))
        XCTAssertEqual(back.entry.media, "attract.mp4")
        XCTAssertEqual(back.itemTime, seconds(3), "the loop from where the first cue interrupted it")
    }

    func testForgetting_keepsWhatACueReturnsTo() throws {
        // Cues for a long while: a controller drops what no time from now on needs, but the loop
        // the first cue interrupted is still needed by the cue that returns to it.
        var timeline = try attractLoop()
        var at = start + seconds(3)
        for _ in 0..<10 {
            timeline = try timeline.applying(
                .cue(name: "welcome", Cue(target: .playlist(welcome), after: .return)), at: at)
            at = at + ms(1_200)
            timeline.forget(before: at - seconds(2))
        }
        let entry = try timeline.applying(
            .cue(name: "credits", Cue(target: .entry(index: 1, itemTime: seconds(2)), after: .next)), at: at)
        XCTAssertEqual(entry.position(at: at).entry.media, "credits.mp4", "the loop's entry, not the clip's")
        // The last clip ends 4 s after the last cue, 1.2 s before `at`.
        let back = at - ms(1_200) + seconds(4)
        XCTAssertEqual(timeline.position(at: back).entry.media, "attract.mp4")
        XCTAssertEqual(timeline.position(at: back).itemTime, seconds(3), "where the first cue interrupted it")
    }

    func testClipThatHolds_endsOnItsLastFrame() throws {
        let timeline = try attractLoop().applying(
            .cue(name: "welcome", Cue(target: .playlist(welcome), after: .hold)), at: start + seconds(1))
        let later = timeline.position(at: start + seconds(30))
        XCTAssertEqual(later.entry.media, "welcome.mp4")
        XCTAssertEqual(later.state, .ended)
    }

    func testClipThenNext_playsTheEntryAfterTheInterruptedOne() throws {
        let cueAt = start + seconds(3)  // attract, 3 s in
        let timeline = try attractLoop().applying(
            .cue(name: "welcome", Cue(target: .playlist(welcome), after: .next)), at: cueAt)
        let after = timeline.position(at: cueAt + seconds(4))
        XCTAssertEqual(after.entry.media, "credits.mp4")
        XCTAssertEqual(after.itemTime, .zero)
    }

    func testEntryCue_withNext_playsTheLoopOnFromThere_withReturn_comesBack() throws {
        let cueAt = start + seconds(3)
        let onward = try attractLoop().applying(
            .cue(name: "credits", Cue(target: .entry(index: 1, itemTime: seconds(2)), after: .next)), at: cueAt)
        XCTAssertEqual(onward.position(at: cueAt).entry.media, "credits.mp4")
        XCTAssertEqual(onward.position(at: cueAt).itemTime, seconds(2))
        XCTAssertEqual(onward.position(at: cueAt + seconds(4)).entry.media, "attract.mp4", "the loop plays on")

        let returning = try attractLoop().applying(
            .cue(name: "credits", Cue(target: .entry(index: 1, itemTime: seconds(2)), after: .return)), at: cueAt)
        let back = returning.position(at: cueAt + seconds(4))
        XCTAssertEqual(back.entry.media, "attract.mp4")
        XCTAssertEqual(back.itemTime, seconds(3))
    }

    func testStillForAWhile_thenReturns_blackWithoutDuration_holds() throws {
        let cueAt = start + seconds(1)
        let timeline = try attractLoop().applying(
            .cue(name: "logo", Cue(target: .still(image: "logo.png"), after: .return, duration: seconds(5))), at: cueAt)
        XCTAssertEqual(timeline.segment(at: cueAt).show, .still(image: "logo.png"))
        XCTAssertEqual(timeline.segment(at: cueAt + seconds(5)).show, .playlist)
        XCTAssertEqual(timeline.position(at: cueAt + seconds(5)).itemTime, seconds(1))

        let dark = try attractLoop().applying(.cue(name: "dark", Cue(target: .black)), at: cueAt)
        XCTAssertEqual(dark.segment(at: cueAt + seconds(3600)).show, .black)
    }

    func testPauseAndResumeCues_areThePlainEdits_andKeepAClipsReturn() throws {
        let cueAt = start + seconds(1)
        let timeline = try attractLoop()
            .applying(.cue(name: "welcome", Cue(target: .playlist(welcome))), at: cueAt)
            .applying(.cue(name: "hold", Cue(target: .pause)), at: cueAt + seconds(1))
        XCTAssertEqual(timeline.position(at: cueAt + seconds(9)).state, .paused)
        XCTAssertEqual(timeline.segment(at: cueAt + seconds(9)).cue, "welcome", "still the clip's")
        // A return cue over the paused clip goes back to the loop, not to the clip.
        let back = try timeline.applying(.cue(name: "map", Cue(target: .playlist(welcome))), at: cueAt + seconds(10))
        XCTAssertEqual(back.position(at: cueAt + seconds(14)).entry.media, "attract.mp4")
        XCTAssertEqual(back.position(at: cueAt + seconds(14)).itemTime, seconds(1))
    }

    /// Cue after cue, each before the last one's clip ends, as a controller sends them (forgetting
    /// what no time from its lead on needs): the timeline stays the same size, and the last cue
    /// still returns to where the first one interrupted the loop.
    func testTenThousandChainedCues_keepTheTimelineSmall_andReturnWhereTheFirstInterrupted() throws {
        var timeline = try attractLoop()
        let first = start + seconds(3)
        var at = first
        var largest = 0
        for index in 0..<10_000 {
            timeline.forget(before: at - seconds(2))
            timeline = try timeline.applying(
                .cue(name: index % 2 == 0 ? "welcome" : "map", Cue(target: .playlist(welcome))), at: at)
            largest = max(largest, try JSONEncoder().encode(timeline).count)
            at = at + ms(1_200)
        }
        XCTAssertLessThan(timeline.segments.count, 8, "segments kept")
        XCTAssertLessThan(largest, 8_000, "bytes of the largest timeline sent")
        let back = at - ms(1_200) + seconds(4)
        XCTAssertEqual(timeline.position(at: back).entry.media, "attract.mp4")
        XCTAssertEqual(timeline.position(at: back).itemTime, seconds(3), "where the first cue interrupted it")
    }

    /// The welcome clip (4 s) cued 1 s into the loop, which it returns to at 2 s of attract.
    private func welcomed(at cueAt: MediaTime) throws -> Timeline {
        try attractLoop().applying(.cue(name: "welcome", Cue(target: .playlist(welcome))), at: cueAt)
    }

    /// The wall is back on the loop, playing, at `time`, where the cue at `start + 1 s` interrupted it.
    private func assertBackOnTheLoop(_ timeline: Timeline, at time: MediaTime, _ verb: String) {
        let back = timeline.position(at: time)
        XCTAssertEqual(back.entry.media, "attract.mp4", verb)
        XCTAssertEqual(back.itemTime, seconds(1), "\(verb): where the cue interrupted it")
        XCTAssertEqual(back.state, .playing, verb)
        XCTAssertNil(timeline.segment(at: time).cue, verb)
    }

    func testARateWhileACueReturns_movesItsReturnToTheClipsNewEnd() throws {
        let cueAt = start + seconds(1)
        // 1 s of the 4 s clip at 1x, then 3 s left at 1/2: the clip ends 6 s later.
        let timeline = try welcomed(at: cueAt).applying(.rate(PlaybackRate(1, 2)), at: cueAt + seconds(1))
        XCTAssertEqual(timeline.position(at: cueAt + ms(6_900)).entry.media, "welcome.mp4")
        XCTAssertEqual(timeline.position(at: cueAt + ms(6_900)).state, .playing)
        assertBackOnTheLoop(timeline, at: cueAt + seconds(7), "rate 1/2")
        // And back to 1x: what is left plays at 1x, and the return follows it.
        let again = try timeline.applying(.rate(.normal), at: cueAt + seconds(3))
        assertBackOnTheLoop(again, at: cueAt + seconds(5), "rate 1/2 then 1")
    }

    func testAPauseThenAResumeWhileACueReturns_returnsAfterTheRestOfTheClip() throws {
        let cueAt = start + seconds(1)
        let paused = try welcomed(at: cueAt).applying(.pause, at: cueAt + seconds(1))
        XCTAssertEqual(paused.position(at: cueAt + seconds(60)).state, .paused, "no return while paused")
        XCTAssertEqual(paused.position(at: cueAt + seconds(60)).entry.media, "welcome.mp4")
        let resumed = try paused.applying(.resume, at: cueAt + seconds(10))
        XCTAssertEqual(resumed.position(at: cueAt + ms(12_900)).entry.media, "welcome.mp4")
        assertBackOnTheLoop(resumed, at: cueAt + seconds(13), "pause then resume")
    }

    /// The wall paused, a visitor's cue plays its clip, and the operator resumes during it: after the
    /// clip the loop plays on from where it was paused (it used to return to the pause, the resume
    /// lost: in the fifth chaos hour a wall stood paused for 11 minutes so).
    func testAResumeWhileACueInterruptsAPause_returnsToTheLoopPlaying() throws {
        let pausedAt = start + seconds(1)
        let cueAt = pausedAt + seconds(2)
        let paused = try attractLoop().applying(.pause, at: pausedAt)
            .applying(.cue(name: "welcome", Cue(target: .playlist(welcome))), at: cueAt)
        XCTAssertEqual(paused.position(at: cueAt + seconds(5)).state, .paused, "without a resume: back to the pause")
        XCTAssertEqual(paused.position(at: cueAt + seconds(5)).itemTime, seconds(1))
        let resumed = try paused.applying(.resume, at: cueAt + seconds(1))
        XCTAssertEqual(resumed.position(at: cueAt + ms(3_900)).entry.media, "welcome.mp4", "the clip plays on")
        let back = resumed.position(at: cueAt + seconds(5))
        XCTAssertEqual(back.entry.media, "attract.mp4")
        XCTAssertEqual(back.itemTime, seconds(2), "from where it was paused, a second after the clip's end")
        XCTAssertEqual(back.state, .playing)
    }

    func testASeekInACuesClip_keepsItsReturn_fromTheClipsNewEnd() throws {
        let cueAt = start + seconds(1)
        let timeline = try welcomed(at: cueAt).applying(.seek(entry: 0, itemTime: seconds(3)), at: cueAt + ms(500))
        XCTAssertEqual(timeline.segment(at: cueAt + ms(600)).cue, "welcome")
        assertBackOnTheLoop(timeline, at: cueAt + ms(1_500), "seek to 3 s")
    }

    func testAClipThatHolds_holdsWhateverTheVerbs() throws {
        let cueAt = start + seconds(1)
        let timeline = try attractLoop()
            .applying(.cue(name: "finale", Cue(target: .playlist(welcome), after: .hold)), at: cueAt)
            .applying(.rate(PlaybackRate(2)), at: cueAt + seconds(1))
        let end = timeline.position(at: cueAt + seconds(60))
        XCTAssertEqual(end.entry.media, "welcome.mp4")
        XCTAssertEqual(end.state, .ended)
    }

    func testBadCues_areRefusedNamingWhatIsWrong() throws {
        let timeline = try attractLoop()
        XCTAssertThrowsError(
            try timeline.applying(.cue(name: "x", Cue(target: .entry(index: 5, itemTime: nil))), at: start)
        ) { XCTAssertTrue("\($0)".contains("5"), "\($0)") }
        XCTAssertThrowsError(
            try timeline.applying(.cue(name: "x", Cue(target: .entry(index: 0, itemTime: seconds(11)))), at: start))
        XCTAssertThrowsError(try timeline.applying(.cue(name: "", Cue(target: .black)), at: start))
        let forever = Playlist(entries: [TimelineEntry(media: "a.mp4", outPoint: seconds(2), repeats: .forever)])
        XCTAssertThrowsError(try timeline.applying(.cue(name: "x", Cue(target: .playlist(forever))), at: start)) {
            XCTAssertTrue("\($0)".contains("forever"), "\($0)")
        }
        XCTAssertThrowsError(
            try timeline.applying(.cue(name: "x", Cue(target: .black, duration: seconds(-1))), at: start))
    }

    func testACueTimeline_survivesJSON() throws {
        let timeline = try attractLoop().applying(
            .cue(name: "welcome", Cue(target: .playlist(welcome))), at: start + seconds(1))
        let decoded = try JSONDecoder().decode(Timeline.self, from: JSONEncoder().encode(timeline))
        XCTAssertEqual(decoded, timeline)
        XCTAssertNoThrow(try decoded.validate())
    }
}
