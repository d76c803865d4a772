import LockstepNet
import LockstepTime
import WallProtocol
import WallTimeline
import XCTest

@testable import NodeService

/// Proof of play's state machine in simulated time: sampled every 100 ms (late by up to 90 ms, as a
/// busy node's would be), with a frame presented every 1/30 s while a clip plays.
final class PlayTrackerTests: XCTestCase {
    private let clipA = TimelineEntry(media: "/m/a.mp4", outPoint: seconds(2))
    private let clipB = TimelineEntry(media: "/m/b-{id}.mp4", inPoint: seconds(1), outPoint: seconds(4))

    private static func seconds(_ value: Double) -> MediaTime { MediaTime(nanoseconds: Int64(value * 1e9)) }
    private func seconds(_ value: Double) -> MediaTime { Self.seconds(value) }

    /// Samples `timelines` (each from its time on) from `from` to `to`; returns the plays ended and
    /// the tracker.
    private func run(
        _ timelines: [(from: Double, timeline: Timeline)], from: Double, to: Double, still: String? = nil,
        framesWhile: (Double, Timeline) -> Bool = { time, timeline in
            timeline.position(at: seconds(time)).state == .playing
        }
    ) -> (ended: [PlayTracker.Ended], tracker: PlayTracker) {
        var tracker = PlayTracker(node: "n1", betweenShowsStill: still)
        var ended: [PlayTracker.Ended] = []
        var generator = SplitMix64(seed: 7)
        var time = from
        var lastFrame = from
        while time < to {
            let late = Double(generator.next() % 90) / 1000
            let now = time + late
            let timeline = timelines.last { $0.from <= now }?.timeline
            var frames: [MediaTime] = []
            var frame = (lastFrame * 30).rounded(.up) / 30
            while frame < now {
                if let timeline, framesWhile(frame, timeline) { frames.append(seconds(frame)) }
                frame += 1.0 / 30
            }
            lastFrame = now
            if let play = tracker.observe(
                .init(now: seconds(now), timeline: timeline, frameTimes: frames, pictureShown: true))
            {
                ended.append(play)
            }
            time += 0.1
        }
        return (ended, tracker)
    }

    private func looping(start: Double) throws -> Timeline {
        try Timeline(wall: "w", epoch: 1, playlist: Playlist(entries: [clipA, clipB]), start: seconds(start))
    }

    func testALoop_givesAPlayAPass_atTheTimelinesEdges_withItsFrames() throws {
        let (ended, tracker) = run([(0, try looping(start: 10))], from: 9, to: 19.5)
        XCTAssertEqual(ended.map(\.play.media), ["/m/a.mp4", "/m/b-n1.mp4", "/m/a.mp4"])
        XCTAssertEqual(ended.map(\.play.from), [seconds(10), seconds(12), seconds(15)])
        XCTAssertEqual(ended.map(\.to), [seconds(12), seconds(15), seconds(17)])
        XCTAssertEqual(ended.map(\.ending), [.end, .end, .end])
        XCTAssertEqual(ended.map(\.play.frames), [60, 90, 60])
        XCTAssertEqual(ended.map(\.play.mediaFrom), [.zero, seconds(1), .zero])
        XCTAssertEqual(ended[1].play.mediaTime(at: ended[1].to), seconds(4))
        XCTAssertEqual(ended.map(\.play.pass), [0, 0, 0])
        XCTAssertEqual(tracker.current?.from, seconds(17))
    }

