import Foundation
import LockstepTime
import WallProtocol
import XCTest

final class ControlMessagesTests: XCTestCase {
    func testFrameRecord_roundTripsThroughJSONToTheNanosecond() throws {
        let record = FrameRecord(
            sequence: 7, presentationTimestamp: MediaTime(value: 1001, timescale: 30000), runningTime: .zero,
            presentedAt: MediaTime(nanoseconds: 3_600_000_000_123), dueAt: MediaTime(nanoseconds: 3_600_000_000_100))
        let data = try JSONEncoder().encode(record)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        XCTAssertEqual(object["presentationTimestampNs"] as? Int, 33_366_667, "1001/30000 s to the nearest nanosecond")
        XCTAssertEqual(object["presentedAtNs"] as? Int, 3_600_000_000_123)
        let decoded = try JSONDecoder().decode(FrameRecord.self, from: data)
        XCTAssertEqual(decoded.presentationTimestamp, MediaTime(nanoseconds: 33_366_667))
        XCTAssertEqual(decoded.presentedAt, record.presentedAt)
    }

    /// docs/JSON.md: every time is an integer of nanoseconds under a key ending in Ns; an absent
    /// optional time is left out, a time that is not a number is null.
    func testStatus_timesArePlainNanosecondsUnderNsKeys() throws {
        let status = NodeStatus(
            id: "a", masterTime: MediaTime(nanoseconds: 5),
            clock: ClockReport(state: .locked, usable: true, server: "x", offset: MediaTime(value: -3, timescale: 2)),
            player: PlayerReport(
                status: "readyToPlay", media: nil, itemStatus: nil, timeControlStatus: "paused", waitingReason: nil,
                rate: 0, position: .indefinite, prerolled: false, framesPresented: 0, framesLate: 0, framesDropped: 0,
                renderThread: "normal", error: nil))
        let object = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(status)) as? [String: Any])
        XCTAssertEqual(object["masterTimeNs"] as? Int, 5)
        let clock = try XCTUnwrap(object["clock"] as? [String: Any])
        XCTAssertEqual(clock["offsetNs"] as? Int, -1_500_000_000)
        XCTAssertNil(clock["errorBoundNs"], "an absent bound is left out")
        let player = try XCTUnwrap(object["player"] as? [String: Any])
        XCTAssertTrue(player["positionNs"] is NSNull, "an indefinite position is null")
        XCTAssertEqual(
            try JSONDecoder().decode(NodeStatus.self, from: JSONEncoder().encode(status)).clock, status.clock)
    }

    func testMediaSource_perNodeTemplateNamesEachNodesFile() {
        XCTAssertEqual(MediaSource.perNode(template: "media/{id}.mp4").path(forNode: "left"), "media/left.mp4")
        XCTAssertEqual(MediaSource.shared(path: "a.mp4").path(forNode: "left"), "a.mp4")
    }

    func testPixelRect_normalizesAgainstTheCanvas() {
        let tile = PixelRect(x: 960, y: 540, width: 960, height: 540).normalized(
            in: CanvasSize(width: 1920, height: 1080))
        XCTAssertEqual(tile.x, 0.5)
        XCTAssertEqual(tile.y, 0.5)
        XCTAssertEqual(tile.width, 0.5)
        XCTAssertEqual(tile.height, 0.5)
    }

    func testANodeCarriesOutAVersion_onItOrNewer_settled_withoutAProblem_inStepWhenPlaying() {
        func report(
            _ version: UInt64, _ state: String, settled: Bool? = true, inStep: Bool? = true, problem: String? = nil
        )
            -> TimelineReport
        {
            var report = TimelineReport(
                version: version, state: state, entry: 0, pass: 0, itemTime: .zero, inStep: inStep, offset: nil,
                rejoins: 0, problem: problem)
            report.settled = settled
            return report
        }
        XCTAssertNil(report(4, "playing").lack(toCarryOut: 4))
        XCTAssertNil(report(5, "playing").lack(toCarryOut: 4), "a newer version carries the older out")
        XCTAssertNil(report(4, "paused", inStep: nil).lack(toCarryOut: 4), "in step matters only while playing")
        XCTAssertEqual(report(3, "playing").lack(toCarryOut: 4), "on version 3")
        XCTAssertEqual(report(4, "playing", settled: false).lack(toCarryOut: 4), "preparing playing")
        XCTAssertEqual(report(4, "playing", inStep: false).lack(toCarryOut: 4), "not in step yet")
        XCTAssertEqual(report(4, "playing", problem: "a.mp4: no such file").lack(toCarryOut: 4), "a.mp4: no such file")
        XCTAssertEqual(
            TimelineReport.lack(toCarryOut: 1, version: nil, state: nil, settled: nil, problem: nil, inStep: nil),
            "on version none")
    }
}
