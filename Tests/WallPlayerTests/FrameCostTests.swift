import LockstepTime
import TestSupport
import WallPlayer
import XCTest

/// `FrameCost`: decoding and scaling a stretch of a file at full speed, timed per frame.
final class FrameCostTests: XCTestCase {
    func testMeasure_timesTheFramesAfterThePreroll_againstTheFilesFramePeriod() throws {
        let clip = try TestMedia.frameCode(seconds: 4)
        let cost = try FrameCost.measure(
            url: clip,
            video: VideoOutputSettings(
                sourceCrop: NormalizedRect(x: 0, y: 0, width: 0.5, height: 1),
                outputSize: PixelSize(width: 64, height: 36)), start: MediaTime(value: 1, timescale: 1), frames: 30)
        // The stretch is 31 frame periods long; the prerolled one is not counted.
        XCTAssertTrue((29...31).contains(cost.frames), "\(cost.frames) frames timed")
        XCTAssertEqual(cost.framePeriod?.seconds ?? 0, 1.0 / 30, accuracy: 1e-6)
        XCTAssertGreaterThan(cost.perFrame, .zero)
        XCTAssertNotNil(cost.shareOfFramePeriod)
        // Near the end, the stretch moves back to fit in the file.
        let late = try FrameCost.measure(
            url: clip, video: VideoOutputSettings(), start: MediaTime(value: 39, timescale: 10), frames: 30)
        XCTAssertTrue((29...31).contains(late.frames), "\(late.frames) frames timed near the end")
    }

    /// A node answers a check within the measurement's limit: a file whose stretch does not fit
    /// is measured over the frames that did (or, when not even the preroll fits, fails saying so).
    func testMeasure_staysWithinItsLimit() throws {
        let clip = try TestMedia.frameCode(seconds: 8, size: "1920x1080")
        let video = VideoOutputSettings(outputSize: PixelSize(width: 1280, height: 720))
        // The whole stretch, unbounded, for the frames it has and the time it takes here.
        let began = LocalClock.monotonic.now()
        let whole = try FrameCost.measure(
            url: clip, video: video, frames: 230, limit: MediaTime(value: 60, timescale: 1))
        let wholeTook = LocalClock.monotonic.now() - began
        XCTAssertGreaterThan(whole.frames, 200)
        // A limit of a fifth of that.
        let limit = wholeTook.multiplied(byRatio: 1, 5)
        let start = LocalClock.monotonic.now()
        do {
            let cut = try FrameCost.measure(url: clip, video: video, frames: 230, limit: limit)
            XCTAssertLessThan(cut.frames, whole.frames, "the stretch was cut at the limit")
            XCTAssertGreaterThan(cut.perFrame, .zero)
        } catch {
            XCTAssertTrue("\(error)".contains("within"), "\(error)")
        }
        let took = LocalClock.monotonic.now() - start
        XCTAssertLessThan(
            took.seconds, limit.seconds + 0.3, "limit \(limit.seconds) s, the whole stretch \(wholeTook.seconds) s")
    }

    func testMeasure_whenTheFileIsNotVideo_failsNamingIt() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-cost-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let text = folder.appendingPathComponent("notes.mp4")
        try Data("not a video".utf8).write(to: text)
        XCTAssertThrowsError(try FrameCost.measure(url: text, video: VideoOutputSettings())) { error in
            XCTAssertTrue("\(error)".contains("notes.mp4"), "\(error)")
        }
    }
}
