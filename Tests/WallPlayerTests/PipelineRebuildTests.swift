import Foundation
import LockstepTime
import TestSupport
import WallPlayer
import XCTest

/// Changing a sink builds a new pipeline: playback goes on from where it was, at the same rate,
/// with a frame shown.
final class PipelineRebuildTests: XCTestCase {
    func testChangingTheAudioSink_whilePlaying_goesOnFromTheSameTime() async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 6), audio: Headless.audio)
        player.play()
        try await player.waitUntilTime(MediaTime(value: 3, timescale: 2))
        let before = player.currentTime()
        player.audioSinkDescription = "fakesink sync=true name=other"
        try await checkGoesOn(player, from: before)
    }

    func testChangingTheVideoSinkAndBack_whilePlaying_goesOnFromTheSameTime() async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 6))
        player.play()
        try await player.waitUntilTime(MediaTime(value: 1, timescale: 1))
        let before = player.currentTime()
        player.videoOutput = VideoOutputSettings(sinkDescription: "fakesink sync=true name=b")
        player.videoOutput = Headless.video
        try await checkGoesOn(player, from: before)
    }

    func testAPlayerLayerAddedLater_whilePlaying_showsTheVideoFromTheSameTime() async throws {
        // Audio only at first, as AVPlayer plays an item before any layer shows it.
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 6), video: nil, audio: Headless.audio)
        XCTAssertFalse(player.isReadyForDisplay, "no video output yet")
        player.play()
        try await player.waitUntilTime(MediaTime(value: 3, timescale: 2))
        let before = player.currentTime()
        let layer = PlayerLayer(player: player)
        layer.sinkDescription = Headless.video.sinkDescription
        try await checkGoesOn(player, from: before)
        XCTAssertTrue(layer.isReadyForDisplay)
        let shown = try XCTUnwrap(try player.shownFrame())
        XCTAssertGreaterThanOrEqual(shown, 45, "the video joins where the item is, not at its start")
    }

    func testChangingTheVideoSink_whilePaused_keepsTheFrameShown() async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 6))
        let moved = await player.seek(to: frames(45), toleranceBefore: .zero, toleranceAfter: .zero)
        XCTAssertTrue(moved)
        player.videoOutput = VideoOutputSettings(sinkDescription: "fakesink sync=true name=b")
        await player.settle()
        let ready = try await first(in: player.isReadyForDisplayUpdates, within: 10, "ready for display") { $0 }
        XCTAssertTrue(ready)
        XCTAssertEqual(player.rate, 0)
        XCTAssertEqual(try player.shownFrame(), 45, "the paused frame, not the first")
    }

    private func checkGoesOn(_ player: Player, from before: MediaTime) async throws {
        // The rebuild has begun once the player's queue has run what was asked before.
        await player.settle()
        let ready = try await first(in: player.isReadyForDisplayUpdates, within: 10, "ready for display") { $0 }
        XCTAssertTrue(ready)
        let playing = try await first(in: player.timeControlStatusUpdates, within: 10, "playing") { $0 == .playing }
        XCTAssertEqual(playing, .playing)
        XCTAssertEqual(player.rate, 1)
        let after = player.currentTime()
        XCTAssertGreaterThanOrEqual(
            after, before - MediaTime(value: 1, timescale: 10), "went on from \(before.seconds) s, not from 0")
        try await player.waitUntilTime(after + MediaTime(value: 1, timescale: 2))
        XCTAssertTrue(player.isReadyForDisplay)
    }
}
