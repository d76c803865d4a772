import Foundation
import LockstepTime
import WallTimeline
import XCTest

final class TimelineStoreTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "lockstep-store-\(getpid())-\(name.hashValue)")
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

    func testSaveAndRecover_survivesARestart_andLeavesNoTemporaryFiles() throws {
        let store = TimelineStore(path: folder.appendingPathComponent("state/timeline.json").path)
        XCTAssertEqual(store.recover { _ in }, .nothing, "nothing stored yet")
        let first = try timeline()
        try store.save(first)
        let second = try first.applying(.pause, at: MediaTime(value: 105, timescale: 1))
        try store.save(second)
        XCTAssertEqual(TimelineStore(path: store.path).recover { _ in }, .timeline(second))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("state").path)
        XCTAssertEqual(leftovers, ["timeline.json"], "no temporary files left behind")
    }

    /// Two writes at once (a node's adoption and its move onto a new epoch shared one temporary
    /// name, and one of them failed with "No such file or directory"): each has its own.
    func testWritesAtOnce_eachSucceed_andLeaveOneWholeFile() throws {
        let store = TimelineStore(path: folder.appendingPathComponent("state/timeline.json").path)
        let base = try timeline()
        let versions = try (0..<16).map { index in
            try base.applying(.pause, at: MediaTime(value: 101 + Int64(index), timescale: 1))
        }
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: 64) { index in
            do {
                try store.save(versions[index % versions.count])
            } catch {
                failures.add("\(error)")
            }
        }
        XCTAssertEqual(failures.all, [])
        guard case .timeline(let kept) = store.recover(checking: { _ in }) else { return XCTFail("nothing whole kept") }
        XCTAssertTrue(versions.contains(kept))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("state").path)
        XCTAssertEqual(leftovers, ["timeline.json"])
    }

    /// Garbage, a truncated file, an empty one, a directory in its place, a timeline that fails the
    /// node's checks: each is set aside and reported, and the next save works.
    func testRecover_setsAsideWhatCannotBeUsed_andSavingStillWorks() throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("timeline.json").path
        let valid = try JSONEncoder().encode(try timeline())
        let cases: [(String, () throws -> Void, String)] = [
            ("garbage", { try Data([0xff, 0x00, 0x13]).write(to: URL(fileURLWithPath: path)) }, "not a timeline"),
            ("truncated", { try valid.prefix(40).write(to: URL(fileURLWithPath: path)) }, "not a timeline"),
            ("empty", { try Data().write(to: URL(fileURLWithPath: path)) }, "not a timeline"),
            (
                "directory",
                { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) },
                "it is a directory"
            ),
            ("another wall", { try valid.write(to: URL(fileURLWithPath: path)) }, "wall \"lobby\""),
        ]
        for (name, make, reason) in cases {
            try make()
            let store = TimelineStore(path: path)
            let recovered = store.recover { timeline throws(TimelineError) in
                guard timeline.wall == "hall" else { throw .otherWall(expected: "hall", got: timeline.wall) }
            }
            guard case .setAside(let problem, let keptAt) = recovered else {
                XCTFail("\(name): \(recovered)")
                continue
            }
            XCTAssertTrue(problem.contains(reason), "\(name): \(problem)")
            let kept = try XCTUnwrap(keptAt, name)
            XCTAssertTrue(FileManager.default.fileExists(atPath: kept), "\(name): kept for the operator")
            XCTAssertFalse(FileManager.default.fileExists(atPath: path), name)
            try store.save(try timeline())
            XCTAssertEqual(store.recover { _ in }, .timeline(try timeline()), name)
            try FileManager.default.removeItem(atPath: path)
            try FileManager.default.removeItem(atPath: kept)
        }
    }

    func testRecover_refusesATimelineOutsideTheLimits() throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("timeline.json").path
        var text = String(decoding: try JSONEncoder().encode(try timeline()), as: UTF8.self)
        text = text.replacingOccurrences(of: "\"version\":1", with: "\"version\":18446744073709551615")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        guard case .setAside(let problem, _) = TimelineStore(path: path).recover(checking: { _ in }) else {
            return XCTFail("a version past the limit is not used")
        }
        XCTAssertTrue(problem.contains("outside 1 to"), problem)
    }

    func testSave_whenTheFolderCannotBeMade_saysWhere() throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data().write(to: folder.appendingPathComponent("file"))
        let store = TimelineStore(path: folder.appendingPathComponent("file/timeline.json").path)
        XCTAssertThrowsError(try store.save(try timeline())) { error in
            XCTAssertTrue("\(error)".hasPrefix(store.path), "\(error)")
            XCTAssertTrue("\(error)".hasSuffix("/file is not a directory"), "\(error)")
        }
    }
}

private final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var failures: [String] = []
    func add(_ failure: String) { lock.withLock { failures.append(failure) } }
    var all: [String] { lock.withLock { failures } }
}
