import Foundation
import LockstepLocks
import LockstepTime
import TestSupport
import XCTest

@testable import WallPlayer

/// A pause at a host time is a state change made by a thread woken for it; on a busy machine it
/// can come late. The frames due from the pause's time on wait at the sink meanwhile: none is
/// presented, however late the pause (at a cut, no old frame beside the new clip's first).
final class PauseGateTests: XCTestCase {
    func testAPauseWokenLate_presentsNoFrameDueAfterItsTime_andPlaybackGoesOnAfter() async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 10))
        player.automaticallyWaitsToMinimizeStalling = false
        let clock = MasterClock.host
        let frames = Mutex<[PresentedFrame]>([])
        let stream = player.presentedFrames
        let reading = Task { for await frame in stream { frames.withLock { $0.append(frame) } } }
        defer { reading.cancel() }
        try player.setRate(1, time: .zero, atHostTime: clock.now() + MediaTime(value: 1, timescale: 4))
        try await player.waitUntilTime(MediaTime(value: 1, timescale: 1))

        // The pause 200 ms ahead; its alarm then finds the player's queue busy for 150 ms.
        let pauseAt = clock.now() + MediaTime(value: 200, timescale: 1000)
        try player.setRate(0, time: .invalid, atHostTime: pauseAt)
        try await Task.sleep(for: .milliseconds(170))
        player.queue.async { Thread.sleep(forTimeInterval: 0.15) }
        try await Task.sleep(for: .milliseconds(500))
        XCTAssertEqual(player.timeControlStatus, .paused)

        let shown = frames.withLock { $0 }
        let late = shown.filter { $0.dueAt >= pauseAt }
        XCTAssertEqual(
            late.map { ($0.dueAt - pauseAt).seconds * 1000 }, [],
            "frames presented after the pause's time (ms after it)")
        let last = try XCTUnwrap(shown.last)
        XCTAssertGreaterThan(
            last.dueAt, pauseAt - MediaTime(value: 34, timescale: 1000),
            "every frame due before the pause was presented")

        // Started again, it plays: the held frame let go, the gate open.
        let resumeAt = clock.now() + MediaTime(value: 1, timescale: 4)
        try player.setRate(1, time: player.currentTime(), atHostTime: resumeAt)
        try await Task.sleep(for: .milliseconds(750))
        let resumed = frames.withLock { $0 }.filter { $0.dueAt >= resumeAt }
        XCTAssertGreaterThanOrEqual(resumed.count, 12, "about 15 frames in the half second after the start")
        player.pause()
    }

    /// A player prepared behind another, its preroll frame not drawn, takes the screen with a still
    /// frame at a host time: the frame it holds is presented through the sink at that time, exactly
    /// as a start presents its first, and no frame after it; it then stands paused there. Inside a
    /// frame, as a pause's time falls.
    func testAPauseAtAHostTime_onAPrerolledPlayer_presentsItsFrameThere_andNoOther() async throws {
        try await presentHeld(at: MediaTime(value: 2_020, timescale: 1000), inItemOf: 10, frame: 60)
    }

    /// The same 1 ms before the item's end (a wall that ended holds its last frame): the last frame
    /// is presented at its time, and the item's end, due just after, waits at the gate for the
    /// pause: no end of item, and the player stays paused in it.
    func testAPauseAtAHostTime_justBeforeTheItemsEnd_presentsTheLastFrame_withNoEndOfItem() async throws {
        try await presentHeld(at: MediaTime(value: 3_999, timescale: 1000), inItemOf: 4, frame: 119)
    }

    private func presentHeld(at held: MediaTime, inItemOf seconds: Int, frame number: Int64) async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: seconds), audio: Headless.audio)
        player.automaticallyWaitsToMinimizeStalling = false
        player.showsPrerollFrame = false
        player.actionAtItemEnd = .pause
        let sought = await player.seek(to: held, toleranceBefore: .zero, toleranceAfter: .zero)
        XCTAssertTrue(sought)
        let prerolled = await player.preroll(atRate: 1)
        XCTAssertTrue(prerolled)
        let clock = MasterClock.host
        let frames = Mutex<[PresentedFrame]>([])
        let ends = Mutex(0)
        let stream = player.presentedFrames
        let events = try XCTUnwrap(player.currentItem).events
        let reading = Task { for await frame in stream { frames.withLock { $0.append(frame) } } }
        let watching = Task { for await event in events where event == .didPlayToEndTime { ends.withLock { $0 += 1 } } }
        defer {
            reading.cancel()
            watching.cancel()
        }
        try await Task.sleep(for: .milliseconds(100))
        XCTAssertEqual(frames.withLock { $0.count }, 0, "a preroll not drawn presents nothing")

        let at = clock.now() + MediaTime(value: 300, timescale: 1000)
        try player.setRate(0, time: held, atHostTime: at)
        try await Task.sleep(for: .milliseconds(800))
        let shown = frames.withLock { $0 }
        let frameTime = MediaTime(value: number, timescale: 30)
        XCTAssertEqual(
            shown.map { ($0.presentationTimestamp - frameTime).seconds * 30 }.map { $0.rounded(.down) }, [0],
            "frame \(number), once, and nothing after it")
        let frame = try XCTUnwrap(shown.first)
        XCTAssertEqual(frame.dueAt, at, "due at the pause's host time")
        XCTAssertLessThan(
            (frame.presentedAt - at).seconds, 0.02, "presented at its time (\((frame.presentedAt - at).seconds) s late)"
        )
        XCTAssertEqual(player.timeControlStatus, .paused)
        XCTAssertEqual(player.rate, 0)
        XCTAssertEqual(player.currentTime(), held, "paused where it was asked to be")
        XCTAssertEqual(ends.withLock { $0 }, 0, "no end of item")

        // Started from there, it plays on from the held frame.
        let startAt = clock.now() + MediaTime(value: 250, timescale: 1000)
        try player.setRate(1, time: held, atHostTime: startAt)
        try await Task.sleep(for: .milliseconds(600))
        let played = frames.withLock { $0 }.dropFirst()
        XCTAssertEqual(
            played.first.map { ($0.presentationTimestamp - frameTime).seconds * 30 }.map { $0.rounded(.down) }, 0,
            "the start presents the held frame first")
        XCTAssertEqual(played.first?.dueAt, startAt)
        player.pause()
    }
}
