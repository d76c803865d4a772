import CGStreamer
import LockstepLocks
import LockstepTime
import TestSupport
import XCTest

@testable import WallPlayer

/// decodebin3 (GStreamer 1.22) sometimes loses the end of a file's streams under load
/// (`EndOfStreamGuard`); these tests lose it on purpose, every time, and check what the player
/// does.
final class EndOfStreamGuardTests: XCTestCase {
    func testLostEnd_isSentToTheOutputs_andTheItemEnds() async throws {
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 1), audio: Headless.audio)
        let pipeline = try XCTUnwrap(player.pipelineRef.withLock { $0 })
        let decodebin = try XCTUnwrap(GStreamer.descendant(of: pipeline.playbin, factory: "decodebin3"))
        var outputs = 0
        GStreamer.forEachPad(of: decodebin, direction: GST_PAD_SRC) { pad in
            gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM, dropEndOfStream, nil, nil)
            outputs += 1
        }
        XCTAssertEqual(outputs, 2, "decodebin3's video and audio outputs")
        let events = player.currentItem!.events
        let presented = player.presentedFrames
        let counted = Task {
            var frames = 0
            for await _ in presented { frames += 1 }
            return frames
        }
        let started = ContinuousClock.now
        player.play()
        _ = try await first(in: events, within: 10, "end of item, told by the guard") { $0 == .didPlayToEndTime }
        let took = ContinuousClock.now - started
        // The item's second, then the guard's grace: it waits before it acts, and acts soon after.
        XCTAssertGreaterThanOrEqual(took, .seconds(1) + .milliseconds(900))
        XCTAssertLessThan(took, .seconds(5))
        player.replaceCurrentItem(with: nil)
        counted.cancel()
        // What was lost is the end, not frames: the decoders drained before it was dropped.
        let frames = await counted.value
        XCTAssertEqual(frames, 30)
    }

    func testEndOnItsWay_isNotOvertaken() async throws {
        // Played to its end with nothing lost, an item ends at its duration: the guard never
        // acts on outputs that are still being fed, however slowly the sink takes frames.
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 2), audio: Headless.audio)
        let events = player.currentItem!.events
        let started = ContinuousClock.now
        player.play()
        _ = try await first(in: events, within: 10, "end of item") { $0 == .didPlayToEndTime }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(2) + .milliseconds(900))
    }
}

private let dropEndOfStream: GstPadProbeCallback = { _, info, _ in
    guard let event = info?.pointee.data?.assumingMemoryBound(to: GstEvent.self) else { return GST_PAD_PROBE_OK }
    return event.pointee.type == GST_EVENT_EOS ? GST_PAD_PROBE_DROP : GST_PAD_PROBE_OK
}