    func testACueCut_endsThePlayAtItsTime_interrupted_andTheReturnIsAPlayOfItsOwn() throws {
        let loop = try looping(start: 10)
        let cue = Cue(
            target: .playlist(
                Playlist(entries: [TimelineEntry(media: "/m/c.mp4", inPoint: seconds(5), outPoint: seconds(7))])),
            after: .return)
        let cued = try loop.applying(.cue(name: "intro", cue), at: seconds(11.05))
        let (ended, _) = run([(0, loop), (11.0, cued)], from: 9, to: 16)
        XCTAssertEqual(ended.map(\.play.media), ["/m/a.mp4", "/m/c.mp4", "/m/a.mp4"])
        XCTAssertEqual(ended[0].to, seconds(11.05))
        XCTAssertEqual(ended[0].ending, .cut)
        XCTAssertEqual(ended[0].play.mediaTime(at: ended[0].to), seconds(1.05))
        XCTAssertEqual(ended[1].play.cue, "intro")
        XCTAssertEqual(ended[1].play.from, seconds(11.05))
        XCTAssertEqual(ended[1].to, seconds(13.05))
        XCTAssertEqual(ended[1].ending, .end)
        XCTAssertEqual(ended[1].play.mediaFrom, seconds(5))
        // The playlist returns where the cue interrupted it: the rest of the pass, a play of its own.
        XCTAssertEqual(ended[2].play.from, seconds(13.05))
        XCTAssertEqual(ended[2].play.mediaFrom, seconds(1.05))
        XCTAssertEqual(ended[2].to, seconds(14))
        XCTAssertEqual(ended[2].ending, .end)
        XCTAssertNil(ended[2].play.cue)
    }

    func testAPause_endsThePlayPaused_andTheResumeStartsAnother() throws {
        let loop = try looping(start: 10)
        let paused = try loop.applying(.pause, at: seconds(10.5))
        let resumed = try paused.applying(.resume, at: seconds(12))
        let (ended, tracker) = run([(0, loop), (10.4, paused), (11.9, resumed)], from: 9, to: 13)
        XCTAssertEqual(ended.count, 1)
        XCTAssertEqual(ended[0].to, seconds(10.5))
        XCTAssertEqual(ended[0].ending, .paused)
        XCTAssertEqual(ended[0].play.frames, 15)
        XCTAssertEqual(tracker.current?.from, seconds(12))
        XCTAssertEqual(tracker.current?.mediaFrom, seconds(0.5))
    }

    func testStills_arePlays_blackIsNot() throws {
        let loop = try looping(start: 10)
        let still = try loop.applying(.still(image: "/m/poster.png"), at: seconds(11))
        let black = try still.applying(.black, at: seconds(13))
        let stopped = try black.applying(.stop, at: seconds(14))
        let (ended, tracker) = run(
            [(0, loop), (10.9, still), (12.9, black), (13.9, stopped)], from: 9, to: 15, still: "/m/between.png")
        XCTAssertEqual(ended.map(\.play.media), ["/m/a.mp4", "/m/poster.png"])
        XCTAssertEqual(ended.map(\.play.kind), [.clip, .still])
        XCTAssertEqual(ended[1].play.from, seconds(11))
        XCTAssertEqual(ended[1].to, seconds(13))
        XCTAssertTrue(ended[1].play.shown)
        XCTAssertEqual(tracker.current?.media, "/m/between.png")
        XCTAssertEqual(tracker.current?.from, seconds(14))
    }

    func testAPlayTheScreenDidNotPresent_countsNoFrames() throws {
        let (ended, _) = run([(0, try looping(start: 10))], from: 9, to: 12.5, framesWhile: { _, _ in false })
        XCTAssertEqual(ended.first?.play.frames, 0)
    }

    func testANodeThatStartsMidPass_claimsNothingBeforeItsFirstSample_andItsStopEndsThePlay() throws {
        var (_, tracker) = run([(0, try looping(start: 10))], from: 11, to: 11.5)
        let first = try XCTUnwrap(tracker.current)
        XCTAssertGreaterThanOrEqual(first.from, seconds(11))
        XCTAssertLessThan(first.from, seconds(11.1))
        XCTAssertEqual(first.mediaFrom, first.from - seconds(10))
        let stopped = try XCTUnwrap(tracker.stop(at: seconds(11.5)))
        XCTAssertEqual(stopped.ending, .nodeStopped)
        XCTAssertEqual(stopped.to, seconds(11.5))
        XCTAssertNil(tracker.current)
    }

    func testAtHalfRate_mediaTimeRunsAtHalfTheSpeed() throws {
        let loop = try looping(start: 10).applying(.rate(PlaybackRate(1, 2)), at: seconds(10))
        let (ended, _) = run([(0, loop)], from: 9, to: 14.5)
        XCTAssertEqual(ended.first?.to, seconds(14))
        XCTAssertEqual(ended.first.map { $0.play.mediaTime(at: $0.to) }, seconds(2))
    }
}
