import Foundation
import LockstepTime
import TestSupport
import WallPlayer
import XCTest

/// Media as cameras and broadcasters make it: phone videos stored sideways, interlaced video.
final class RealWorldMediaTests: XCTestCase {
    func testProbe_whenStoredSideways_reportsTheTurnAndTheUprightSize() async throws {
        let video = try await URLAsset(url: try TestMedia.rotated()).loadTracks(withMediaType: .video)
        let track = try XCTUnwrap(video.first)
        XCTAssertEqual(track.naturalSize, PixelSize(width: 320, height: 180), "the stored picture")
        XCTAssertEqual(track.preferredRotation, 270, "a quarter turn counterclockwise, as ffmpeg shows it")
        XCTAssertEqual(track.presentationSize, PixelSize(width: 180, height: 320))
        XCTAssertEqual(track.fieldOrder, .progressive)
        XCTAssertEqual(track.pixelFormat, "yuv420p")
        XCTAssertEqual(track.bitDepth, 8)
    }

    func testProbe_whenInterlaced_reportsTheFieldOrder() async throws {
        let video = try await URLAsset(url: try TestMedia.interlaced()).loadTracks(withMediaType: .video)
        let track = try XCTUnwrap(video.first)
        XCTAssertEqual(track.fieldOrder, .topFieldFirst)
        XCTAssertTrue(track.fieldOrder.isInterlaced)
        XCTAssertEqual(track.preferredRotation, 0)
        let plain = try await URLAsset(url: try TestMedia.frameCode(seconds: 4)).loadTracks(withMediaType: .video)
        XCTAssertEqual(plain.first?.preferredRotation, 0)
        XCTAssertEqual(plain.first?.presentationSize, plain.first?.naturalSize)
    }

    func testPlay_whenStoredSideways_showsThePictureUpright() async throws {
        let url = try TestMedia.rotated()
        let reference = try Self.ffmpegFirstLuma(url, size: PixelSize(width: 180, height: 320))
        let player = try await Player.ready(url)
        let frame = try XCTUnwrap(try player.copyCurrentVideoFrame(format: .i420))
        XCTAssertEqual(frame.size, PixelSize(width: 180, height: 320), "shown upright, as the display matrix says")
        let luma = frame.data.prefix(180 * 320)
        XCTAssertGreaterThan(Pictures.psnr(luma, reference), 30, "the same picture as ffmpeg's upright one")
        // Turned clockwise instead, the picture would be ffmpeg's upside down (its bytes reversed).
        XCTAssertLessThan(Pictures.psnr(luma, Data(reference.reversed())), 20, "a turn the other way does not pass")
    }

    func testPlay_whenStoredSideways_cutsTilesFromTheUprightPicture() async throws {
        let url = try TestMedia.rotated()
        let reference = try Self.ffmpegFirstLuma(url, size: PixelSize(width: 180, height: 320))
        var settings = Headless.video
        settings.sourceCrop = NormalizedRect(x: 0, y: 0, width: 1, height: 0.5)
        let player = try await Player.ready(url, video: settings)
        let frame = try XCTUnwrap(try player.copyCurrentVideoFrame(format: .i420))
        XCTAssertEqual(frame.size, PixelSize(width: 180, height: 160), "the top half of the upright picture")
        XCTAssertGreaterThan(Pictures.psnr(frame.data.prefix(180 * 160), reference.prefix(180 * 160)), 30)
    }

    /// A tile's crop cut for a large picture leaves a smaller one no width: the item after a larger
    /// one (a calibration pattern, then the show) must still negotiate, and show its own tile.
    func testReplace_withASmallerPicture_cropsTheNewOne() async throws {
        var settings = Headless.video
        settings.sourceCrop = NormalizedRect(x: 0.5, y: 0, width: 0.5, height: 1)
        let player = try await Player.ready(try TestMedia.frameCode(seconds: 2, size: "640x360"), video: settings)
        XCTAssertEqual(try player.copyCurrentVideoFrame(format: .i420)?.size, PixelSize(width: 320, height: 360))
        let smaller = PlayerItem(url: try TestMedia.frameCode(seconds: 2, size: "160x90"))
        player.replaceCurrentItem(with: smaller)
        try await smaller.waitUntilReady()
        player.play()
        try await player.waitUntilTime(MediaTime(seconds: 0.5, preferredTimescale: 1000))
        XCTAssertEqual(try player.copyCurrentVideoFrame(format: .i420)?.size, PixelSize(width: 80, height: 90))
        XCTAssertNil(smaller.error)
    }

