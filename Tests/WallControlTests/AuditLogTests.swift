import Foundation
import XCTest

@testable import WallControl

/// The daemon's audit log: kept across restarts, read back line by line with a cut write skipped
/// and counted, and bounded by rotation.
final class AuditLogTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-audit-\(getpid())-\(UUID())")
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    private func record(_ action: String, outcome: String = "done") -> AuditRecord {
        AuditRecord(
            atUnixMs: 1_800_000_000_000, who: "operator", via: "login 1", action: action, version: 3, outcome: outcome)
    }

    func testRecords_outliveTheDaemon_asJSONLines() throws {
        let path = folder.appendingPathComponent("audit.jsonl").path
        let log = AuditLog(path: path)
        XCTAssertNil(log.record(record("pause")))
        XCTAssertNil(log.record(record("cue intro", outcome: "refused")))
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, 2)
        XCTAssertTrue(lines[0].contains(#""action":"pause""#), String(lines[0]))
        let again = AuditLog(path: path)
        XCTAssertEqual(again.recent.map(\.action), ["pause", "cue intro"])
        XCTAssertEqual(again.unreadableLines, 0)
    }

    func testACutWrite_isSkippedAndCounted_neverTakenForARecord() throws {
        let path = folder.appendingPathComponent("audit.jsonl").path
        AuditLog(path: path).record(record("pause"))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(#"{"atUnixMs":18000,"who":"oper"#.utf8))
        try handle.close()
        let again = AuditLog(path: path)
        XCTAssertEqual(again.recent.map(\.action), ["pause"])
        XCTAssertEqual(again.unreadableLines, 1)
        // The next record starts on a line of its own... after the cut one, which stays unreadable.
        again.record(record("resume"))
        XCTAssertEqual(AuditLog(path: path).recent.map(\.action).last, "resume")
    }

    func testPastItsSize_theFileIsRotated_oneGenerationKept() throws {
        let path = folder.appendingPathComponent("audit.jsonl").path
        let log = AuditLog(path: path, largestFile: 1000)
        for index in 0..<30 { log.record(record("seek \(index)")) }
        let current = try Data(contentsOf: URL(fileURLWithPath: path)).count
        let older = try Data(contentsOf: URL(fileURLWithPath: path + ".1")).count
        XCTAssertLessThanOrEqual(current, 1000)
        XCTAssertLessThanOrEqual(older, 1000)
        XCTAssertEqual(log.recent.last?.action, "seek 29")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + ".2"))
    }
}
