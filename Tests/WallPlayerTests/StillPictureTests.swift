import Foundation
import TestSupport
import WallPlayer
import XCTest

final class StillPictureTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("still-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    /// Left half red, right half blue.
    private func picture(_ size: PixelSize) -> [UInt8] {
        var pixels: [UInt8] = []
        for _ in 0..<size.height {
            for x in 0..<size.width { pixels += x < size.width / 2 ? [220, 20, 20] : [20, 20, 220] }
        }
        return pixels
    }

    /// The frames the sink got, as raw RGB in a file, once `count` of them have arrived.
    private func show(_ rgb: [UInt8], size: PixelSize, caption: [CaptionLine], frames count: Int) async throws
        -> [[UInt8]]
    {
        let file = folder.appendingPathComponent("frames-\(caption.count).rgb").path
        let still = try StillPicture(
            rgb: rgb, size: size, caption: caption,
            output: VideoOutputSettings(
                sinkDescription: "videoconvert ! video/x-raw,format=RGB ! filesink location=\(file)"))
        let frameBytes = size.width * size.height * 3
        try await withTimeout(10, "\(count) frames of the still picture") {
            while ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0) < count * frameBytes {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        still.close()
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        return (0..<count).map { Array(data[$0 * frameBytes..<($0 + 1) * frameBytes]) }
    }

    func testStillPicture_withoutCaption_showsThePixelsAsGiven_again() async throws {
        let size = PixelSize(width: 64, height: 48)
        let rgb = picture(size)
        let frames = try await show(rgb, size: size, caption: [], frames: 3)
        for (index, frame) in frames.enumerated() { XCTAssertEqual(frame, rgb, "frame \(index)") }
    }

    func testStillPicture_withCaption_drawsTheTextWhereAsked() async throws {
        let size = PixelSize(width: 320, height: 180)
        let rgb = picture(size)
        let frame = try await show(
            rgb, size: size, caption: [CaptionLine("Screen <3> & \"more\"", height: 0.1)], frames: 1)[0]
        // Rows whose pixels changed: all of them in the band around 30 % of the height.
        let changedRows = (0..<size.height).filter { row in
            let range = row * size.width * 3..<(row + 1) * size.width * 3
            return frame[range] != rgb[range]
        }
        XCTAssertFalse(changedRows.isEmpty, "no caption drawn")
        let centre = Double(changedRows.reduce(0, +)) / Double(changedRows.count) / Double(size.height)
        XCTAssertEqual(centre, 0.3, accuracy: 0.08, "caption rows \(changedRows)")
        XCTAssertGreaterThan(changedRows.min()!, size.height / 10)
        XCTAssertLessThan(changedRows.max()!, size.height / 2)
    }

    func testStillPicture_withABadSinkOrSize_throwsNamingIt() {
        let size = PixelSize(width: 8, height: 8)
        XCTAssertThrowsError(
            try StillPicture(rgb: picture(size), size: size, output: VideoOutputSettings(sinkDescription: "nosuchsink"))
        ) { error in
            XCTAssertTrue("\(error)".contains("nosuchsink"), "\(error)")
        }
        XCTAssertThrowsError(
            try StillPicture(rgb: [1, 2, 3], size: size, output: VideoOutputSettings(sinkDescription: "fakesink"))
        ) { error in
            XCTAssertTrue("\(error)".contains("needs 192 bytes of RGB, got 3"), "\(error)")
        }
        // A sink that fails to start: its own words come back.
        XCTAssertThrowsError(
            try StillPicture(
                rgb: picture(size), size: size,
                output: VideoOutputSettings(sinkDescription: "filesink location=\(folder.path)/missing/folder/file"))
        ) { error in
            XCTAssertTrue("\(error)".contains("missing/folder/file"), "\(error)")
        }
    }
}
