import Foundation
import LockstepTime
import TestSupport
import WallPlayer
import XCTest

/// The item-end boundary as a wall node meets it: a pause whose time falls inside an item's last
/// frame, with the next item already queued behind it. The node pauses the player 5 ms before the
/// pause's time and then moves exactly to it (the follower's `pauseAhead` and `showExactFrame`);
/// the sink must then show the item's last frame, not the next item's first (the glass once showed
/// frame 0 of the next pass while every node reported the item's end).
final class PauseAtItemEndTests: XCTestCase {
    private let quarterSecond = MediaTime(value: 1, timescale: 4)
    private let pauseAhead = MediaTime(value: 5, timescale: 1000)

    func testAPauseInsideTheLastFrame_holdsThatFrame_withTheNextItemQueued() async throws {
        let first = try TestMedia.frameCode(seconds: 2)
        let second = try TestMedia.frameCode(seconds: 3)
        let end = MediaTime(value: 2, timescale: 1)
        // The last frame is 1.9667 s to 2 s (frame 59 of 30 a second).
        for beforeEnd in [25, 10, 1] {
            let held = end - MediaTime(value: Int64(beforeEnd), timescale: 1000)
            let item = PlayerItem(url: first)
            let player = QueuePlayer(
                items: [item, PlayerItem(url: second)], video: Headless.video, audioSinkDescription: Headless.audio)
            player.automaticallyWaitsToMinimizeStalling = false
            try await item.waitUntilReady()
            let from = MediaTime(value: 3, timescale: 2)
            let sought = await player.seek(to: from, toleranceBefore: .zero, toleranceAfter: .zero)
            XCTAssertTrue(sought)
            let prerolled = await player.preroll(atRate: 1)
            XCTAssertTrue(prerolled)
            let startAt = MasterClock.host.now() + quarterSecond
            try player.setRate(1, time: from, atHostTime: startAt)
            // The pause's time: when the item reaches `held`.
            let pauseAt = startAt + (held - from)
            try player.setRate(0, time: .invalid, atHostTime: pauseAt - pauseAhead)
            try await Task.sleep(for: .seconds((pauseAt - MasterClock.host.now()).seconds + 0.3))
            let exact = await player.seek(to: held, toleranceBefore: .zero, toleranceAfter: .zero)
            XCTAssertTrue(exact, "the exact move to \(held.seconds) s")
            XCTAssertTrue(player.currentItem === item, "\(beforeEnd) ms before the end: still the first item")
            XCTAssertEqual(player.rate, 0)
            XCTAssertEqual(try player.shownFrame(), 59, "\(beforeEnd) ms before the end: the sink shows the last frame")
            XCTAssertLessThan(player.currentTime(), end, "the position is inside the item")
            player.pause()
        }
    }
}
