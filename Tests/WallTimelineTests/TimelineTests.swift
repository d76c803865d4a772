import Foundation
import LockstepTime
import WallTimeline
import XCTest

final class TimelineTests: XCTestCase {
    private func seconds(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1) }
    private func ms(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1000) }

    private let start = MediaTime(value: 5_000_000_000_000, timescale: 1_000_000_000)  // master time 5000 s

    private func loop(_ length: MediaTime = MediaTime(value: 10, timescale: 1)) throws -> Timeline {
        try Timeline(
            wall: "w", epoch: 7,
            playlist: Playlist(entries: [TimelineEntry(media: "a.mp4", outPoint: length, repeats: .forever)]),
            start: start)
    }

    func testPosition_beforeTheStart_waitsOnTheFirstFrame() throws {
        let position = try loop().position(at: start - seconds(3))
        XCTAssertEqual(position.state, .waiting)
        XCTAssertEqual(position.itemTime, .zero)
        XCTAssertEqual(position.passStart, start)
    }

    func testPosition_aMillionLoopsIn_landsOnTheExactFrame() throws {
        let timeline = try loop()
        let frame = MediaTime(value: 1, timescale: 25)
        let hostTime = start + seconds(10 * 1_000_000) + frame * 7
        let position = timeline.position(at: hostTime)
        XCTAssertEqual(position.state, .playing)
        XCTAssertEqual(position.pass, 1_000_000)
        XCTAssertEqual(position.itemTime, frame * 7)
        // A frame duration no nanosecond count holds (NTSC): host times are whole nanoseconds, so
        // the item time is the frame's start to within a nanosecond, and the frame is the same.
        let ntscFrame = MediaTime(value: 1001, timescale: 30_000)
        let ntscHostTime = start + seconds(10 * 1_000_000) + MediaTime(value: 233_566_667, timescale: 1_000_000_000)
        let ntsc = timeline.position(at: ntscHostTime)
        XCTAssertEqual(ntsc.pass, 1_000_000)
        XCTAssertEqual((ntsc.itemTime.seconds / ntscFrame.seconds).rounded(.down), 7)
        XCTAssertLessThan(abs((ntsc.itemTime - ntscFrame * 7).seconds), 1e-9)
        XCTAssertEqual(position.passStart, start + seconds(10 * 1_000_000))
        XCTAssertEqual(position.passEnd, start + seconds(10 * 1_000_001))
    }

    func testPosition_withNTSCDurations_staysExactOverManyPasses() throws {
        // A 10.01 s clip (300 frames at 30000/1001): boundaries never drift from n * 10.01 s.
        let length = MediaTime(value: 300 * 1001, timescale: 30_000)
        let timeline = try loop(length)
        for pass: Int64 in [1, 999, 123_457] {
            let position = timeline.position(at: start + length * pass)
            XCTAssertEqual(position.pass, Int(pass))
            XCTAssertEqual(position.itemTime, .zero, "pass \(pass) starts exactly on its first frame")
        }
    }

    func testPlaylist_changesEntryAtTheTimelinesDurations_andLoops() throws {
        let playlist = Playlist(entries: [
            TimelineEntry(media: "a.mp4", outPoint: seconds(4), repeats: .times(2)),
            TimelineEntry(media: "b-{id}.mp4", inPoint: seconds(1), outPoint: ms(3500)),
            TimelineEntry(media: "c.mp4", outPoint: ms(7300)),
        ])
        let timeline = try Timeline(wall: "w", epoch: 1, playlist: playlist, start: start)
        // a: 0–4, 4–8; b: 8–10.5 (media 1–3.5); c: 10.5–17.8; then a again at 17.8.
        var position = timeline.position(at: start + ms(4500))
        XCTAssertEqual([position.entryIndex, position.pass], [0, 1])
        XCTAssertEqual(position.itemTime, ms(500))
        position = timeline.position(at: start + seconds(9))
        XCTAssertEqual(position.entryIndex, 1)
        XCTAssertEqual(position.itemTime, seconds(2), "in-point 1 s plus 1 s into the pass")
        XCTAssertEqual(position.entry.media(forNode: "left"), "b-left.mp4")
        XCTAssertEqual(position.passEnd, start + ms(10_500))
        position = timeline.position(at: start + ms(10_500))
        XCTAssertEqual([position.entryIndex, position.pass], [2, 0])
        XCTAssertEqual(position.itemTime, .zero)
        position = timeline.position(at: start + ms(17_800) * 3 + ms(100))
        XCTAssertEqual(position.cycle, 3)
        XCTAssertEqual(position.entryIndex, 0)
        XCTAssertEqual(position.itemTime, ms(100))
        XCTAssertEqual(position.passStart, start + ms(17_800) * 3)
    }

    func testPlaylist_thatDoesNotLoop_endsOnItsLastFrame() throws {
        let playlist = Playlist(entries: [TimelineEntry(media: "a.mp4", outPoint: seconds(4))], loops: false)
        let timeline = try Timeline(wall: "w", epoch: 1, playlist: playlist, start: start)
        let position = timeline.position(at: start + seconds(60))
        XCTAssertEqual(position.state, .ended)
        XCTAssertEqual(position.itemTime, seconds(4))
        XCTAssertNil(position.passEnd)
        XCTAssertThrowsError(try timeline.applying(.next, at: start + seconds(61))) { error in
            XCTAssertEqual(error as? TimelineError, .playlistEnded)
        }
    }

    func testPauseResume_freezesOnTheFrameAndContinuesFromIt() throws {
        let paused = try loop().applying(.pause, at: start + ms(12_250))
        XCTAssertEqual(paused.version, 2)
        var position = paused.position(at: start + seconds(100))
        XCTAssertEqual(position.state, .paused)
        XCTAssertEqual(position.itemTime, ms(2250))
        XCTAssertEqual(paused.position(at: start + ms(12_000)).state, .playing, "before the pause takes effect")
        let resumed = try paused.applying(.resume, at: start + seconds(100))
        position = resumed.position(at: start + seconds(101))
        XCTAssertEqual(position.state, .playing)
        XCTAssertEqual(position.itemTime, ms(3250))
        XCTAssertEqual(resumed.version, 3)
    }

    func testSeekRateNextPreviousGoTo() throws {
        let playlist = Playlist(entries: [
            TimelineEntry(media: "a.mp4", outPoint: seconds(4)), TimelineEntry(media: "b.mp4", outPoint: seconds(6)),
            TimelineEntry(media: "c.mp4", outPoint: seconds(8)),
        ])
        let base = try Timeline(wall: "w", epoch: 1, playlist: playlist, start: start)
        let seeked = try base.applying(.seek(entry: 2, itemTime: seconds(5)), at: start + seconds(1))
        XCTAssertEqual(seeked.position(at: start + seconds(2)).itemTime, seconds(6))
        XCTAssertEqual(seeked.position(at: start + seconds(2)).entryIndex, 2)
        XCTAssertEqual(seeked.position(at: start + seconds(4)).entryIndex, 0, "c ends and the playlist loops")

        let doubled = try base.applying(.rate(PlaybackRate(2)), at: start + seconds(1))
        XCTAssertEqual(doubled.position(at: start + seconds(2)).itemTime, seconds(3))
        XCTAssertEqual(doubled.position(at: start + seconds(2)).passEnd, start + ms(2500))
        let halved = try base.applying(.rate(PlaybackRate(1, 2)), at: start)
        XCTAssertEqual(halved.position(at: start + seconds(3)).itemTime, ms(1500))

        XCTAssertEqual(try base.applying(.next, at: start + seconds(1)).position(at: start + seconds(1)).entryIndex, 1)
        XCTAssertEqual(
            try base.applying(.previous, at: start + seconds(1)).position(at: start + seconds(1)).entryIndex, 2,
            "before the first is the last, in a looping playlist")
        let jumped = try base.applying(.goTo(entry: 1), at: start + seconds(1))
        XCTAssertEqual(jumped.position(at: start + seconds(2)).itemTime, seconds(1))
        XCTAssertThrowsError(try base.applying(.goTo(entry: 3), at: start)) { error in
            XCTAssertEqual("\(error)", "there is no entry 3: the playlist has 3 (0 to 2)")
        }
        XCTAssertThrowsError(try base.applying(.seek(entry: 0, itemTime: seconds(4)), at: start))
        XCTAssertThrowsError(try base.applying(.rate(PlaybackRate(0)), at: start))
        XCTAssertThrowsError(try base.applying(.rate(PlaybackRate(1000)), at: start))
    }

    /// At a rate other than 1 a pass's end may fall between two nanoseconds: `passEnd` is the first
    /// one on the next pass. (Rounded down, it was the last one on this pass, and a node anchoring
    /// the next pass there at rate 2 started 1 ns before the item's end, presented nothing more and
    /// rejoined 1.5 s later: 8 times in a chaos hour.)
    func testPassEnd_atRateTwo_isOnTheNextPass_evenBetweenNanoseconds() throws {
        let base = try loop(seconds(5))
        for odd in [1, 3, 135, 4_063_775_135] as [Int64] {
            let at = start + MediaTime(value: odd, timescale: 1_000_000_000)
            let doubled = try base.applying(.rate(PlaybackRate(2)), at: at)
            let position = doubled.position(at: at)
            let end = try XCTUnwrap(position.passEnd)
            let next = doubled.position(at: end)
            XCTAssertEqual(next.pass, position.pass + 1, "from \(odd) ns: the pass after")
            XCTAssertLessThan(next.itemTime, MediaTime(value: 2, timescale: 1_000_000_000), "from \(odd) ns: its start")
            let before = doubled.position(at: end - MediaTime(value: 1, timescale: 1_000_000_000))
            XCTAssertEqual(before.pass, position.pass, "from \(odd) ns: a nanosecond before is still this pass")
        }
    }

    func testEdits_theLatestSupersedesWhatWasScheduledFromItsTimeOn() throws {
        let timeline = try loop()
        let pausedLater = try timeline.applying(.pause, at: start + seconds(20))
        let resumedEarlier = try pausedLater.applying(.resume, at: start + seconds(10))
        XCTAssertEqual(resumedEarlier.segments.count, 2, "the pause scheduled later is superseded")
        XCTAssertEqual(resumedEarlier.position(at: start + seconds(21)).state, .playing)
        let seekAtSameTime = try pausedLater.applying(.seek(entry: 0, itemTime: seconds(1)), at: start + seconds(20))
        XCTAssertEqual(seekAtSameTime.segments.count, 2, "the pause scheduled then is superseded")
        XCTAssertEqual(seekAtSameTime.position(at: start + seconds(21)).state, .playing)
    }

    func testStopStillBlack_showInPlaceOfThePlaylist_andResumeFromWhereItWas() throws {
        let stopped = try loop().applying(.stop, at: start + ms(3500))
        var position = stopped.position(at: start + seconds(30))
        XCTAssertEqual(position.state, .stopped)
        XCTAssertEqual(position.show, .stopped)
        XCTAssertEqual(position.itemTime, ms(3500), "the playlist waits where it was")
        XCTAssertNil(position.passEnd)
        let still = try stopped.applying(.still(image: "poster.png"), at: start + seconds(31))
        XCTAssertEqual(still.position(at: start + seconds(32)).state, .still)
        XCTAssertEqual(still.position(at: start + seconds(32)).show, .still(image: "poster.png"))
        let black = try still.applying(.black, at: start + seconds(33))
        XCTAssertEqual(black.position(at: start + seconds(34)).show, .black)
        let resumed = try black.applying(.resume, at: start + seconds(40))
        position = resumed.position(at: start + seconds(41))
        XCTAssertEqual(position.state, .playing)
        XCTAssertEqual(position.itemTime, ms(4500))
        XCTAssertThrowsError(try black.applying(.still(image: ""), at: start + seconds(41)))
    }

    func testIdentify_showsTheTestCardForItsDuration_thenWhatWasOnFromWhereItWas() throws {
        let playing = try loop()
        let identified = try playing.applying(.identify(duration: seconds(10)), at: start + seconds(2))
        XCTAssertEqual(identified.version, 2)
        XCTAssertEqual(identified.position(at: start + seconds(5)).state, .testCard)
        let after = identified.position(at: start + seconds(13))
        XCTAssertEqual(after.state, .playing, "the show goes on after the card")
        XCTAssertEqual(after.itemTime, seconds(3), "from where the card interrupted it")
        // A card over a card restores what was on before the first.
        let paused = try playing.applying(.pause, at: start + seconds(1))
        let twice = try paused.applying(.identify(duration: seconds(5)), at: start + seconds(2))
            .applying(.identify(duration: seconds(5)), at: start + seconds(4))
        XCTAssertEqual(twice.position(at: start + seconds(6)).state, .testCard)
        XCTAssertEqual(twice.position(at: start + seconds(10)).state, .paused)
        XCTAssertEqual(twice.position(at: start + seconds(10)).itemTime, seconds(1))
        // A command during the card supersedes its end.
        let stopped = try identified.applying(.stop, at: start + seconds(4))
        XCTAssertEqual(stopped.position(at: start + seconds(20)).state, .stopped)
        XCTAssertThrowsError(try playing.applying(.identify(duration: .zero), at: start))
        XCTAssertThrowsError(try playing.applying(.identify(duration: seconds(601)), at: start))
    }

    func testStoredTimelinesWithoutShows_readAsThePlaylist() throws {
        let timeline = try loop()
        var object = try XCTUnwrap(JSONSerialization.jsonObject(with: JSONEncoder().encode(timeline)) as? [String: Any])
        var segments = try XCTUnwrap(object["segments"] as? [[String: Any]])
        segments[0].removeValue(forKey: "show")
        object["segments"] = segments
        let decoded = try JSONDecoder().decode(Timeline.self, from: JSONSerialization.data(withJSONObject: object))
        XCTAssertEqual(decoded, timeline)
    }

    func testAnEdit_supersedesWhatItEdits_andNotTheOtherWayRound() throws {
        let timeline = try loop()
        let edited = try timeline.applying(.pause, at: start)
        XCTAssertTrue(edited.supersedes(timeline))
        XCTAssertFalse(timeline.supersedes(edited))
        XCTAssertFalse(timeline.supersedes(timeline))
    }

    func testTimeline_roundTripsThroughJSON_andForgetsOldSegments() throws {
        var timeline = try loop().applying(.pause, at: start + seconds(5)).applying(.resume, at: start + seconds(8))
        let decoded = try JSONDecoder().decode(Timeline.self, from: JSONEncoder().encode(timeline))
        XCTAssertEqual(decoded, timeline)
        let before = timeline.position(at: start + seconds(30))
        timeline.forget(before: start + seconds(9))
        XCTAssertEqual(timeline.segments.count, 1)
        XCTAssertEqual(timeline.position(at: start + seconds(30)), before)
    }

    func testInvalidPlaylists_nameTheEntry() {
        XCTAssertThrowsError(try Timeline(wall: "w", epoch: 1, playlist: Playlist(entries: []), start: start))
        let backwards = Playlist(entries: [TimelineEntry(media: "a", inPoint: seconds(3), outPoint: seconds(2))])
        XCTAssertThrowsError(try Timeline(wall: "w", epoch: 1, playlist: backwards, start: start)) { error in
            XCTAssertEqual("\(error)", "playlist entry 0: its out-point 2.0 s is not after its in-point 3.0 s")
        }
        let never = Playlist(entries: [TimelineEntry(media: "a", outPoint: seconds(2), repeats: .times(0))])
        XCTAssertThrowsError(try Timeline(wall: "w", epoch: 1, playlist: never, start: start))
        XCTAssertThrowsError(try Timeline(wall: "w", epoch: 1, playlist: Playlist(entries: []), start: .invalid))
    }

    func testValidate_refusesWhatNoNodeCouldFollow() throws {
        let timeline = try loop()
        XCTAssertNoThrow(try timeline.validate())
        let paused = try timeline.applying(.pause, at: start + seconds(3))
        XCTAssertNoThrow(try paused.validate())
        var data = try JSONEncoder().encode(paused)
        var text = String(decoding: data, as: UTF8.self)
        // The second segment moved before the first: out of order.
        text = text.replacingOccurrences(of: "\"value\":5003000000000", with: "\"value\":4000000000000")
        data = Data(text.utf8)
        let decoded = try JSONDecoder().decode(Timeline.self, from: data)
        XCTAssertThrowsError(try decoded.validate()) { error in
            XCTAssertEqual(error as? TimelineError, .segmentsOutOfOrder(at: MediaTime(value: 4000, timescale: 1)))
        }
    }

    func testReverseRates_areRefusedNamingTheRate() throws {
        for rate in [PlaybackRate(-1), PlaybackRate(-1, 2)] {
            XCTAssertThrowsError(try loop().applying(.rate(rate), at: start + seconds(1))) { error in
                XCTAssertEqual(error as? TimelineError, .reverseRate(rate))
                XCTAssertTrue("\(error)".hasPrefix("rate \(rate) plays backwards"), "\(error)")
            }
        }
        XCTAssertNoThrow(try loop().applying(.rate(PlaybackRate(1, 2)), at: start + seconds(1)))
    }

    func testReanchored_onANewEpoch_holdsWhatWasLastScheduledFromZero() throws {
        let timeline = try loop().applying(.seek(entry: 0, itemTime: seconds(4)), at: start + seconds(1))
        let moved = try timeline.reanchored(onto: 9)
        XCTAssertEqual(moved.epoch, 9)
        XCTAssertEqual(moved.version, timeline.version + 1)
        XCTAssertEqual(moved.start, .zero)
        XCTAssertEqual(moved.position(at: seconds(2)).itemTime, seconds(6), "from the seek's point at master zero")
        XCTAssertEqual(moved, try timeline.reanchored(onto: 9), "every node computes the same")
        XCTAssertNoThrow(try moved.validate())
    }
}