    func testPlay_whenInterlaced_deinterlaces() async throws {
        let url = try TestMedia.interlaced()
        let woven = try Self.ffmpegFirstLuma(url, size: PixelSize(width: 320, height: 180))
        let player = try await Player.ready(url)
        let frame = try XCTUnwrap(try player.copyCurrentVideoFrame(format: .i420))
        XCTAssertEqual(frame.size, PixelSize(width: 320, height: 180))
        let shown = Self.combedFraction(frame.data.prefix(320 * 180), width: 320, height: 180)
        let raw = Self.combedFraction(woven, width: 320, height: 180)
        XCTAssertGreaterThan(raw, 0.01, "the woven frame combs where the pattern moves")
        XCTAssertLessThan(shown, raw / 3, "the frame shown does not: \(shown) of pixels combed, \(raw) woven")
    }

    // MARK: - MPEG-TS time

    func testProbe_whenTransportStream_countsTrackTimesFromTheContainerStart() async throws {
        let asset = URLAsset(url: try TestMedia.frameCodeTransportStream())
        let duration = try await asset.duration
        XCTAssertEqual(duration.seconds, 6.021, accuracy: 0.002, "libavformat's duration, from its start")
        let videoTracks = try await asset.loadTracks(withMediaType: .video)
        let audioTracks = try await asset.loadTracks(withMediaType: .audio)
        let video = try XCTUnwrap(videoTracks.first)
        let audio = try XCTUnwrap(audioTracks.first)
        XCTAssertEqual(audio.timeRange.start.seconds, 0, accuracy: 0.0001, "the audio starts the stream")
        XCTAssertEqual(video.timeRange.start.seconds, 1024.0 / 48_000, accuracy: 0.0001, "21 ms after it")
    }

    /// Item time counts from the container's start, as libavformat's does: frame n (n/30 s into the
    /// clip's video) is shown from item time `videoStart + n/30`, and not 0.7 s off as with
    /// GStreamer's own origin (its first PCR).
    func testPlay_whenAV1_showsTheExactFramesAndEnds() async throws {
        // AV1 decodes with gstreamer1.0-plugins-bad's av1dec (libaom), which setup installs.
        let player = try await Player.ready(try TestMedia.frameCodeAV1(seconds: 2))
        let codecs = try await player.currentItem!.asset.loadTracks(withMediaType: .video).map(\.codec)
        XCTAssertEqual(codecs, ["av1"])
        XCTAssertEqual(try player.shownFrame(), 0)
        for frame in [45, 12, 59] {
            let finished = await player.seek(to: frames(Int64(frame)), toleranceBefore: .zero, toleranceAfter: .zero)
            XCTAssertTrue(finished)
            XCTAssertEqual(try player.shownFrame(), frame, "the exact frame after an exact seek in AV1")
        }
        _ = await player.seek(to: .zero)
        let events = player.currentItem!.events
        let ended = Task { try await first(in: events, within: 10, "end") { $0 == .didPlayToEndTime } }
        player.play()
        _ = try await ended.value
    }

