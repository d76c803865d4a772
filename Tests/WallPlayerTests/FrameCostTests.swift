import LockstepTime
import TestSupport
import WallPlayer
import XCTest

/// `FrameCost`: decoding and scaling a stretch of a file at full speed, timed per frame.
final class FrameCostTests: XCTestCase {
    func testMeasure_timesTheFramesAfterThePreroll_againstTheFilesFramePeriod() throws {
        let clip = try TestMedia.frameCode(seconds: 4)
        let cost = try FrameCost.measure(
            url: clip, video: VideoOutputSettings(sourceCrop: NormalizedRect(x: 0, y: 0, width: 0.5, height: 1),
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
