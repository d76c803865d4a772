import Foundation
import LockstepLocks
import LockstepTime
import TestSupport
import WallPlayer
import XCTest

/// A looping item paused, moved and started again in its last moments, after the pipeline has
/// already been handed the next pass: as a wall node pauses, resumes and seeks.
final class LoopEdgeTests: XCTestCase {
    /// The node's resume: an exact seek, a preroll, and a start at a host time. Each step is
    /// waited for by polling, so that one that never completes fails the test instead of hanging it.
    private func start(_ player: QueuePlayer, at itemTime: MediaTime) async throws {
        let sought = Outcome()
        player.seek(to: itemTime, toleranceBefore: .zero, toleranceAfter: .zero) { sought.set($0) }
        let seekFinished = try await sought.wait("the seek to \(itemTime)")
        XCTAssertTrue(
            seekFinished,
            "the seek to \(itemTime) (item error: \(player.currentItem?.error.map { "\($0)" } ?? "none"))")
        let prerolled = Outcome()
        player.preroll(atRate: 1) { prerolled.set($0) }
        let prerollFinished = try await prerolled.wait("the preroll at \(itemTime)")
        XCTAssertTrue(prerollFinished, "the preroll at \(itemTime)")
        try player.setRate(1, time: itemTime, atHostTime: MasterClock.host.now() + MediaTime(value: 1, timescale: 4))
    }

    /// A completion handler's answer, once it came.
    private final class Outcome: Sendable {
        private let value = Mutex<Bool?>(nil)

        func set(_ finished: Bool) { value.withLock { $0 = finished } }

        func wait(_ what: String) async throws -> Bool {
            try await withTimeout(10, what) {
                while true {
                    if let finished = self.value.withLock({ $0 }) { return finished }
                    try await Task.sleep(for: .milliseconds(10))
                }
            }
        }
    }

    /// The node's pause: the rate to zero at a host time a little ahead.
    private func pause(_ player: QueuePlayer) throws {
        try player.setRate(0, time: .invalid, atHostTime: MasterClock.host.now() + MediaTime(value: 1, timescale: 4))
    }

    func testPausedNearTheEndOfALoop_thenMovedAndResumed_playsOnAcrossTheLoop() async throws {
        let url = try TestMedia.frameCode(seconds: 3)
        for pauseFrom in [2.2, 2.35, 2.45] {
            let player = QueuePlayer(items: [], video: Headless.video, audioSinkDescription: Headless.audio)
            player.automaticallyWaitsToMinimizeStalling = false
            let looper = PlayerLooper(player: player, templateItem: PlayerItem(url: url))
            try await player.currentItem!.waitUntilReady()
            try await start(player, at: .zero)
            try await player.waitUntilTime(MediaTime(nanoseconds: Int64(pauseFrom * 1e9)))
            try pause(player)
            try await Task.sleep(for: .milliseconds(500))
            let pausedAt = player.currentTime()
            try await start(player, at: pausedAt)
            try await Task.sleep(for: .milliseconds(100))
            try pause(player)
            try await Task.sleep(for: .milliseconds(500))
            try await start(player, at: MediaTime(value: 3, timescale: 2))
            // From 1.5 s across the loop at 3 s and on: 2.5 s of frames, none missing.
            let presented = player.presentedFrames
            let frames = try await collect(
                75, from: presented, within: 10, "frames across the loop, from \(pauseFrom) s")
            let gaps = zip(frames, frames.dropFirst()).map { ($1.runningTime - $0.runningTime).seconds }
            XCTAssertTrue(
                gaps.allSatisfy { abs($0 - 1.0 / 30) < 0.002 }, "paused from \(pauseFrom) s: running time steps \(gaps)"
            )
            XCTAssertGreaterThanOrEqual(looper.loopCount, 1)
            player.pause()
        }
    }
}
