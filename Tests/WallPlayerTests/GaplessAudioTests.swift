import Foundation
import GroundTruth
import LockstepLocks
import LockstepTime
import TestSupport
import XCTest

@testable import WallPlayer

/// Sound that runs on across gapless item changes: every sample of every pass of an AAC clip
/// reaches the audio output, none is lost at the end of a pass (GStreamer 1.22's MP4 demuxer
/// leaves out the last packet of such files; `AudioTail` puts it back).
final class GaplessAudioTests: XCTestCase {
    func testLoopedAACClip_playsEverySampleOfEveryPass() async throws {
        try await checkThreePasses(bounded: false)
    }

    /// As a wall node plays a timeline: every pass ends at its out-point, here the clip's end.
    func testLoopedAACClip_withOutPoints_playsEverySampleOfEveryPass() async throws {
        try await checkThreePasses(bounded: true)
    }

    private func checkThreePasses(bounded: Bool) async throws {
        let url = try TestMedia.audioVideo(seconds: 2)
        let receiver = try FrameReceiver(count: 1)
        let received = Mutex<[UInt8]>([])
        let counting = Task {
            for await arrival in receiver.arrivals { received.withLock { $0 += arrival.payload } }
        }
        defer { counting.cancel() }
        let passes = (0..<3).map { _ in PlayerItem(url: url) }
        if bounded { for pass in passes { pass.forwardPlaybackEndTime = MediaTime(value: 2, timescale: 1) } }
        // 16-bit mono at 48 kHz, the clip's own format: every sample is two bytes on the wire.
        let audio =
            "audioconvert ! audioresample ! audio/x-raw,format=S16LE,rate=48000,channels=1 ! "
            + "udpsink host=127.0.0.1 port=\(receiver.ports[0]) sync=true"
        let player = QueuePlayer(items: passes, video: Headless.video, audioSinkDescription: audio)
        try await passes[0].waitUntilReady()
        let ended = passes[2].events
        player.play()
        _ = try await first(in: ended, within: 20, "end of the third pass") { $0 == .didPlayToEndTime }
        try await Task.sleep(for: .milliseconds(300))
        receiver.stop()
        await counting.value
        let bytes = received.withLock { $0 }
        let samples = stride(from: 0, to: bytes.count - 1, by: 2).map {
            Int(Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8))
        }
        // Three passes of 2 s at 48 kHz; a sample or two of rounding at each change.
        XCTAssertEqual(samples.count, 3 * 96_000, accuracy: 6, "samples played; a lost last packet is 768 a pass")
        // The clip's 440 Hz tone has the same phase at the end of a pass as at its start, so the
        // sound runs on across a change as one sine: no step between samples is much steeper
        // than the sine's own (2π·440/48000 of its peak, about 290 here; a lost packet makes one
        // of about 1200).
        let peak = Double(samples.map(abs).max() ?? 0)
        let steepest = Double(zip(samples, samples.dropFirst()).map { abs($1 - $0) }.max() ?? 0)
        XCTAssertLessThan(steepest, 2 * 2 * Double.pi * 440 / 48_000 * peak, "the tone runs on across the changes")
    }

    func testMissing_isTheRangeFromWhatWasSentToTheSegmentEnd() {
        let ms = { (value: Int64) in MediaTime(value: value, timescale: 1000) }
        let range = AudioTail.missing(sentUntil: ms(2005), stop: ms(2021), rate: 1)
        XCTAssertEqual(range?.upperBound, ms(2021))
        XCTAssertEqual(range.map { ($0.lowerBound - ms(2005)).seconds } ?? 1, -0.000_001, accuracy: 1e-9)
        XCTAssertNil(AudioTail.missing(sentUntil: ms(2021), stop: ms(2021), rate: 1), "nothing missing")
        XCTAssertNil(AudioTail.missing(sentUntil: ms(2005), stop: ms(2021), rate: -1), "reverse play reads backwards")
        XCTAssertNil(AudioTail.missing(sentUntil: nil, stop: ms(2021), rate: 1), "nothing sent since a flush")
        XCTAssertNil(AudioTail.missing(sentUntil: ms(2005), stop: nil, rate: 1), "an open segment")
        XCTAssertNil(AudioTail.missing(sentUntil: ms(1500), stop: ms(2021), rate: 1), "stopped early from downstream")
    }

    func testAudioPackets_readsTheTrackTimelineWithoutTheEditList() throws {
        let url = try TestMedia.audioVideo(seconds: 2)
        let ms = { (value: Int64) in MediaTime(value: value, timescale: 1000) }
        // The clip's AAC track: 1024 samples of priming, then 96 000 of sound, 1024 to a packet.
        let packets = MediaInspector.audioPackets(path: url.path, ordinal: 0, in: ms(1980)..<ms(2100))
        XCTAssertEqual(packets.map { $0.timestamp.convertScale(48_000, method: .default).value }, [95_232, 96_256])
        XCTAssertEqual(packets.last?.duration, MediaTime(value: 768, timescale: 48_000), "the last packet is short")
        XCTAssertFalse(packets.contains { $0.data.isEmpty })
        XCTAssertEqual(
            MediaInspector.audioPackets(path: url.path, ordinal: 1, in: ms(0)..<ms(100)), [], "no second track")
    }
}
