import Foundation
import LockstepTime
import TestSupport
import XCTest

@testable import WallPlayer

/// Items that start and end where they are told: `playbackStartTime`, `forwardPlaybackEndTime` and
/// looped time ranges, gapless and exact in running time whatever the files hold.
final class PlaybackBoundsTests: XCTestCase {
    func testQueue_changesItemAtTheirBounds_exactlyAndWithoutGaps() async throws {
        let long = try TestMedia.frameCode(seconds: 4)
        let short = try TestMedia.frameCode(seconds: 3)
        // 1.5 s of the first file, 0.5 s to 2 s of the second (which holds 3 s), all of the first.
        let first = PlayerItem(url: long)
        first.forwardPlaybackEndTime = frames(45)
        let second = PlayerItem(url: short)
        second.playbackStartTime = frames(15)
        second.forwardPlaybackEndTime = frames(60)
        let third = PlayerItem(url: long)
        let player = QueuePlayer(
            items: [first, second, third], video: Headless.video, audioSinkDescription: Headless.audio)
        try await first.waitUntilReady()
        let prerolled = await player.preroll(atRate: 1)
        XCTAssertTrue(prerolled)
        let presented = player.presentedFrames
        player.play()
        let shown = try await collect(45 + 45 + 60, from: presented, within: 20, "two items and half the third")

        // Each item's frames at the running time its bounds give: (item, first frame, running start).
        let plan: [(range: Range<Int64>, runningStart: Int64)] = [(0..<45, 0), (15..<60, 45), (0..<120, 90)]
        var item = 0
        for (index, frame) in shown.enumerated() {
            let number = frame.presentationTimestamp.convertScale(30, method: .default).value
            let running = frame.runningTime.convertScale(30, method: .default).value
            if index > 0, running == 45 || running == 90 { item += 1 }
            XCTAssertTrue(plan[item].range.contains(number), "frame \(number) shown in item \(item)")
            XCTAssertEqual(running, plan[item].runningStart + number - plan[item].range.lowerBound, "frame \(index)")
        }
        XCTAssertEqual(item, 2, "all three items were reached")
        let steps = zip(shown, shown.dropFirst()).map { ($1.runningTime - $0.runningTime).seconds }
        XCTAssertTrue(steps.allSatisfy { abs($0 - 1.0 / 30) < 0.0005 }, "running time steps: \(steps)")
    }

    func testLooper_withARange_loopsExactlyThatRange() async throws {
        let loops = try await playLoop(
            from: 10, length: 20, ofClipSeconds: 2, frames: 70, within: 15, "three and a half passes")
        XCTAssertGreaterThanOrEqual(loops, 3)
    }

    /// Every change after a bounded item used to open a race in GStreamer 1.22.0's uridecodebin3
    /// that stalled the pipeline (`GaplessHandover`): 100 passes of this stalled every time without
    /// it. Passes shorter than the pipeline reads ahead also need several queued at once (the queue
    /// player hands over more than one before the first is shown; the looper queues enough of
    /// them). Each change must come on time, one frame after the last of the pass before.
    func testLooper_withAShortRange_keepsLoopingThroughManyChanges() async throws {
        let passes = ProcessInfo.processInfo.environment["LOCKSTEP_LOOPER_PASSES"].flatMap(Int.init) ?? 40
        let loops = try await playLoop(
            from: 3, length: 6, ofClipSeconds: 1, frames: 6 * passes, within: Double(passes) * 0.2 + 15,
            "\(passes) passes of six frames")
        XCTAssertGreaterThanOrEqual(loops, passes - 1)
    }

    /// Loops frames `from..<from + length` of a frame-code clip, prerolled and played, and checks that
    /// each of the first `count` frames shown is the loop's next frame, one frame after the one
    /// before in running time. Returns the looper's pass count then.
    private func playLoop(
        from first: Int64, length: Int64, ofClipSeconds seconds: Int, frames count: Int, within limit: Double,
        _ what: String
    ) async throws -> Int {
        let player = QueuePlayer(items: [], video: Headless.video, audioSinkDescription: Headless.audio)
        let range = MediaTimeRange(start: frames(first), duration: frames(length))
        let looper = PlayerLooper(
            player: player, templateItem: PlayerItem(url: try TestMedia.frameCode(seconds: seconds)), timeRange: range)
        try await player.currentItem!.waitUntilReady()
        let prerolled = await player.preroll(atRate: 1)
        XCTAssertTrue(prerolled)
        let presented = player.presentedFrames
        player.play()
        let shown = try await collect(count, from: presented, within: limit, what)
        let loops = looper.loopCount
        for (index, frame) in shown.enumerated() {
            let number = frame.presentationTimestamp.convertScale(30, method: .default).value
            let running = frame.runningTime.convertScale(30, method: .default).value
            XCTAssertEqual(number, first + Int64(index) % length, "frame \(index) of the loop")
            XCTAssertEqual(running, Int64(index), "frame \(index) runs one frame after the one before")
        }
        return loops
    }

    func testGroupTiming_rewritesEverySegmentOfTheGroupToOneMapping() {
        let second: Int64 = 1_000_000_000
        let timing = GroupTiming(
            start: MediaTime(value: 1, timescale: 2), end: MediaTime(value: 2, timescale: 1),
            runningStart: MediaTime(value: 3, timescale: 1), rate: 1)
        // As a demuxer sends a gapless group: from zero, to the file's end, timed from its real end.
        let audio = SegmentValues(
            rate: 1, start: 21_333_333, stop: 3 * second + 21_333_333, time: 0, base: 3 * second - 7_000_000,
            position: 21_333_333, offset: 0)
        let rewritten = timing.rewrite(audio)
        XCTAssertEqual(rewritten.runningTime(of: second / 2 + 21_333_333), 3 * second, "the in-point at its running time")
        XCTAssertNil(rewritten.runningTime(of: second / 2), "before the in-point: clipped")
        XCTAssertEqual(rewritten.stop, 2 * second + 21_333_333, "clipped at the out-point")
        // A later segment of the same group (a non-flushing seek) maps item time the same way.
        var later = audio
        later.start = second + 21_333_333
        later.time = second
        later.base = 99 * second
        XCTAssertEqual(timing.rewrite(later).runningTime(of: second + 21_333_333), 3 * second + second / 2)
        XCTAssertNil(timing.followed(start: .zero, end: .indefinite)?.runningEnd)
        XCTAssertEqual(timing.followed(start: .zero, end: MediaTime(value: 1, timescale: 1))?.runningStart,
            MediaTime(value: 9, timescale: 2))
    }
}
