import CGStreamer
import CLockstepShims
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
        // A paused pipeline's full queues hold some streaming threads inside their input's
        // element: those inputs are waited for (their thread may be unblocking); the rest not.
        var view = DecoderInputs()
        let busy = inputs.filter { $0 === inputs[0] || !isFree($0) }.map { UInt(bitPattern: $0.pointer) }
        XCTAssertFalse(view.waiting(besides: inputs[0].pointer, held: Set(busy)))
    }

    func testAnInputStillCarryingItsBlockingProbe_isWaitedFor_unlessItsOwnEndIsHeld() async throws {
        let (player, inputs) = try await prerolledInputs()
        defer { withExtendedLifetime(player) {} }
        let free = try XCTUnwrap(inputs.dropFirst().first(where: isFree))
        let busy = Set(inputs.filter { $0 === inputs[0] || !isFree($0) }.map { UInt(bitPattern: $0.pointer) })
        let output = try XCTUnwrap(elementOutput(behind: free))
        let probe = gst_pad_add_probe(
            output.pointer, GstPadProbeType(GST_PAD_PROBE_TYPE_BLOCK.rawValue | GST_PAD_PROBE_TYPE_BUFFER.rawValue),
            { _, _, _ in GST_PAD_PROBE_OK }, nil, nil)
        var view = DecoderInputs()
        XCTAssertTrue(view.waiting(besides: inputs[0].pointer, held: busy), "its first buffer is to come")
        XCTAssertTrue(view.waiting(besides: inputs[0].pointer, held: busy), "until it has come")
        XCTAssertFalse(
            view.waiting(besides: inputs[0].pointer, held: busy.union([UInt(bitPattern: free.pointer)])),
            "an input whose end is held brings no first buffer")
        gst_pad_remove_probe(output.pointer, probe)
        XCTAssertFalse(view.waiting(besides: inputs[0].pointer, held: busy))
    }

    func testAThreadInsideAnInput_isWaitedFor_untilOneLookFindsItOut() async throws {
        let (player, inputs) = try await prerolledInputs()
        defer { withExtendedLifetime(player) {} }
        let free = try XCTUnwrap(inputs.dropFirst().first(where: isFree))
        let busy = Set(inputs.filter { $0 === inputs[0] || !isFree($0) }.map { UInt(bitPattern: $0.pointer) })
        let target = try XCTUnwrap(targetPad(of: free))
        // Another thread holds the element's input stream lock, as one pushing through it does,
        // for instance while it unblocks every input.
        let lock = StreamLockHolder(target)
        var view = DecoderInputs()
        XCTAssertTrue(view.waiting(besides: inputs[0].pointer, held: busy), "it may be unblocking the inputs")
        XCTAssertTrue(view.waiting(besides: inputs[0].pointer, held: busy), "however long it takes")
        lock.release()
        XCTAssertFalse(view.waiting(besides: inputs[0].pointer, held: busy), "out: its first buffer was handled")
        let again = StreamLockHolder(target)
        XCTAssertFalse(
            view.waiting(besides: inputs[0].pointer, held: busy), "for good: later pushes are not first buffers")
        again.release()
    }

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

    /// Whether no streaming thread is inside the element behind `input`.
    private func isFree(_ input: Pad) -> Bool {
        guard let target = targetPad(of: input), lockstep_pad_stream_trylock(target.pointer) != 0 else { return false }
        lockstep_pad_stream_unlock(target.pointer)
        return true
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

/// Holds a pad's stream lock on a thread of its own until released.
private final class StreamLockHolder: @unchecked Sendable {
    private let release_ = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    init(_ pad: Pad) {
        let taken = DispatchSemaphore(value: 0)
        Thread.detachNewThread { [release_, done] in
            while lockstep_pad_stream_trylock(pad.pointer) == 0 { usleep(100) }
            taken.signal()
            release_.wait()
            lockstep_pad_stream_unlock(pad.pointer)
            done.signal()
        }
        taken.wait()
    }

    func release() {
        release_.signal()
        done.wait()
    }
}
