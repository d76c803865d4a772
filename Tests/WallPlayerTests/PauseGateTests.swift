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
}
