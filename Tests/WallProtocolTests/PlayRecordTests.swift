import Foundation
import XCTest

@testable import WallProtocol

/// Proof of play's records and the file that keeps them: rotated across several generations, read
/// back oldest first with a cut write skipped, and exported as RFC 4180 CSV.
final class PlayRecordTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-plays-\(getpid())-\(UUID())")
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    private func play(_ index: Int, media: String = "/m/clip.mp4") -> PlayRecord {
        PlayRecord(
            node: "a", kind: .clip, media: media, sha256: String(repeating: "ab", count: 32), entry: 0, pass: index,
            mediaFromSeconds: 0, mediaToSeconds: 2, fromUnixMs: 1_800_000_000_000 + Int64(index) * 2000,
            toUnixMs: 1_800_000_002_000 + Int64(index) * 2000, clock: "master", ended: .end, frames: 60, version: 4)
    }

    func testPlays_rotateAcrossTheirGenerations_andReadBackOldestFirst_theOldestDropped() throws {
        let path = folder.appendingPathComponent("n.plays.jsonl").path
        let log = JSONLinesLog<PlayRecord>(path: path, largestFile: 2000, keptFiles: 3)
        for index in 0..<40 { XCTAssertNil(log.append(play(index))) }
        for file in log.files {
            let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber).intValue
            XCTAssertLessThanOrEqual(size, 2000, file)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + ".3"))
        let (records, unreadable) = JSONLinesLog<PlayRecord>(path: path, largestFile: 2000, keptFiles: 3).read()
        XCTAssertEqual(unreadable, 0)
        XCTAssertEqual(records.last?.pass, 39)
        XCTAssertEqual(records.map { $0.pass! }, Array(records.first!.pass!...39), "oldest first, none missing")
        XCTAssertLessThan(records.count, 40, "the oldest generation was dropped")
    }

    func testACutWrite_isSkippedAndCounted_andTheNextPlayStartsALineOfItsOwn() throws {
        let path = folder.appendingPathComponent("n.plays.jsonl").path
        let log = JSONLinesLog<PlayRecord>(path: path)
        log.append(play(0))
        // A power cut in the middle of the second record.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(#"{"node":"a","kind":"cl"#.utf8))
        try handle.close()
        let reopened = JSONLinesLog<PlayRecord>(path: path)
        reopened.append(play(2))
        let (records, unreadable) = reopened.read()
        XCTAssertEqual(records.map(\.pass), [0, 2])
        XCTAssertEqual(unreadable, 1)
    }

    func testTheCSV_quotesWhatNeedsIt_andSaysEveryColumn() throws {
        var record = play(1, media: "/m/a \"quoted\", name.mp4")
        record.ended = .cut
        record.problem = "line one\nline two"
        let csv = PlayRecord.csv([record])
        let lines = csv.components(separatedBy: "\r\n")
        XCTAssertEqual(lines[0], PlayRecord.csvHeader.joined(separator: ","))
        XCTAssertTrue(lines[1].hasPrefix(#"a,clip,"/m/a ""quoted"", name.mp4",abab"#), lines[1])
        XCTAssertTrue(
            csv.contains(",2027-01-15T08:00:02.000Z,2027-01-15T08:00:04.000Z,2.000,yes,cut,60,master,4,"), csv)
        XCTAssertTrue(csv.hasSuffix("\"line one\nline two\"\r\n"), csv)
        XCTAssertTrue(record.interrupted)
    }

    func testInstants_parseFromISO8601_withOrWithoutFractions_andAnyOffset() {
        XCTAssertEqual(PlayRecord.unixMs(iso8601: "2027-01-15T08:00:00Z"), 1_800_000_000_000)
        XCTAssertEqual(PlayRecord.unixMs(iso8601: "2027-01-15T08:00:00.250Z"), 1_800_000_000_250)
        XCTAssertEqual(PlayRecord.unixMs(iso8601: "2027-01-15T09:00:00+01:00"), 1_800_000_000_000)
        XCTAssertNil(PlayRecord.unixMs(iso8601: "yesterday"))
        XCTAssertEqual(PlayRecord.utc(1_800_000_000_250), "2027-01-15T08:00:00.250Z")
    }

    func testASpan_isParsedOnce_withTheBoundsNamedAsTheCallerTakesThem() throws {
        let now: Int64 = 1_800_000_000_000
        let day = try PlayRecord.span(from: "24h", to: "now", nowUnixMs: now).get()
        XCTAssertEqual(day.from, now - 86_400_000)
        XCTAssertEqual(day.to, now)
        func sentence(_ from: String, _ to: String) -> String {
            guard
                case .failure(let error) = PlayRecord.span(
                    from: from, to: to, nowUnixMs: now, named: ("--from", "--to"))
            else { return "" }
            return error.description
        }
        XCTAssertEqual(
            sentence("yesterday", "now"),
            #"--from must be an ISO 8601 instant, now, or a time ago like 24h, got "yesterday""#)
        XCTAssertEqual(
            sentence("1h", "soon"), #"--to must be an ISO 8601 instant, now, or a time ago like 1h, got "soon""#)
        XCTAssertEqual(
            sentence("1h", "2h"), "--to (2027-01-15T06:00:00.000Z) must come after --from (2027-01-15T07:00:00.000Z)")
    }
}
