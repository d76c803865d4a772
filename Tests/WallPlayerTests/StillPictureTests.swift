import Foundation
import LockstepTime
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
        still.present()
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

    /// A PNG: left half red, right half blue.
    private func twoColourImage(width: Int, height: Int) throws -> String {
        let raw = folder.appendingPathComponent("still.rgb")
        var pixels: [UInt8] = []
        for _ in 0..<height {
            for x in 0..<width { pixels += x < width / 2 ? [0xE0, 0x14, 0x14] : [0x14, 0x14, 0xE0] }
        }
        try Data(pixels).write(to: raw)
        let path = folder.appendingPathComponent("still.png").path
        try TestMedia.run(
            "/usr/bin/ffmpeg",
            [
                "-nostdin", "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s",
                "\(width)x\(height)",
                "-i", raw.path, "-frames:v", "1", path,
            ])
        return path
    }

    func testDecodeImage_readsThePixels_andKeepsTheCroppedPart() throws {
        let path = try twoColourImage(width: 66, height: 30)
        let whole = try StillPicture.decodeImage(atPath: path)
        XCTAssertEqual(whole.size, PixelSize(width: 66, height: 30))
        XCTAssertEqual(whole.rgb.count, 66 * 30 * 3)
        XCTAssertEqual(Array(whole.rgb[0..<3]), [0xE0, 0x14, 0x14])
        XCTAssertEqual(Array(whole.rgb[(30 * 66 - 1) * 3..<30 * 66 * 3]), [0x14, 0x14, 0xE0])
        // The right half: blue only; an odd width keeps its rows apart (RGB rows are padded to 4 bytes).
        let right = try StillPicture.decodeImage(
            atPath: path, crop: NormalizedRect(x: 0.5, y: 0, width: 0.5, height: 1))
        XCTAssertEqual(right.size, PixelSize(width: 33, height: 30))
        for pixel in stride(from: 0, to: right.rgb.count, by: 3) {
            XCTAssertEqual(Array(right.rgb[pixel..<pixel + 3]), [0x14, 0x14, 0xE0], "pixel \(pixel / 3)")
        }
    }

    func testDecodeImage_ofNoImage_namesTheFileAndWhy() throws {
        XCTAssertThrowsError(try StillPicture.decodeImage(atPath: folder.appendingPathComponent("none.png").path)) {
            XCTAssertTrue("\($0)".contains("none.png"), "\($0)")
        }
        let text = folder.appendingPathComponent("notes.png")
        try "not a picture".write(to: text, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try StillPicture.decodeImage(atPath: text.path)) {
            XCTAssertTrue("\($0)".contains("notes.png"), "\($0)")
        }
        XCTAssertThrowsError(try StillPicture.decodeImage(atPath: "/dev/zero")) {
            XCTAssertTrue("\($0)".contains("character device"), "\($0)")
        }
    }

    func testStillPicture_withAnOutputSize_isStretchedToIt() async throws {
        let size = PixelSize(width: 32, height: 16)
        let file = folder.appendingPathComponent("scaled.rgb").path
        let still = try StillPicture(
            rgb: picture(size), size: size,
            output: VideoOutputSettings(
                sinkDescription: "videoconvert ! video/x-raw,format=RGB ! filesink location=\(file)",
                outputSize: PixelSize(width: 64, height: 32)))
        still.present()
        try await withTimeout(10, "a scaled frame") {
            while ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0) < 64 * 32 * 3 {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        still.close()
        let frame = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)).prefix(64 * 32 * 3))
        // Row 10: red up to the middle, blue after it.
        let row = Array(frame[10 * 64 * 3..<11 * 64 * 3])
        XCTAssertEqual(Array(row[0..<3]), [220, 20, 20])
        XCTAssertEqual(Array(row[29 * 3..<30 * 3]), [220, 20, 20])
        XCTAssertEqual(Array(row[34 * 3..<35 * 3]), [20, 20, 220])
        XCTAssertEqual(Array(row[63 * 3..<64 * 3]), [20, 20, 220])
    }

    /// The size of `path` in bytes, 0 when it is not there.
    private static func bytes(of path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }

    func testARealTimeRenderThread_isLoweredAsItLeaves_backToTheThreadPool() async throws {
        let before = Self.realTimeThreads()
        let size = PixelSize(width: 16, height: 8)
        let still = try StillPicture(
            rgb: picture(size), size: size, output: VideoOutputSettings(sinkDescription: "fakesink"),
            clock: MasterClock.host, realtimePriority: 50)
        guard case .realtime = still.renderThreadPriority else {
            throw XCTSkip("SCHED_FIFO not granted here: \(still.renderThreadPriority)")
        }
        still.present()
        XCTAssertGreaterThan(Self.realTimeThreads(), before, "its render thread at SCHED_FIFO")
        still.close()
        // GStreamer's pool keeps the thread for the next task: at normal priority.
        XCTAssertLessThanOrEqual(Self.realTimeThreads(), before, "a SCHED_FIFO thread left behind")
    }

    /// This process's threads scheduled SCHED_FIFO (policy 1, field 41 of /proc/self/task/ID/stat).
    private static func realTimeThreads() -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            guard let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return false }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 38 && fields[38] == "1"
        }.count
    }

    func testAPreparedPicture_isDrawnAtItsHostTime_notBefore_andHidingStopsItsRepeats() async throws {
        let size = PixelSize(width: 16, height: 8)
        let frameBytes = size.width * size.height * 3
        let file = folder.appendingPathComponent("scheduled.rgb").path
        let clock = MasterClock.host
        let still = try StillPicture(
            rgb: picture(size), size: size,
            output: VideoOutputSettings(
                sinkDescription:
                    "videoconvert ! video/x-raw,format=RGB ! filesink buffer-mode=unbuffered location=\(file)"),
            clock: clock, latency: MediaTime(value: 20, timescale: 1000), realtimePriority: 50)
        defer { still.close() }
        // Its render thread runs behind a queue, scheduled as asked (or saying why not).
        switch still.renderThreadPriority {
        case .realtime(let priority): XCTAssertEqual(priority, 50)
        case .normal(let reason): XCTAssertTrue(reason.hasPrefix("SCHED_FIFO refused"), reason)
        case .notStarted: XCTFail("the render thread never started")
        }
        // Prepared: the first frame is there to copy, and nothing reached the sink.
        let copy = try XCTUnwrap(try still.copyCurrentVideoFrame(format: .rgb))
        XCTAssertEqual(copy.size, size)
        XCTAssertEqual([UInt8](copy.data), picture(size))
        let at = clock.now() + MediaTime(value: 400, timescale: 1000)
        still.present(at: at)
        while clock.now() < at - MediaTime(value: 10, timescale: 1000) {
            guard Self.bytes(of: file) == 0 else {
                XCTFail("drawn \((at - clock.now()).seconds) s before its time")
                break
            }
            try await Task.sleep(for: .milliseconds(2))
        }
        try await withTimeout(2, "the first frame at its time") {
            while Self.bytes(of: file) < frameBytes { try await Task.sleep(for: .milliseconds(2)) }
        }
        XCTAssertLessThan((clock.now() - at).seconds, 0.150, "drawn late")
        // Repeated a few times a second until hidden; then no more.
        try await withTimeout(2, "a repeat") {
            while Self.bytes(of: file) < 2 * frameBytes { try await Task.sleep(for: .milliseconds(10)) }
        }
        still.hide()
        try await Task.sleep(for: .milliseconds(250))
        let hidden = Self.bytes(of: file)
        try await Task.sleep(for: .milliseconds(600))
        XCTAssertEqual(Self.bytes(of: file), hidden, "frames after hide()")
    }
}
