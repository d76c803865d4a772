import Foundation
import GroundTruth
import LockstepLocks
import LockstepTime
import TestSupport
import XCTest

@testable import WallPlayer

/// On the frame-code clip: 30 fps, a keyframe every 30 frames, each frame's number in its colour.
final class AssetImageGeneratorTests: XCTestCase {
    private func frameNumber(_ image: AssetImageGenerator.Image) -> Int? {
        FrameCode.decode(i420: image.frame.data, width: image.frame.size.width, height: image.frame.size.height)
    }

    private func generator(for url: URL, exact: Bool) -> AssetImageGenerator {
        let generator = AssetImageGenerator(asset: URLAsset(url: url))
        generator.imageFormat = .i420
        if exact {
            generator.requestedTimeToleranceBefore = .zero
            generator.requestedTimeToleranceAfter = .zero
        }
        return generator
    }

    func testZeroTolerance_givesTheExactFrame() async throws {
        let generator = generator(for: try TestMedia.frameCode(seconds: 4), exact: true)
        for frame: Int64 in [45, 7, 119, 30, 0] {
            let image = try await generator.image(at: frames(frame))
            XCTAssertEqual(frameNumber(image), Int(frame), "the frame at \(frame)/30 s")
            XCTAssertEqual(image.actualTime.seconds, frames(frame).seconds, accuracy: 1e-6, "nanoseconds, rounded")
            XCTAssertEqual(image.requestedTime, frames(frame))
            XCTAssertEqual(image.frame.size, PixelSize(width: 160, height: 90))
        }
        // Between two frames: the one shown then.
        let between = try await generator.image(at: MediaTime(value: 1510, timescale: 1000))
        XCTAssertEqual(frameNumber(between), 45)
        XCTAssertEqual(between.actualTime.seconds, 1.5, accuracy: 1e-6, "the time the frame starts at")
    }

    /// Item time as the player counts it, from the container's start (RealWorldMediaTests).
    func testTransportStream_countsFromTheContainersStart() async throws {
        let url = try TestMedia.frameCodeTransportStream()
        let tracks = try await URLAsset(url: url).loadTracks(withMediaType: .video)
        let videoStart = try XCTUnwrap(tracks.first).timeRange.start.seconds
        let image = try await generator(for: url, exact: true).image(at: MediaTime(value: 301, timescale: 100))
        XCTAssertEqual(frameNumber(image), Int(((3.01 - videoStart) * 30).rounded(.down)))
        XCTAssertEqual(image.actualTime.seconds, videoStart + 89.0 / 30, accuracy: 1e-6)
    }

    func testDefaultTolerance_landsOnTheKeyframeAtOrBefore() async throws {
        let generator = generator(for: try TestMedia.frameCode(seconds: 4), exact: false)
        let image = try await generator.image(at: frames(75))
        XCTAssertEqual(frameNumber(image), 60)
        XCTAssertEqual(image.actualTime.seconds, 2, accuracy: 1e-6)
        // A narrow window after the target reaches the next keyframe instead.
        generator.requestedTimeToleranceBefore = .zero
        generator.requestedTimeToleranceAfter = frames(10)
        let after = try await generator.image(at: frames(85))
        XCTAssertEqual(frameNumber(after), 90)
    }

    func testMaximumSize_scalesDownKeepingTheAspectRatio() async throws {
        let generator = generator(for: try TestMedia.frameCode(seconds: 1), exact: true)
        generator.maximumSize = PixelSize(width: 64, height: 64)
        let small = try await generator.image(at: .zero)
        XCTAssertEqual(small.frame.size, PixelSize(width: 64, height: 36))
        generator.maximumSize = PixelSize(width: 1000, height: 1000)
        let whole = try await generator.image(at: .zero)
        XCTAssertEqual(whole.frame.size, PixelSize(width: 160, height: 90), "never scaled up")
        XCTAssertEqual(
            AssetImageGenerator.fit(PixelSize(width: 1920, height: 1080), within: PixelSize(width: 0, height: 270)),
            PixelSize(width: 480, height: 270), "a zero side is free")
    }

