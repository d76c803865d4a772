import CGStreamer
import Foundation
import LockstepTime
import TestSupport
import XCTest

@testable import WallPlayer

/// A pipeline whose first preroll stalled (playbin3 in GStreamer 1.22 does, about one load in ten
/// on a busy machine) is replaced by the player's watchdog; the stalled one must stop at once, not
/// after the 2 s a teardown otherwise gives a state change still under way to end: a node's black
/// → clip change came 1.1 s late in CI, and the screen joined 8 s after, through that wait.
final class StalledPrerollTests: XCTestCase {
    func testAStalledPipeline_stopsAtOnce_whenToldItStalled() throws {
        let (pipeline, took) = try stallThenStop(settling: false)
        XCTAssertLessThan(took, 0.5, "a stalled pipeline stops without settling")
        XCTAssertEqual(pipeline.playbin.currentState, GST_STATE_NULL)
    }

    /// The wait the other case avoids: without being told, the teardown settles first.
    func testAStalledPipeline_isSettledFirst_otherwise() throws {
        let (pipeline, took) = try stallThenStop(settling: true)
        XCTAssertGreaterThanOrEqual(took, 1.9, "the teardown gives a change under way its 2 s")
        XCTAssertEqual(pipeline.playbin.currentState, GST_STATE_NULL)
    }

    /// A pipeline whose preroll never comes (a blocked pad holds the first video buffer, as every
    /// streaming task of a stalled playbin3 waits), stopped as `retire` stops it: the time the stop
    /// took, in seconds.
    private func stallThenStop(settling: Bool) throws -> (PlaybackPipeline, Double) {
        let pipeline = try PlaybackPipeline(
            video: VideoOutputSettings(sinkDescription: "identity name=stall ! fakesink sync=true"),
            audioSink: "fakesink sync=true", realtimePriority: nil,
            callbacks: .init(message: { _ in }, presented: { _ in }, aboutToFinish: { nil }))
        pipeline.playbin.set("uri", try TestMedia.frameCode(seconds: 2).absoluteString)
        try blockFirstVideoBuffer(of: pipeline)
        pipeline.playbin.setState(GST_STATE_PAUSED)
        let oneSecond = MediaTime(value: 1, timescale: 1).clockTime ?? 0
        XCTAssertEqual(
            gst_element_get_state(pipeline.playbin.pointer, nil, nil, oneSecond), GST_STATE_CHANGE_ASYNC,
            "the preroll is held")
        XCTAssertLessThan(pipeline.playbin.currentState.rawValue, GST_STATE_PAUSED.rawValue)
        let began = Date()
        let stopped = pipeline.stopOnItsOwnThread(settling: settling)
        XCTAssertEqual(stopped.wait(timeout: .now() + 5), .success, "the stalled pipeline stopped")
        return (pipeline, Date().timeIntervalSince(began))
    }

    /// A ready item loaded again on the same pipeline (a seek after its successor was handed over
    /// reloads it) whose preroll stalls is rebuilt by the watchdog as a first load is, and the seek
    /// waiting on that load completes. Before, the watchdog watched only items not yet ready: the
    /// seek waited for good (LoopEdgeTests, once beside a compile).
    func testAReadyItemLoadedAgain_whosePrerollStalls_isRebuilt_andTheSeekWaitingOnItCompletes() async throws {
        let (player, item, pipeline) = try await readyPlayerWhoseNextPrerollStalls()

        let began = Date()
        player.queue.async {
            player.load(item)
            player.engine.queuedSeek = player.makeSeek(
                to: MediaTime(value: 1, timescale: 1), before: .zero, after: .zero, queue: nil, completion: nil)
        }
        let sought = try await withTimeout(10, "the seek on the reloaded item") {
            await player.seek(to: MediaTime(value: 2, timescale: 1), toleranceBefore: .zero, toleranceAfter: .zero)
        }
        XCTAssertTrue(sought, "the seek on the reloaded item completed")
        XCTAssertLessThan(Date().timeIntervalSince(began), 10, "within the watchdog's first retries")
        XCTAssertFalse(player.pipelineRef.withLock { $0 } === pipeline, "on a new pipeline")
        XCTAssertEqual(item.status, .readyToPlay)
        XCTAssertEqual(player.currentTime(), MediaTime(value: 2, timescale: 1))
    }

    /// A preroll that waits while the process stands still (SIGSTOP, a paused machine) is no
    /// stall: the watchdog waits that much longer before it rebuilds the pipeline. Here the process
    /// counts as stood still for the first 2.5 s of a preroll that never comes: the pipeline is
    /// rebuilt 1 s of running time after, not at 1 s. Before, a node stopped during a preparation
    /// rebuilt its pipeline on waking, and came back seconds late.
    func testAPrerollWhileTheProcessStoodStill_isWaitedFor_thenRebuiltIfItStillStalls() async throws {
        let (player, item, pipeline) = try await readyPlayerWhoseNextPrerollStalls()
        let standing = MediaTime(seconds: 2.5, preferredTimescale: 1000)
        let began = LocalClock.monotonic.now()
        player.queue.async {
            player.engine.stoodStill = { MediaTime.minimum(LocalClock.monotonic.now() - began, standing) }
            player.load(item)
        }
        var replacedAfter: Double?
        while replacedAfter == nil, (LocalClock.monotonic.now() - began).seconds < 8 {
            try await Task.sleep(for: .milliseconds(20))
            if player.pipelineRef.withLock({ $0 }) !== pipeline {
                replacedAfter = (LocalClock.monotonic.now() - began).seconds
            }
        }
        let after = try XCTUnwrap(replacedAfter, "the pipeline still stalled after the stand-still is rebuilt")
        XCTAssertGreaterThan(after, 3.3, "not while the process stood still, nor 1 s after it stood still")
        XCTAssertLessThan(after, 4.5, "1 s of running time after it stood still, and a rebuild")
    }

    /// A player with a ready 4 s item whose pipeline holds every video buffer from now on: loading
    /// the item again on it never prerolls.
    private func readyPlayerWhoseNextPrerollStalls() async throws -> (Player, PlayerItem, PlaybackPipeline) {
        let player = try await Player.ready(
            try TestMedia.frameCode(seconds: 4),
            video: VideoOutputSettings(sinkDescription: "identity name=stall ! fakesink sync=true"))
        let item = try XCTUnwrap(player.currentItem)
        let pipeline = try XCTUnwrap(player.pipelineRef.withLock { $0 })
        try blockFirstVideoBuffer(of: pipeline)
        return (player, item, pipeline)
    }

    /// Holds every video buffer at the `stall` identity of the pipeline's video sink ("identity
    /// name=stall ! fakesink"), as every streaming task of a stalled playbin3 waits: no preroll comes.
    private func blockFirstVideoBuffer(of pipeline: PlaybackPipeline) throws {
        let sink = try XCTUnwrap(pipeline.videoSink)
        let stall = try XCTUnwrap(gst_bin_get_by_name(sink.cast(to: GstBin.self), "stall"))
        let pad = try XCTUnwrap(gst_element_get_static_pad(stall, "src"))
        let block = GstPadProbeType(GST_PAD_PROBE_TYPE_BLOCK.rawValue | GST_PAD_PROBE_TYPE_BUFFER.rawValue)
        gst_pad_add_probe(pad, block, { _, _, _ in GST_PAD_PROBE_OK }, nil, nil)
        gst_object_unref(UnsafeMutableRawPointer(pad))
        gst_object_unref(UnsafeMutableRawPointer(stall))
    }
}