    func testPlay_whenTransportStream_countsItemTimeFromTheFirstFrame() async throws {
        let url = try TestMedia.frameCodeTransportStream()
        let tracks = try await URLAsset(url: url).loadTracks(withMediaType: .video)
        let videoStart = try XCTUnwrap(tracks.first).timeRange.start.seconds
        let player = try await Player.ready(url)
        XCTAssertEqual(try player.shownFrame(), 0)
        XCTAssertEqual(player.currentTime().seconds, 0, accuracy: 0.03, "prerolled at the start")
        let item = try XCTUnwrap(player.currentItem)
        let assetDuration = try await item.asset.duration
        XCTAssertEqual(item.duration, assetDuration, "the item lasts as long as its asset says")
        XCTAssertEqual(item.seekableTimeRanges, [MediaTimeRange(start: .zero, duration: assetDuration)])
        for target in [3.01, 1.5, 4.99, 0.5] {
            let time = MediaTime(seconds: target, preferredTimescale: 1_000_000)
            let finished = await player.seek(to: time, toleranceBefore: .zero, toleranceAfter: .zero)
            XCTAssertTrue(finished)
            let expected = Int(((target - videoStart) * 30).rounded(.down))
            XCTAssertEqual(try player.shownFrame(), expected, "the frame shown at \(target) s")
            XCTAssertEqual(player.currentTime().seconds, target, accuracy: 0.001, "the time at \(target) s")
        }
        // A fast seek lands on a keyframe (one a second, frame 0, 30, 60...) at or before the target,
        // found in the container in item time.
        _ = await player.seek(to: MediaTime(seconds: 2.5, preferredTimescale: 1_000_000))
        XCTAssertEqual(try player.shownFrame(), 60)
        XCTAssertEqual(player.currentTime().seconds, videoStart + 2, accuracy: 0.001)
    }

    /// Each pass of a gapless queue of transport streams counts from its own start: the frames
    /// carry item times from the video's start on, and the running time runs on with item time,
    /// passing from one item to the next at the first's duration.
    func testQueue_whenTransportStreams_countsEachPassFromItsStart() async throws {
        let url = try TestMedia.frameCodeTransportStream(seconds: 1)
        let tracks = try await URLAsset(url: url).loadTracks(withMediaType: .video)
        let videoStart = try XCTUnwrap(tracks.first).timeRange.start
        let first = PlayerItem(url: url)
        let second = PlayerItem(url: url)
        let player = QueuePlayer(items: [first, second], video: Headless.video, audioSinkDescription: Headless.audio)
        try await first.waitUntilReady()
        let presented = player.presentedFrames
        player.play()
        let frames = try await collect(55, from: presented, within: 15, "both passes presented")
        let restart = try XCTUnwrap(
            frames.indices.dropLast().first { frames[$0 + 1].presentationTimestamp < frames[$0].presentationTimestamp },
            "the second pass starts")
        for index in frames.indices.dropLast() {
            let (this, next) = (frames[index], frames[index + 1])
            let itemStep =
                index == restart
                ? first.duration - this.presentationTimestamp + next.presentationTimestamp
                : next.presentationTimestamp - this.presentationTimestamp
            XCTAssertEqual(
                (next.runningTime - this.runningTime).seconds, itemStep.seconds, accuracy: 0.002,
                "running time from frame \(index) to the next")
        }
        for (index, frame) in frames.enumerated() {
            let inPass = index <= restart ? index : index - restart - 1
            let expected = videoStart.seconds + Double(inPass) / 30
            XCTAssertEqual(frame.presentationTimestamp.seconds, expected, accuracy: 0.001, "frame \(index)")
        }
    }

    // MARK: - Pictures

    /// The luma plane of ffmpeg's first frame of `url` (display matrix applied, not deinterlaced),
    /// in video range as the player's I420 copies are.
    private static func ffmpegFirstLuma(_ url: URL, size: PixelSize) throws -> Data {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lockstep-first-frame-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString).raw")
        defer { try? FileManager.default.removeItem(at: out) }
        try TestMedia.run(
            "/usr/bin/ffmpeg",
            [
                "-nostdin", "-loglevel", "error", "-y", "-i", url.path, "-frames:v", "1", "-f", "rawvideo",
                "-pix_fmt", "yuv420p", out.path,
            ])
        return try Data(contentsOf: out).prefix(size.width * size.height)
    }

    /// The share of pixels whose neighbours above and below both differ from them the same way by
    /// more than 20 levels: the teeth of two fields from different moments woven into one frame.
    private static func combedFraction(_ plane: some Collection<UInt8>, width: Int, height: Int) -> Double {
        let pixels = Array(plane)
        var combed = 0
        for y in 1..<(height - 1) {
            for x in 0..<width {
                let above = Int(pixels[(y - 1) * width + x])
                let here = Int(pixels[y * width + x])
                let below = Int(pixels[(y + 1) * width + x])
                if (above - here) * (below - here) > 400 { combed += 1 }
            }
        }
        return Double(combed) / Double(width * (height - 2))
    }
}