    func testPreferredTrackTransform_turnsThePictureUpright() async throws {
        let generator = generator(for: try TestMedia.rotated(), exact: true)
        let stored = try await generator.image(at: .zero)
        XCTAssertEqual(stored.frame.size, PixelSize(width: 320, height: 180), "as stored, by default")
        generator.appliesPreferredTrackTransform = true
        let upright = try await generator.image(at: .zero)
        XCTAssertEqual(upright.frame.size, PixelSize(width: 180, height: 320))
    }

    func testResults_inOrder_withFailuresAndCancellation() async throws {
        let generator = generator(for: try TestMedia.frameCode(seconds: 2), exact: true)
        let times = [frames(10), MediaTime(value: 5, timescale: 1), frames(-1), frames(20)]
        var results: [AssetImageGenerator.Result] = []
        for await result in generator.images(for: times) { results.append(result) }
        XCTAssertEqual(results.count, 4)
        guard case .succeeded(let first) = results[0], case .failed(_, .timePastEnd) = results[1],
            case .failed(_, .invalidTime) = results[2], case .succeeded(let last) = results[3]
        else { return XCTFail("results: \(results)") }
        XCTAssertEqual(frameNumber(first), 10)
        XCTAssertEqual(frameNumber(last), 20)

        // Requests made before a cancel end cancelled, once the one being served is done.
        let many = (0..<40).map { frames(Int64($0)) }
        let stream = generator.images(for: many)
        generator.cancelAllImageGeneration()
        var cancelled = 0
        for await result in stream {
            if case .cancelled = result { cancelled += 1 }
        }
        XCTAssertGreaterThanOrEqual(cancelled, 39)
        let again = try await generator.image(at: frames(5))
        XCTAssertEqual(frameNumber(again), 5, "requests after the cancel are served")
    }

    func testCompletionHandler_isCalledOncePerTime_inOrder() async throws {
        let generator = generator(for: try TestMedia.frameCode(seconds: 2), exact: true)
        let times = [frames(3), frames(50), MediaTime(value: 9, timescale: 1)]
        let results = try await withTimeout(20, "three completions") {
            await withCheckedContinuation { (done: CheckedContinuation<[AssetImageGenerator.Result], Never>) in
                let collected = Mutex<[AssetImageGenerator.Result]>([])
                generator.generateImagesAsynchronously(forTimes: times) { result in
                    let all = collected.withLock { results -> [AssetImageGenerator.Result]? in
                        results.append(result)
                        return results.count == times.count ? results : nil
                    }
                    if let all { done.resume(returning: all) }
                }
            }
        }
        guard case .succeeded(let first) = results[0], case .succeeded(let second) = results[1],
            case .failed(let requested, .timePastEnd) = results[2]
        else { return XCTFail("results: \(results)") }
        XCTAssertEqual(frameNumber(first), 3)
        XCTAssertEqual(frameNumber(second), 50)
        XCTAssertEqual(requested, times[2])
    }

    func testNotMedia_failsWithTheReason() async throws {
        let text = try TestMedia.scratchFile(named: "not-a-video.mp4", contents: Data("text\n".utf8))
        let generator = AssetImageGenerator(asset: URLAsset(url: text))
        do {
            _ = try await generator.image(at: .zero)
            XCTFail("an image of a text file")
        } catch {
            guard case .notAMediaFile = error else { return XCTFail("wrong error: \(error)") }
        }
        let audio = AssetImageGenerator(asset: URLAsset(url: try TestMedia.audioOnly()))
        do {
            _ = try await audio.image(at: .zero)
            XCTFail("an image of audio")
        } catch {
            guard case .noPlayableTrack = error else { return XCTFail("wrong error: \(error)") }
        }
    }
}
