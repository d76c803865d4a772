import Foundation
import LockstepTime
import WallConsole
import WallProtocol
import XCTest

/// The drift view: each pair's worst skew per second from the frames the nodes report, and the
/// analyzer's verdict, kept across a node's restart until the new analysis has frames.
final class DriftWatchTests: XCTestCase {
    /// `count` frames from record `first`, frame `first + frameOffset` of the wall's timeline (a
    /// restarted node's records count from 1 again, its frames go on).
    private func reply(
        _ node: String, from first: UInt64, count: Int, offsetNs: Int64, frameOffset: UInt64 = 0
    ) -> FramesReply {
        let json = (0..<count).map { index -> String in
            let sequence = first + UInt64(index)
            let frame = Int64(sequence + frameOffset)
            let due = frame * 33_333_333 + 10_000_000_000
            return """
                {"sequence":\(sequence),"presentationTimestampNs":\(frame * 33_333_333),\
                "runningTimeNs":\(frame * 33_333_333),"presentedAtNs":\(due + offsetNs),"dueAtNs":\(due),\
                "wallTimeNs":\(due)}
                """
        }.joined(separator: ",")
        let text = #"{"node":"\#(node)","records":[\#(json)],"missed":0,"clockErrorBoundNs":20000}"#
        return try! JSONDecoder().decode(FramesReply.self, from: Data(text.utf8))
    }

    func testPairSkew_perSecond_andAVerdict_keptOverARestart() {
        var watch = DriftWatch(nodes: ["a", "b"])
        watch.start("a", after: 0)
        watch.start("b", after: 0)
        watch.ingest(reply("a", from: 1, count: 120, offsetNs: 0), now: 100)
        watch.ingest(reply("b", from: 1, count: 120, offsetNs: 150_000), now: 100)
        var view = watch.view()
        XCTAssertEqual(view.pairs, ["a–b"])
        XCTAssertEqual(view.points.count, 1)
        XCTAssertEqual(view.points[0].atUnixS, 100)
        XCTAssertEqual(view.points[0].skewUs[0] ?? 0, 150, accuracy: 0.001)
        XCTAssertGreaterThan(view.framesAligned, 0)
        XCTAssertNotNil(view.outcome)
        XCTAssertEqual(watch.after["b"], 120)

        // b restarts: its records count from 0 again; the verdict stays until new frames align.
        watch.start("b", after: 0)
        XCTAssertEqual(watch.after["b"], 0)
        watch.ingest(reply("a", from: 121, count: 1, offsetNs: 0), now: 101)
        view = watch.view()
        XCTAssertNotNil(view.verdict, "the last verdict is kept over the restart")

        // Its records from 1 again, its frames on the wall's timeline: the analysis goes on with them,
        // a FAIL it earned before kept in sight.
        let before = watch.view().framesAligned
        watch.ingest(reply("a", from: 122, count: 60, offsetNs: 0), now: 102)
        watch.ingest(reply("b", from: 1, count: 60, offsetNs: 5_000_000, frameOffset: 121), now: 102)
        view = watch.view()
        XCTAssertGreaterThanOrEqual(view.framesAligned, before + 50, "b's frames since its restart aligned")
        XCTAssertEqual(view.outcome, "FAIL", "5 ms apart since the restart")

        // The plot reaches back `history` seconds only.
        watch.ingest(reply("a", from: 182, count: 1, offsetNs: 0), now: 100 + 301)
        XCTAssertFalse(watch.view().points.contains { $0.atUnixS == 100 })
    }

    func testAVerdict_waitsForThreeSecondsOfFrames() {
        var watch = DriftWatch(nodes: ["a", "b"])
        watch.ingest(reply("a", from: 1, count: 10, offsetNs: 0), now: 100)
        watch.ingest(reply("b", from: 1, count: 10, offsetNs: 150_000), now: 100)
        var view = watch.view()
        XCTAssertNil(view.verdict, "ten frames say nothing of a wall")
        XCTAssertGreaterThan(view.framesSoFar, 0)
        XCTAssertEqual(view.framesNeeded, DriftWatch.framesForAVerdict)
        watch.ingest(reply("a", from: 11, count: 110, offsetNs: 0), now: 104)
        watch.ingest(reply("b", from: 11, count: 110, offsetNs: 150_000), now: 104)
        view = watch.view()
        XCTAssertNotNil(view.verdict)
        XCTAssertGreaterThanOrEqual(view.framesAligned, DriftWatch.framesForAVerdict)
    }

    func testThumbnail_isA24BitBMP_rowsTopFirst() {
        let rgb = Data([255, 0, 0, 0, 255, 0, 0, 0, 255])
        let bmp = Thumbnail.bmp(rgb: rgb, width: 3, height: 1)
        XCTAssertEqual(Array(bmp.prefix(2)), Array("BM".utf8))
        XCTAssertEqual(bmp.count, 54 + 12, "one row of 9 bytes padded to 12")
        XCTAssertEqual(Array(bmp[54..<63]), [0, 0, 255, 0, 255, 0, 255, 0, 0], "blue, green, red")
        let height = bmp[22..<26].enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * $1.offset) }
        XCTAssertEqual(Int32(bitPattern: height), -1, "rows top first")
    }
}
