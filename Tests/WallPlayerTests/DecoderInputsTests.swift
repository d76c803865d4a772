import CGStreamer
import Foundation
import TestSupport
import XCTest

@testable import WallPlayer

/// decodebin3 (GStreamer 1.22.0) removes every input stream that has seen its end when another
/// input brings its first buffer, losing those ends and crashing at teardown; a stream's end with
/// no successor therefore waits while `DecoderInputs` says an input still waits for its first
/// buffer or is handling it (`GaplessHandover`). These tests put a prerolled pipeline's real
/// decodebin3 inputs in each state and ask.
final class DecoderInputsTests: XCTestCase {
    func testPrerolledInputs_waitForNoFirstBuffer() async throws {
        let (player, inputs) = try await prerolledInputs()
        defer { withExtendedLifetime(player) {} }
        var view = DecoderInputs()
        XCTAssertFalse(view.waiting(besides: inputs[0].pointer, held: [key(inputs[0])]))
    }

    func testAnInputStillCarryingItsBlockingProbe_isWaitedFor_unlessItsOwnEndIsHeld() async throws {
        let (player, inputs) = try await prerolledInputs()
        defer { withExtendedLifetime(player) {} }
        let other = inputs[1]
        let output = try XCTUnwrap(elementOutput(behind: other))
        let probe = gst_pad_add_probe(
            output.pointer, GstPadProbeType(GST_PAD_PROBE_TYPE_BLOCK.rawValue | GST_PAD_PROBE_TYPE_BUFFER.rawValue),
            { _, _, _ in GST_PAD_PROBE_OK }, nil, nil)
        var view = DecoderInputs()
        XCTAssertTrue(view.waiting(besides: inputs[0].pointer, held: [key(inputs[0])]), "its first buffer is to come")
        XCTAssertTrue(view.waitingFor?.contains("its first buffer to come") == true, view.waitingFor ?? "")
        XCTAssertFalse(
            view.waiting(besides: inputs[0].pointer, held: [key(inputs[0]), key(other)]),
            "an input whose end is held brings no first buffer")
        gst_pad_remove_probe(output.pointer, probe)
        XCTAssertFalse(view.waiting(besides: inputs[0].pointer, held: [key(inputs[0])]))
    }

    func testAnInputWhoseFirstBufferIsNotInDecodebinsQueueYet_isWaitedFor_untilItIs() async throws {
        // Its probe gone, the buffer is still on its way: the thread that carries it is unblocking
        // every input (and may wait for decodebin3's selection lock) before the slot gets it.
        let (player, inputs) = try await prerolledInputs()
        defer { withExtendedLifetime(player) {} }
        let output = try XCTUnwrap(elementOutput(behind: inputs[1]))
        let slot = try XCTUnwrap(gst_pad_get_peer(output.pointer))
        defer { gst_object_unref(UnsafeMutableRawPointer(slot)) }
        XCTAssertTrue(DecoderInputs.isFed(slot), "a prerolled pipeline's slots had their first buffers")
        let object = UnsafeMutableRawPointer(slot).assumingMemoryBound(to: GObject.self)
        let mark = g_object_steal_data(object, DecoderInputs.fedKey)
        var view = DecoderInputs()
        XCTAssertTrue(view.waiting(besides: inputs[0].pointer, held: [key(inputs[0])]))
        XCTAssertTrue(view.waitingFor?.contains("on its way") == true, view.waitingFor ?? "")
        g_object_set_data(object, DecoderInputs.fedKey, mark)
        XCTAssertFalse(view.waiting(besides: inputs[0].pointer, held: [key(inputs[0])]))
    }

    private func key(_ pad: Pad) -> UInt { UInt(bitPattern: pad.pointer) }

    /// A paused player of the languages file (five streams, five decodebin3 inputs) and its
    /// linked decodebin3 inputs.
    private func prerolledInputs() async throws -> (Player, [Pad]) {
        let player = try await Player.ready(try TestMedia.languages(seconds: 2), audio: Headless.audio)
        let pipeline = try XCTUnwrap(player.pipelineRef.withLock { $0 })
        let decodebin = try XCTUnwrap(GStreamer.descendant(of: pipeline.playbin, factory: "decodebin3"))
        var inputs: [Pad] = []
        GStreamer.forEachPad(of: decodebin, direction: GST_PAD_SINK) { pad in
            if gst_pad_is_linked(pad) != 0 { inputs.append(Pad(retaining: pad)) }
        }
        XCTAssertEqual(inputs.count, 5, "one input per stream")
        try XCTSkipIf(inputs.count < 2)
        return (player, inputs)
    }

    private func targetPad(of input: Pad) -> Pad? {
        guard
            let target = gst_ghost_pad_get_target(
                UnsafeMutableRawPointer(input.pointer).assumingMemoryBound(to: GstGhostPad.self))
        else { return nil }
        return Pad(owning: target)
    }

    /// The output of the element behind `input` (an identity, for a demuxed local file).
    private func elementOutput(behind input: Pad) -> Pad? {
        guard let target = targetPad(of: input), let element = gst_pad_get_parent_element(target.pointer) else {
            return nil
        }
        return Element(owning: element).staticPad("src")
    }
}
