import Foundation
import GroundTruth
import LockstepTime
import TestSupport
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

/// Proof of play against ground truth: a wall on a schedule (its loop opens at 09:00 Paris on the
/// master's real time, shifted to just before), a cue cut into it, one node killed with -9 and
/// started again; then `wallctl report plays --csv` is read as a site would read it, and every row is
/// checked against the frame codes its screen's sink presented: each play begins where its first
/// frame reached the sink, ends where the next began, and counts the frames the sink presented in it.
final class PlayReportWallTests: XCTestCase {
    private let ids = ["a", "b"]
    private let masterPort = 15681
    private let firstControlPort = 17791

    func testReportPlays_aScheduleACueAndAKill_theCSVAgreesWithGroundTruth() async throws {
        let wallctl = ChildProcess.product("wallctl")
        let wallnode = ChildProcess.product("wallnode")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lockstep-plays-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let clip = folder.appendingPathComponent("clip.mp4")
        try FileManager.default.copyItem(at: try TestMedia.frameCode(seconds: 20), to: clip)
        let receiver = try FrameCodeCollector(count: ids.count)
        defer { receiver.stop() }
        let wall = TestWall(
            name: "plays-test", clockPort: masterPort, media: clip.path, canvas: (320, 90),
            stateDirectory: folder.appendingPathComponent("state").path,
            extra: [
                "clock-lock-timeout: 20s", "autoplay: true",
                "schedule:",
                "  time-zone: Europe/Paris",
                "  outside: black",
                "  playlists:",
                "    loop: [{media: \(clip.path), out: 4s}]",
                "  day-parts:",
                "    - {playlist: loop, days: weekdays, from: \"09:00\", to: \"17:00\"}",
                "cues:",
                "  intro: {media: \(clip.path), in: 10s, out: 12s, then: return}",
            ],
            nodes: TestWall.Node.groundTruthRow(ids, firstControlPort: firstControlPort, ports: receiver.ports))
        let config = try wall.write(to: folder.appendingPathComponent("wall.yaml"))
        // Monday 09:00 in Paris, on the master's UTC, 8 s after it starts.
        let opening = try XCTUnwrap(instant("2026-11-30T08:00:00.000Z"))
        let lead = 8.0
        let shifted = try ShiftedRealtimeMaster(port: masterPort, reading: opening, after: lead)
        let master = shifted.process
        let startNode = { (index: Int) throws -> ChildProcess in
            try ChildProcess(
                wallnode,
                [
                    "run", "--config", config.path, "--id", self.ids[index], "--log-format", "text",
                    "--simulate-clock-offset", "\(index * 900)", "--simulate-clock-drift-ppm", "\(index * 80)",
                ])
        }
        var nodes = try ids.indices.map(startNode)
        defer { for process in nodes + [master] { process.signal(SIGTERM) } }
        let toMaster = shifted.toMaster
        let masterNow = shifted.now

        // The loop opens; 5.5 s into it (its second pass), the cue.
        try await Task.sleep(for: .seconds(lead + 5.5))
        let cue = try ChildProcess.run(wallctl, ["cue", "intro", "--config", config.path])
        XCTAssertEqual(cue.status, 0, cue.output + cue.errors)
        // After the cue's clip (2 s) returns to the loop: node b is killed and started again.
        try await Task.sleep(for: .seconds(4))
        let killedAt = masterNow()
        nodes[1].signal(SIGKILL)
        _ = nodes[1].finish()
        nodes[1] = try startNode(1)
        try await Task.sleep(for: .seconds(8))
        let report = try ChildProcess.run(
            wallctl,
            [
                "report", "plays", "--config", config.path, "--csv", "--from", "2026-11-30T07:00:00Z",
                "--to", "2026-11-30T09:00:00Z",
            ])
        let reportedAt = masterNow()
        XCTAssertEqual(report.status, 0, report.errors)
        let rows = try CSV.rows(report.output)
        let header = try XCTUnwrap(rows.first)
        let plays = rows.dropFirst().map { Dictionary(uniqueKeysWithValues: zip(header, $0)) }
        print("plays test: the report\n" + report.output)
        let seen = receiver.seen
        for (index, id) in ids.enumerated() {
            let frames = seen[index].map { (code: $0.code, at: $0.at + toMaster) }
            let mine = plays.filter { $0["node"] == id }
            let context =
                "node \(id): "
                + mine.map { "\($0["from_utc"]!)-\($0["to_utc"]!) \($0["ended"]!)" }.joined(separator: "; ")
            XCTAssertTrue(mine.allSatisfy { $0["clock"] == "master" && $0["kind"] == "clip" }, context)
            XCTAssertTrue(
                mine.allSatisfy { $0["sha256"]?.count == 64 || $0["ended"] == "node stopped" },
                "a hand-placed file's SHA-256, read as it first played: \(context)")
            // The opening: the loop's first pass, from its first frame at 09:00 to the next pass.
            let first = try XCTUnwrap(mine.first, context)
            XCTAssertEqual(first["playlist"], "loop", context)
            XCTAssertEqual(first["pass"], "0", context)
            XCTAssertEqual(first["ended"], "end", context)
            XCTAssertEqual(first["from_utc"], "2026-11-30T08:00:00.000Z", context)
            XCTAssertEqual(first["to_utc"], "2026-11-30T08:00:04.000Z", context)
            let firstFrame = try XCTUnwrap(frames.first { $0.code == 0 }, context)
            XCTAssertEqual(
                (firstFrame.at - opening).seconds, 0, accuracy: 0.004, "ground truth: the loop opened at 09:00")
            // The cue: its play begins where its first frame (code 300) reached the sink, and ends 2 s later.
            let cued = try XCTUnwrap(mine.first { $0["cue"] == "intro" }, context)
            let cueFrame = try XCTUnwrap(frames.first { $0.code == 300 }, "the cue on the glass: \(context)")
            let cueFrom = try XCTUnwrap(instant(cued["from_utc"]!))
            XCTAssertEqual(
                (cueFrame.at - cueFrom).seconds, 0, accuracy: 0.005, "the cue's play from its first frame: \(context)")
            XCTAssertEqual(cued["ended"], "end", context)
            XCTAssertEqual(cued["media_from_s"], "10.000", context)
            XCTAssertEqual(cued["media_to_s"], "12.000", context)
            // The pass it cut: interrupted there.
            let cut = try XCTUnwrap(
                mine.last { $0["to_utc"] == cued["from_utc"] }, "a play ends where the cue began: \(context)")
            XCTAssertEqual(cut["ended"], "cut", context)
            XCTAssertEqual(cut["interrupted"], "yes", context)
            XCTAssertEqual(cut["from_utc"], "2026-11-30T08:00:04.000Z", "the loop's second time round: \(context)")
            // Every ended play's frames: those ground truth saw at the sink inside it (a frame on
            // either edge may fall on either side).
            for play in mine where play["ended"] != "playing" {
                let from = try XCTUnwrap(instant(play["from_utc"]!))
                let to = try XCTUnwrap(instant(play["to_utc"]!))
                let inside = frames.filter { $0.at >= from - MediaTime(value: 2, timescale: 1000) && $0.at < to }.count
                XCTAssertEqual(Double(play["frames"]!)!, Double(inside), accuracy: 2, "frames of \(play): \(context)")
            }
            // Plays follow each other: none overlaps the next.
            for (earlier, later) in zip(mine, mine.dropFirst()) {
                XCTAssertLessThanOrEqual(earlier["to_utc"]!, later["from_utc"]!, context)
            }
            if id == "b" {
                // Killed with -9: the play on its screen is kept as "node stopped", never past the kill;
                // after its restart it plays on, none of its plays claiming the time it was down.
                let stopped = try XCTUnwrap(
                    mine.first { $0["ended"] == "node stopped" }, "the play it was killed in: \(context)")
                let stoppedTo = try XCTUnwrap(instant(stopped["to_utc"]!))
                XCTAssertLessThanOrEqual(stoppedTo, killedAt, context)
                let after = mine.filter { instant($0["from_utc"]!)! > stoppedTo }
                XCTAssertFalse(after.isEmpty, "it plays again after its restart: \(context)")
                XCTAssertTrue(after.allSatisfy { instant($0["from_utc"]!)! > killedAt }, context)
            }
            // The play on the screen when asked, to then.
            let last = try XCTUnwrap(mine.last, context)
            XCTAssertEqual(last["ended"], "playing", context)
            XCTAssertLessThanOrEqual(try XCTUnwrap(instant(last["to_utc"]!)), reportedAt, context)
        }

        // A bad bound is refused with a sentence, before any node is asked.
        let bad = try ChildProcess.run(wallctl, ["report", "plays", "--config", config.path, "--from", "yesterday"])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.errors.contains("--from must be an ISO 8601 instant"), bad.errors)
    }

    private func instant(_ text: String) -> MediaTime? {
        PlayRecordText.unixMs(text).map { MediaTime(nanoseconds: $0 * 1_000_000) }
    }
}

/// The report's instants, read back without the project's own code (a site's spreadsheet would).
private enum PlayRecordText {
    static func unixMs(_ text: String) -> Int64? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text).map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }
    }
}

/// RFC 4180, as a spreadsheet reads it: quoted fields with doubled quotes, CRLF between records.
private enum CSV {
    struct Malformed: Error {}

    static func rows(_ text: String) throws -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var field = ""
        var quoted = false
        var characters = Array(text)[...]
        while let character = characters.popFirst() {
            if quoted {
                if character == "\"" {
                    if characters.first == "\"" {
                        field.append("\"")
                        characters.removeFirst()
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(character)
                }
            } else if character == "\"" {
                guard field.isEmpty else { throw Malformed() }
                quoted = true
            } else if character == "," {
                row.append(field)
                field = ""
            } else if character == "\r\n" || character == "\n" {
                row.append(field)
                rows.append(row)
                row = []
                field = ""
            } else {
                field.append(character)
            }
        }
        guard !quoted else { throw Malformed() }
        if !field.isEmpty || !row.isEmpty { rows.append(row + [field]) }
        return rows
    }
}
