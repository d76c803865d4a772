import Foundation
import LockstepLocks
import LockstepNet
import LockstepTime
import TestSupport
import WallPlayer
import XCTest

/// No sequence of calls can wedge the player: seeded bursts of seeks, prerolls, rate changes,
/// scheduled starts, item replacements and pipeline renewals, issued as fast as the caller likes
/// and never waited for. Afterwards every completion handler has been called, and the same player
/// seeks to an exact frame and plays on.
final class PlayerStressTests: XCTestCase {
    /// Seconds of calls per seed; `LOCKSTEP_STRESS_SECONDS` makes the burst longer.
    private let seconds = Double(ProcessInfo.processInfo.environment["LOCKSTEP_STRESS_SECONDS"] ?? "") ?? 3

    func testBurstsOfCalls_neverWedgeThePlayer() async throws {
        for seed: UInt64 in [0x5EED_0001, 0x5EED_0002] {
            try await burst(seed: seed)
        }
    }

    private func burst(seed: UInt64) async throws {
        let clips = [
            try TestMedia.frameCode(seconds: 6, audioMilliseconds: 6000), try TestMedia.frameCode(seconds: 4),
        ]
        let player = Player(
            playerItem: PlayerItem(url: clips[0]), video: Headless.video, audioSinkDescription: Headless.audio)
        player.automaticallyWaitsToMinimizeStalling = false
        let outstanding = Mutex(0)
        let done: @Sendable (Bool) -> Void = { _ in outstanding.withLock { $0 -= 1 } }
        var random = SplitMix64(seed: seed)
        var calls = 0
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            calls += 1
            let time = frames(Int64.random(in: 0..<170, using: &random))
            switch Int.random(in: 0..<12, using: &random) {
            case 0, 1:
                outstanding.withLock { $0 += 1 }
                player.seek(to: time, toleranceBefore: .zero, toleranceAfter: .zero, completionHandler: done)
            case 2:
                outstanding.withLock { $0 += 1 }
                player.seek(to: time, completionHandler: done)
            case 3: player.play()
            case 4: player.pause()
            case 5: player.rate = [2, 0.5, 1][Int.random(in: 0..<3, using: &random)]
            case 6:
                outstanding.withLock { $0 += 1 }
                player.preroll(atRate: 1, completionHandler: done)
            case 7, 8:
                let at =
                    MasterClock.host.now()
                    + MediaTime(nanoseconds: Int64.random(in: 0..<200, using: &random) * 1_000_000)
                try? player.setRate(1, time: time, atHostTime: at)
            case 9: player.replaceCurrentItem(with: PlayerItem(url: clips[Int.random(in: 0..<2, using: &random)]))
            case 10:
                player.renewPipelineAtNextLoad()
                player.replaceCurrentItem(with: PlayerItem(url: clips[0]))
            default:
                try await Task.sleep(for: .milliseconds(Int.random(in: 0..<30, using: &random)))
            }
        }
        let burstEnded = Date()
        await player.settle()
        try await eventually(within: 15, "seed \(seed): every completion handler called after \(calls) calls") {
            outstanding.withLock { $0 } == 0
        }
        let settled = Date().timeIntervalSince(burstEnded)
        // The same player, asked plainly, does what it is asked.
        player.pause()
        player.replaceCurrentItem(with: PlayerItem(url: clips[0]))
        try await player.currentItem!.waitUntilReady(within: 15)
        let moved = await withTimeoutOrFalse(15) {
            await player.seek(to: frames(45), toleranceBefore: .zero, toleranceAfter: .zero)
        }
        XCTAssertTrue(moved, "seed \(seed): an exact seek after \(calls) calls")
        XCTAssertEqual(try player.shownFrame(), 45, "seed \(seed)")
        player.rate = 1
        try await player.waitUntilTime(frames(75), within: 10)
        let shown = try XCTUnwrap(try player.shownFrame(), "seed \(seed)")
        XCTAssertGreaterThan(shown, 60, "seed \(seed): frames move on")
        player.pause()
        print(
            "player stress, seed \(seed): \(calls) calls in \(seconds) s; completions in \(String(format: "%.2f", settled)) s, "
                + "then played on in \(String(format: "%.2f", Date().timeIntervalSince(burstEnded) - settled)) s")
    }

    private func withTimeoutOrFalse(_ seconds: Double, _ operation: @escaping @Sendable () async -> Bool) async -> Bool
    {
        (try? await withTimeout(seconds, "the operation") { await operation() }) ?? false
    }
}
