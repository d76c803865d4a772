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

/// A pipeline wedged inside GStreamer cannot hold the player: its teardown is left on its own
/// thread after the limit, and the player goes on with a new pipeline, the picture back.
final class WedgedPipelineTests: XCTestCase {
    func testAPipelineWedgedInItsSink_isAbandoned_andTheNewOnePlays() async throws {
        try await withWedgedPlayer { player in
            let started = Date()
            player.videoOutput = Headless.video  // replaces the wedged pipeline
            let presented = player.presentedFrames
            let frames = try await collect(5, from: presented, within: 20, "frames from the new pipeline")
            XCTAssertEqual(frames.count, 5)
            let took = Date().timeIntervalSince(started)
            XCTAssertGreaterThanOrEqual(
                took, Player.teardownLimit.seconds - 0.5, "it waited for the old pipeline first")
            XCTAssertLessThan(took, Player.teardownLimit.seconds + 10, "then went on without it")
            XCTAssertEqual(player.abandonedPipelines, 1)
        }
    }

    /// The same wedge met by the next item on the same pipeline (a node's player emptied and loaded
    /// again): the pipeline's stop for reuse is left on its own thread after the limit, and the
    /// item loads on a new pipeline. Before, the stop waited on the control queue for good, and
    /// every later load on that player timed out.
    func testAPipelineWedgedInItsSink_whenTheNextItemLoads_isAbandoned_andTheItemBecomesReady() async throws {
        try await withWedgedPlayer { player in
            let started = Date()
            let next = PlayerItem(url: try TestMedia.frameCode(seconds: 4))
            player.replaceCurrentItem(with: next)
            try await next.waitUntilReady(within: Player.teardownLimit.seconds + 15)
            let took = Date().timeIntervalSince(started)
            XCTAssertGreaterThanOrEqual(
                took, Player.teardownLimit.seconds - 0.5, "it waited for the old pipeline first")
            XCTAssertEqual(player.abandonedPipelines, 1)
        }
    }

    /// A playing player whose sink blocks outside GStreamer: filesink writing to a pipe nobody reads.
    /// Once the pipe is full its streaming thread sits in write() holding the stream lock, and
    /// stopping the pipeline (to READY or NULL) waits for that lock for good.
    private func withWedgedPlayer(_ body: (Player) async throws -> Void) async throws {
        let fifo = FileManager.default.temporaryDirectory.appendingPathComponent("wedge-\(getpid()).fifo").path
        unlink(fifo)
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        // Closing the reader at the end lets the abandoned write fail with EPIPE, not kill the tests.
        signal(SIGPIPE, SIG_IGN)
        let reader = open(fifo, O_RDONLY | O_NONBLOCK)  // opened, never read: filesink's open succeeds
        XCTAssertGreaterThanOrEqual(reader, 0)
        defer {
            close(reader)
            unlink(fifo)
        }
        let player = try await Player.ready(
            try TestMedia.frameCode(seconds: 6),
            video: VideoOutputSettings(sinkDescription: "filesink location=\(fifo)"))
        player.play()
        try await eventually(within: 10, "the sink blocked on the full pipe") {
            var size: Int32 = 0
            return ioctl(reader, UInt(FIONREAD), &size) == 0 && size >= 60_000
        }
        try await body(player)
        player.pause()
    }
}
