import Foundation
import LockstepTime
import WallTimeline
import XCTest

final class TimelineStoreTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-store-\(getpid())-\(name.hashValue)")
        try? FileManager.default.removeItem(at: folder)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    private func timeline() throws -> Timeline {
        try Timeline(
            wall: "lobby", epoch: 3,
            playlist: Playlist(entries: [TimelineEntry(media: "a.mp4", outPoint: MediaTime(value: 10, timescale: 1))]),
            start: MediaTime(value: 100, timescale: 1))
    }

    func testSaveAndLoad_survivesARestart_andRefusesOlderVersions() throws {
        let store = TimelineStore(path: folder.appendingPathComponent("state/timeline.json").path)
        XCTAssertNil(try store.load(), "nothing stored yet")
        let first = try timeline()
        try store.save(first)
        let second = try first.applying(.pause, at: MediaTime(value: 105, timescale: 1))
        try store.save(second)
        XCTAssertEqual(try TimelineStore(path: store.path).load(), second)
        XCTAssertThrowsError(try store.save(first)) { error in
            XCTAssertEqual("\(error)", "not stored: timeline version 1 is not newer than the version 2 in force")
        }
        XCTAssertEqual(try store.load(), second, "a refused save leaves the stored timeline as it was")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("state").path)
        XCTAssertEqual(leftovers, ["timeline.json"], "no temporary files left behind")
    }

    func testLoad_whenTheFileIsCorrupt_saysSo() throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("timeline.json").path
        try Data("{\"wall\": ".utf8).write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try TimelineStore(path: path).load()) { error in
            XCTAssertTrue("\(error)".hasPrefix("\(path): the stored timeline is not readable JSON"), "\(error)")
        }
    }

    func testSave_whenTheFolderCannotBeMade_saysWhere() throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data().write(to: folder.appendingPathComponent("file"))
        let store = TimelineStore(path: folder.appendingPathComponent("file/timeline.json").path)
        XCTAssertThrowsError(try store.save(try timeline())) { error in
            XCTAssertTrue("\(error)".hasPrefix(store.path), "\(error)")
            XCTAssertTrue("\(error)".hasSuffix("Not a directory"), "\(error)")
        }
    }
}
