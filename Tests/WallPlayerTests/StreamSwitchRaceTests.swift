import CGStreamer
import LockstepTime
import TestSupport
import XCTest

@testable import WallPlayer

/// GStreamer 1.22's decodebin3 can fail a stream switch that a flushing seek meets halfway: the
/// demuxer posts "Internal data stream error" (seen 1 switch in 30 in MediaSelectionTests). These
/// tests post that error themselves, every time, and check what the player does.
final class StreamSwitchRaceTests: XCTestCase {
    func testDemuxerError_rightAfterASwitch_reloadsWithTheChoice_andTheSeekCompletesThere() async throws {
        let (player, item, visual) = try await switchedToTheSignedPicture()
        let failed = try XCTUnwrap(player.pipelineRef.withLock { $0 })
        let seeking = Task { await player.seek(to: frames(45), toleranceBefore: .zero, toleranceAfter: .zero) }
        postDemuxerError(on: failed)
        let sought = await seeking.value
        XCTAssertTrue(sought, "the seek under way completes on the item loaded again")
        XCTAssertEqual(item.status, .readyToPlay)
        XCTAssertNil(item.error)
        XCTAssertEqual(try player.shownFrame(), 345, "the signed picture's frame at 1.5 s")
        XCTAssertEqual(
            item.currentMediaSelection.selectedMediaOption(in: visual)?.displayName, "American Sign Language")
        XCTAssertFalse(player.pipelineRef.withLock { $0 } === failed, "a new pipeline")
        player.play()
        try await player.waitUntilTime(MediaTime(value: 2, timescale: 1))
        player.pause()
        let shown = try XCTUnwrap(try player.shownFrame())
        XCTAssertGreaterThanOrEqual(shown, 360, "it plays on, the signed picture (frames 300 on)")
    }

    func testDemuxerError_longAfterTheSwitch_failsTheItem() async throws {
        let (player, item, _) = try await switchedToTheSignedPicture()
        try await Task.sleep(for: .milliseconds(Int(Player.streamSwitchRaceWindow.seconds * 1000) + 100))
        postDemuxerError(on: try XCTUnwrap(player.pipelineRef.withLock { $0 }))
        try await eventually(within: 10, "the item failed") { item.status == .failed }
        guard case .playbackFailed(let element, _, _) = item.error else {
            return XCTFail("\(String(describing: item.error))")
        }
        XCTAssertTrue(element.hasPrefix("qtdemux"), element)
    }

    /// A player on the two-angle clip, paused at its start, that has just sent the switch to its
    /// second picture.
    private func switchedToTheSignedPicture() async throws -> (Player, PlayerItem, MediaSelectionGroup) {
        let player = try await Player.ready(try TestMedia.twoAngles())
        let item = try XCTUnwrap(player.currentItem)
        let group = try await item.asset.mediaSelectionGroup(forMediaCharacteristic: .visual)
        let visual = try XCTUnwrap(group)
        item.select(visual.options[1], in: visual)
        // The switch is sent once the player's queue has run the selection.
        try await eventually(within: 10, "the switch sent", every: .milliseconds(2)) {
            player.pipelineRef.withLock { $0 }?.switchedStreams(within: Player.streamSwitchRaceWindow) == true
        }
        return (player, item, visual)
    }

    /// Posts what qtdemux posts when a push returns an error, as if it came from it.
    private func postDemuxerError(on pipeline: PlaybackPipeline) {
        guard let demuxer = GStreamer.descendant(of: pipeline.playbin, factory: "qtdemux") else {
            return XCTFail("no qtdemux in the pipeline")
        }
        let error = g_error_new_literal(
            gst_stream_error_quark(), gint(GST_STREAM_ERROR_FAILED.rawValue), "Internal data stream error.")
        let message = gst_message_new_error(demuxer.gstObject, error, "streaming stopped, reason error (-5)")
        g_error_free(error)
        gst_element_post_message(demuxer.pointer, message)
    }
}
