import Foundation
import LockstepTime
import TestSupport
import WallPlayer
import XCTest

/// A start inside an item's last frame, the next item queued behind it, as a wall node makes one
/// when it resumes from a pause held there (the frame held on the player first, alone, then the
/// item from there and the next one queued on the same player): the item's last moment plays and
/// the next item follows, gaplessly.
final class StartInLastFrameTests: XCTestCase {
    func testAStartInsideTheLastFrame_movesOnToTheNextItem() async throws {
        let first = try TestMedia.barCode(seconds: 8)
        let second = try TestMedia.barCode(seconds: 4)
        let from = MediaTime(value: 7985, timescale: 1000)
        let player = QueuePlayer(items: [], video: Headless.video, audioSinkDescription: Headless.audio)
        player.automaticallyWaitsToMinimizeStalling = false
        for round in 1...3 {
            // As the node holds a paused frame: the item alone, moved exactly to the frame.
            let heldItem = PlayerItem(url: first)
            player.pause()
            player.removeAllItems()
            player.insert(heldItem, after: nil)
            try await heldItem.waitUntilReady()
            let sought = await player.seek(to: from, toleranceBefore: .zero, toleranceAfter: .zero)
            XCTAssertTrue(sought)
            try await Task.sleep(for: .seconds(1))
            // Then the resume: the item from there and the next one, on the same player.
            let item = PlayerItem(url: first)
            item.playbackStartTime = from
            let next = PlayerItem(url: second)
            player.pause()
            player.removeAllItems()
            player.insert(item, after: nil)
            player.insert(next, after: nil)
            try await item.waitUntilReady()
            let prerolled = await player.preroll(atRate: 1)
            XCTAssertTrue(prerolled)
            let startAt = MasterClock.host.now() + MediaTime(value: 1, timescale: 4)
            try player.setRate(1, time: from, atHostTime: startAt)
            do {
                try await eventually(within: 2, "round \(round): the next item current", every: .milliseconds(10)) {
                    player.currentItem === next
                }
            } catch {
                // Where it stopped: a lost gapless change leaves the first item current at its end.
                let current =
                    player.currentItem === item ? "the first" : player.currentItem === next ? "the next" : "none"
                XCTFail(
                    "round \(round): current \(current) at \(player.currentTime().seconds) s, rate \(player.rate), "
                        + "\(player.timeControlStatus), next item \(next.status)")
                throw error
            }
            try await Task.sleep(for: .milliseconds(300))
            XCTAssertGreaterThan(
                player.currentTime(), MediaTime(value: 1, timescale: 10), "round \(round): it plays on")
        }
    }
}
